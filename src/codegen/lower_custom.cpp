// Custom update bodies. Reductions are plain assignments in the user's code: the reduction
// target is a fresh local in every iteration, and the backend folds it into an accumulator (sum
// or max) that is written once, without the reduced dimension.
#include "codegen/arrays.hpp"
#include "codegen/connectivity.hpp"
#include "codegen/layouts/buffers.hpp"
#include "codegen/lowerer.hpp"
#include "model/analysis.hpp"
#include "model/contexts.hpp"
#include "model/var_refs.hpp"

#include <algorithm>
#include <optional>

namespace spikeforge::codegen {

namespace {

using A = CustomUpdateVarAccess;

struct Slot {
    std::string name, type;
    A access;
    refs::Resolved target;
    std::string array;     // placeholder of the array pointer
    std::string transpose; // placeholder of the transpose target's array, or ""
    bool transposeBatched = false;
    std::string transposeGroup; // the synapse group transposed into
    // Broadcast into a variable with delay slots: placeholder of its history's array (every
    // batch element's every slot is written too, as GeNN writes every delay slot), or "".
    std::string history;
    size_t historyCopies = 0; // batch x slots
};

// The history of the variable a reference names, where it keeps one (the neuron group's or a
// synapse group's presynaptic or postsynaptic variable read with a delay): its delayed values.
std::optional<HistoryOf> historyOfRef(const Model& m, const VarReference& ref) {
    std::optional<HistoryOf> h;
    for (const auto& ng : m.neuronGroups())
        if (ng->name() == ref.group) h = historyOf(*ng, m.precision());
    for (const auto& sg : m.synapseGroups()) {
        if (sg->name() != ref.group) continue;
        for (const bool pre : {true, false}) {
            const auto& vars = pre ? sg->wu().model.preVars : sg->wu().model.postVars;
            if (std::any_of(vars.begin(), vars.end(),
                            [&](const VarDecl& v) { return v.name == ref.var; }))
                h = wuHistoryOf(*sg, pre, m.precision());
        }
    }
    if (h && !h->types.count(ref.var)) h.reset();
    return h;
}

// The element of a slot's target for batch element `batch`: [batch][slot][element], the
// dimensions it has.
std::string index(const refs::Resolved& t, const std::string& batch) {
    if (t.slots > 1) {
        const std::string row =
            (t.batchDim ? "(size_t)" + batch + " * " + std::to_string(t.slots) + "u + "
                        : std::string()) +
            t.slot;
        return t.elementDim ? "(" + row + ") * sfN + id" : row;
    }
    if (t.elementDim && t.batchDim) return "(size_t)" + batch + " * sfN + id";
    if (t.elementDim) return "id";
    if (t.batchDim) return batch;
    return "0";
}

std::vector<Slot> slots(Lowerer& e, const CustomUpdate& cu, const std::string& prefix) {
    std::vector<Slot> out;
    const Precision p = e.model.precision();
    for (const auto& v : cu.model().vars)
        out.push_back({v.name, resolveType(v.type, p), v.access,
                       refs::ownVar(cu, v, e.model.batchSize()), "", "", false, ""});
    for (const auto& r : cu.model().varRefs)
        out.push_back({r.name, resolveType(r.type, p), r.access,
                       refs::resolve(e.model, cu.varRefs().at(r.name), cu.name(), r.name), "", "",
                       false, ""});
    for (auto& s : out) {
        // A reduction starts from 0 and stores its result; other slots are loaded, and stored
        // back when ReadWrite.
        const Use use = isReduction(s.access) || s.access == A::Broadcast ? Use::Write
                        : s.access == A::ReadWrite                        ? Use::ReadWrite
                                                                          : Use::Read;
        s.array = e.env.array(prefix + "r_" + s.name, s.type, s.target.array, use);
        auto ref = cu.varRefs().find(s.name);
        if (ref != cu.varRefs().end() && !ref->second.transposeGroup.empty()) {
            const auto t = refs::resolve(
                e.model, {ref->second.transposeGroup, ref->second.transposeVar}, cu.name(), s.name);
            s.transpose = e.env.array(prefix + "t_" + s.name, s.type, t.array, Use::Write);
            s.transposeBatched = t.batchDim && cu.isBatched();
            s.transposeGroup = ref->second.transposeGroup;
        }
        if (s.access != A::Broadcast || ref == cu.varRefs().end()) continue;
        if (const auto h = historyOfRef(e.model, ref->second)) {
            s.history = e.env.array(prefix + "h_" + s.name, s.type,
                                    h->owner + "." + VariableHistory::arrayVar(ref->second.var),
                                    Use::Write);
            s.historyCopies = size_t(e.model.batchSize()) * h->slots;
        }
    }
    return out;
}

// A Broadcast slot is write-only: its name stands for a local whose every use (an assignment
// target) also marks it assigned, and an assigned value is stored to every copy of the element,
// [batch][slot] flattened (the update is not batched: `batch` is 0).
std::string broadcastStore(Lowerer& e, const Slot& s) {
    const size_t copies =
        (s.target.batchDim ? e.model.batchSize() : 1u) * static_cast<size_t>(s.target.slots);
    std::string c = "for (uint32_t sfC = 0u; sfC < " + std::to_string(copies) + "u; sfC++) " +
                    s.array + "[(size_t)sfC * sfN + id] = l_" + s.name + ";\n";
    if (!s.history.empty()) // [batch][slot][element], as the variable's own copies
        c += "for (uint32_t sfC = 0u; sfC < " + std::to_string(s.historyCopies) + "u; sfC++) " +
             s.history + "[(size_t)sfC * sfN + id] = l_" + s.name + ";\n";
    return "if (sfW_" + s.name + ") {\n" + c + "}\n";
}

// Loads, the user's code and the stores of one element in one batch element.
std::string elementBody(Lowerer& e, const CustomUpdate& cu, const std::vector<Slot>& ss) {
    std::string c;
    for (const auto& s : ss) {
        e.subs[s.name] = "l_" + s.name;
        if (s.access == A::Broadcast) {
            c += s.type + " l_" + s.name + " = 0; uint32_t sfW_" + s.name + " = 0u;\n";
            e.subs[s.name] = "(*(sfW_" + s.name + " = 1u, &l_" + s.name + "))";
        } else if (isReduction(s.access))
            c += s.type + " l_" + s.name + " = 0;\n";
        else
            c +=
                s.type + " l_" + s.name + " = " + s.array + "[" + index(s.target, "batch") + "];\n";
    }
    c += e.render(cu.name(), "updateCode");
    for (const auto& s : ss) {
        if (s.access == A::ReadWrite)
            c += s.array + "[" + index(s.target, "batch") + "] = l_" + s.name + ";\n";
        if (s.access == A::Broadcast) c += broadcastStore(e, s);
    }
    return c;
}

// The transposed stores of one update: structure, so each backend prints its own (the SIMT
// kernels go through local-memory tiles).
std::vector<Transpose> transposes(Lowerer& e, const CustomUpdate& cu, const std::vector<Slot>& ss) {
    std::vector<Transpose> out;
    for (const auto& s : ss) {
        if (s.transpose.empty()) continue;
        const SynapseGroup& sg = *cu.synapseGroup();
        const SynapseGroup& target = e.model.synapseGroup(s.transposeGroup);
        const std::string mirror = connectivityOf(sg)->transposedElementOf(e.env, target);
        if (mirror.empty())
            throw InternalError("custom update '" + cu.name() + "' transposes synapse group '" +
                                sg.name() + "', whose layout has no transpose");
        out.push_back({"l_" + s.name, s.type,
                       s.transpose + "[" + (s.transposeBatched ? "(size_t)batch * sfN + " : "") +
                           mirror + "]",
                       e.env.number("numPre", "uint32_t", sg.source().size()),
                       e.env.number("numPost", "uint32_t", sg.target().size())});
    }
    return out;
}

std::vector<Reduction> reductions(const std::vector<Slot>& ss) {
    std::vector<Reduction> out;
    for (const auto& s : ss) {
        if (!isReduction(s.access)) continue;
        const bool sum = s.access == A::ReduceBatchSum || s.access == A::ReduceNeuronSum;
        // Batch reductions write per element (no batch dimension), neuron reductions per batch.
        out.push_back({s.name, "l_" + s.name, s.type, sum ? ReduceOp::Sum : ReduceOp::Max, s.array,
                       index(s.target, isBatchReduction(s.access) ? "0u" : "batch")});
    }
    return out;
}

// One custom update's part of a body: reads of its run counter before the loop, its element
// body and the counter's advance after.
struct Block {
    std::string prologue, body, epilogue;
    std::vector<Slot> slots;
};

Block lowerBlock(Lowerer& e, const CustomUpdate& cu, const std::string& prefix) {
    const Model& m = e.model;
    const auto& scanned = analysis::of(m, cu.name(), "updateCode");
    e.subs.clear();
    e.bindParams(scanned, contexts::evaluateParams(cu.model(), cu.params(), m.dt()),
                 cu.dynamicParams(), cu.name(), prefix + "p_");
    e.bindEGPs(scanned, cu.model(), cu.name(), prefix + "e_");
    for (const auto& egp : cu.model().egpRefs)
        if (scanned.referencedNames.count(egp.name)) {
            e.subs[egp.name] =
                e.env.array(prefix + "er_" + egp.name, resolveType(egp.type, m.precision()),
                            refs::resolveEGP(m, cu, egp), useOf(scanned, egp.name));
            e.subs["#size:" + egp.name] =
                e.env.arraySize(prefix + "er_" + egp.name + "_n", refs::resolveEGP(m, cu, egp));
        }
    e.subs["dt"] = e.lit(m.dt());
    // The time of the step the update runs after [ms], and the sizes the update spans (fields,
    // so updates of differently sized groups still merge).
    e.subs["t"] = "((" + e.scalar() + ")a->t)";
    e.subs["num_batch"] = std::to_string(m.batchSize()) + "u";
    if (const SynapseGroup* sg = cu.synapseGroup(); sg && cu.isWUShaped()) {
        e.subs["num_pre"] =
            e.env.number("cuNumPre", "uint32_t", static_cast<double>(sg->source().size()));
        e.subs["num_post"] =
            e.env.number("cuNumPost", "uint32_t", static_cast<double>(sg->target().size()));
    } else {
        e.subs["num_neurons"] =
            e.env.number("cuNumNeurons", "uint32_t", static_cast<double>(cu.numElements()));
    }
    Block b;
    b.slots = slots(e, cu, prefix);
    // The run counter lives on the device: read once before the loop, advanced once after it.
    if (scanned.referencedNames.count("updateCount")) {
        const std::string counter = e.env.array(prefix + "updateCount", "uint32_t",
                                                cu.name() + ".updateCount", Use::ReadWrite);
        const std::string local = "sfUpdateCount" + prefix;
        b.prologue = "const uint32_t " + local + " = " + counter + "[0];\n";
        e.subs["updateCount"] = local;
        b.epilogue = counter + "[0] = " + local + " + 1u;\n";
    }
    b.body = elementBody(e, cu, b.slots);
    return b;
}

CustomUpdateKind kindOf(const std::vector<Slot>& ss) {
    if (std::any_of(ss.begin(), ss.end(),
                    [](const Slot& s) { return isNeuronReduction(s.access); }))
        return CustomUpdateKind::NeuronReduction;
    if (std::any_of(ss.begin(), ss.end(), [](const Slot& s) { return isBatchReduction(s.access); }))
        return CustomUpdateKind::BatchReduction;
    return CustomUpdateKind::Elementwise;
}

} // namespace

bool fusable(const CustomUpdate& a, const CustomUpdate& b) {
    auto elementWise = [](const CustomUpdate& cu) {
        for (const auto& v : cu.model().vars)
            if (isReduction(v.access)) return false;
        for (const auto& r : cu.model().varRefs)
            if (isReduction(r.access)) return false;
        for (const auto& [name, ref] : cu.varRefs())
            if (!ref.transposeGroup.empty()) return false;
        return true;
    };
    return a.updateGroup() == b.updateGroup() && a.isWUShaped() == b.isWUShaped() &&
           a.synapseGroup() == b.synapseGroup() && a.numElements() == b.numElements() &&
           a.isBatched() == b.isBatched() && elementWise(a) && elementWise(b);
}

LoweredGroup lowerCustomUpdate(const Model& m, const std::vector<const CustomUpdate*>& cus) {
    Lowerer e(m);
    const CustomUpdate& first = *cus.front();
    CustomUpdateBody b;
    std::string name;
    std::vector<Block> blocks;
    for (size_t k = 0; k < cus.size(); k++) {
        // Appended, not `"c" + std::string`: that trips a GCC 12 -Wrestrict false positive.
        std::string prefix;
        if (cus.size() > 1) prefix.append("c").append(std::to_string(k)).append("_");
        blocks.push_back(lowerBlock(e, *cus[k], prefix));
        if (k) name += '+';
        name += cus[k]->name();
    }
    b.numElements = e.env.number("numElements", "uint64_t", double(first.numElements()));
    b.batch = first.isBatched() ? m.batchSize() : 1u;
    for (const auto& blk : blocks) {
        b.prologue += blk.prologue;
        // Fused updates run in their own scopes, so their locals never clash; reductions occur
        // only in unfused updates, whose locals the folds read after the body.
        b.perElement += cus.size() > 1 ? "{\n" + blk.body + "}\n" : blk.body;
        b.epilogue += blk.epilogue;
    }
    if (first.isWUShaped()) b.decode = connectivityOf(*first.synapseGroup())->decode(e.env);
    b.kind = kindOf(blocks.front().slots);
    b.reductions = reductions(blocks.front().slots);
    // Transposes occur only in unfused updates (fusable), whose locals the stores read.
    b.transposes = transposes(e, first, blocks.front().slots);
    if (!b.transposes.empty())
        b.elementId = connectivityOf(*first.synapseGroup())->elementOf(e.env);
    return e.finish(name, std::move(b), first.numElements(),
                    first.isWUShaped() ? synapseExtent(*first.synapseGroup()) : SynapseExtent{});
}

LoweredGroup lowerCustomUpdateInit(const Model& m, const CustomUpdate& cu) {
    Lowerer e(m);
    InitBody b;
    // What the initialisers of variables with elements name beyond id and batch (contexts.cpp):
    // the neurons' count, or the synapse group's sizes and each element's (id_pre, id_post),
    // decoded from the rows the group's own initialisation built.
    const SynapseGroup* sg = cu.isWUShaped() ? cu.synapseGroup() : nullptr;
    std::string pairs;
    if (sg) {
        b.setup = sizesSetup(e, *sg);
        e.initNames = {{"num_pre", "sfNpre"}, {"num_post", "sfNpost"}};
        pairs = connectivityOf(*sg)->decode(e.env);
    } else {
        e.initNames = {{"num_neurons", e.env.number("numNeurons", "uint32_t", cu.numElements())}};
    }
    for (const auto& v : cu.model().vars) {
        const auto r = refs::ownVar(cu, v, m.batchSize());
        const VarInit& init = cu.varInits().at(v.name);
        bool namesPairs = false;
        if (init.hasSnippet() && r.elementDim && sg) {
            const auto& named = analysis::of(m, cu.name(), "init." + v.name).referencedNames;
            namesPairs = named.count("id_pre") || named.count("id_post");
        }
        b.readsEarlierGroups = b.readsEarlierGroups || namesPairs;
        e.initPairDecode = r.elementDim ? pairs : "";
        b.vars.push_back(e.varInit(cu.name(), {v.name, v.type, VarAccess::ReadWrite}, init,
                                   e.env.number("n_" + v.name, "uint64_t", double(r.elements)),
                                   r.batchDim));
    }
    e.initPairDecode.clear();
    return e.finish(cu.name(), std::move(b), cu.numElements(),
                    sg ? synapseExtent(*sg) : SynapseExtent{});
}

} // namespace spikeforge::codegen
