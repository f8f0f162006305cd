// Custom update kernels for the CPU backend. Reductions are plain assignments in the user's code:
// the reduction target is a fresh local in every iteration, and the generated loop folds it into
// an accumulator (sum or max) that is written once, without the reduced dimension.
#include "backends/cpu/cpu_emit.hpp"
#include "codegen/arrays.hpp"
#include "model/var_refs.hpp"

#include <algorithm>

namespace spikeforge::cpu {

namespace {

using A = CustomUpdateVarAccess;

struct Slot {
    std::string name, type;
    A access;
    refs::Resolved target;
    std::string array;     // placeholder of the array pointer
    std::string transpose; // placeholder of the transpose target's array, or ""
    bool transposeBatched = false;
};

std::string index(const refs::Resolved& t, const std::string& batch) {
    if (t.elementDim && t.batchDim) return "(size_t)" + batch + " * sfN + id";
    if (t.elementDim) return "id";
    if (t.batchDim) return batch;
    return "0";
}

bool isFloating(const std::string& ctype) {
    return ctype == "float" || ctype == "double";
}

std::vector<Slot> slots(Emitter& e, const CustomUpdate& cu, const std::string& prefix) {
    std::vector<Slot> out;
    const Precision p = e.model.precision();
    for (const auto& v : cu.model().vars)
        out.push_back({v.name, codegen::resolveType(v.type, p), v.access,
                       refs::ownVar(cu, v, e.model.batchSize()), "", "", false});
    for (const auto& r : cu.model().varRefs)
        out.push_back({r.name, codegen::resolveType(r.type, p), r.access,
                       refs::resolve(e.model, cu.varRefs().at(r.name), cu.name(), r.name), "", "",
                       false});
    for (auto& s : out) {
        s.array = e.env.array(prefix + "r_" + s.name, s.type, s.target.array);
        auto ref = cu.varRefs().find(s.name);
        if (ref != cu.varRefs().end() && !ref->second.transposeGroup.empty()) {
            const auto t = refs::resolve(
                e.model, {ref->second.transposeGroup, ref->second.transposeVar}, cu.name(), s.name);
            s.transpose = e.env.array(prefix + "t_" + s.name, s.type, t.array);
            s.transposeBatched = t.batchDim && cu.isBatched();
        }
        if (isReduction(s.access) && !isFloating(s.type))
            throw ModelError("custom update '" + cu.name() + "': reduction target '" + s.name +
                             "' must be floating point, not " + s.type);
    }
    return out;
}

// Batch reductions accumulate per element of a tile (kTile elements at a time); neuron
// reductions into one value per batch element.
constexpr unsigned kTile = 256;

std::string accumulator(const Slot& s) {
    return isBatchReduction(s.access) ? "sfAcc_" + s.name + "[id - sfTile]" : "sfAcc_" + s.name;
}

// Loads, the user's code and the stores of one element in one batch element.
std::string elementBody(Emitter& e, const CustomUpdate& cu, const std::vector<Slot>& ss) {
    std::string c;
    for (const auto& s : ss) {
        e.subs[s.name] = "l_" + s.name;
        if (isReduction(s.access))
            c += s.type + " l_" + s.name + " = 0;\n";
        else
            c +=
                s.type + " l_" + s.name + " = " + s.array + "[" + index(s.target, "batch") + "];\n";
    }
    c += e.render(cu.model().updateCode, contexts::customUpdateContext(e.model, cu));
    for (const auto& s : ss) {
        if (s.access == A::ReadWrite)
            c += s.array + "[" + index(s.target, "batch") + "] = l_" + s.name + ";\n";
        if (!s.transpose.empty()) // the transposed group is numPost x numPre
            c += s.transpose + "[" + (s.transposeBatched ? "(size_t)batch * sfN + " : "") +
                 "(size_t)id_post * " +
                 e.env.number("numPre", "uint32_t", cu.synapseGroup()->source().size()) +
                 " + id_pre] = l_" + s.name + ";\n";
        if (isReduction(s.access)) {
            const bool sum = s.access == A::ReduceBatchSum || s.access == A::ReduceNeuronSum;
            const std::string acc = accumulator(s);
            c +=
                sum ? acc + " += l_" + s.name + ";\n"
                    : acc + " = l_" + s.name + " > " + acc + " ? l_" + s.name + " : " + acc + ";\n";
        }
    }
    return c;
}

std::string accumulators(const std::vector<Slot>& ss, bool (*which)(A)) {
    std::string c;
    for (const auto& s : ss)
        if (which(s.access)) {
            const bool sum = s.access == A::ReduceBatchSum || s.access == A::ReduceNeuronSum;
            const std::string init = sum ? "0" : "-INFINITY";
            if (isBatchReduction(s.access))
                c += s.type + " sfAcc_" + s.name + "[" + std::to_string(kTile) +
                     "];\nfor (unsigned k = 0; k < " + std::to_string(kTile) + "; k++) sfAcc_" +
                     s.name + "[k] = " + init + ";\n";
            else
                c += s.type + " sfAcc_" + s.name + " = " + init + ";\n";
        }
    return c;
}

std::string writeAccumulators(const std::vector<Slot>& ss, bool (*which)(A),
                              const std::string& batch) {
    std::string c;
    for (const auto& s : ss)
        if (which(s.access))
            c += s.array + "[" + index(s.target, batch) + "] = " + accumulator(s) + ";\n";
    return c;
}

// For WU-shaped updates: id_pre/id_post of element `id`, skipping padding of sparse rows.
std::string synapseDecode(Emitter& e, const SynapseGroup& sg) {
    const std::string npost = e.env.number("numPost", "uint32_t", sg.target().size());
    if (sg.matrixType() == MatrixType::Dense)
        return "const uint32_t id_pre = (uint32_t)(id / " + npost +
               "); (void)id_pre;\nconst uint32_t id_post = (uint32_t)(id % " + npost +
               "); (void)id_post;\n";
    const std::string stride = e.env.number("rowStride", "uint32_t", sg.maxRowLength());
    const std::string it = codegen::indexType(sg.target().size());
    return "if (id % " + stride +
           " >= " + e.env.array("rowLength", "uint32_t", sg.name() + ".rowLength") + "[id / " +
           stride + "]) continue;\nconst uint32_t id_pre = (uint32_t)(id / " + stride +
           "); (void)id_pre;\nconst uint32_t id_post = " +
           e.env.array("ind", it, sg.name() + ".ind") + "[id]; (void)id_post;\n";
}

} // namespace

namespace {

// One custom update's part of a kernel: reads of its run counter before the loop, its element
// body (in its own scope, so fused updates' locals never clash) and the counter's advance after.
struct Block {
    std::string prologue, body, epilogue;
    std::vector<Slot> slots;
};

Block emitBlock(Emitter& e, const CustomUpdate& cu, const std::string& prefix) {
    const Model& m = e.model;
    const auto ctx = contexts::customUpdateContext(m, cu);
    const auto scanned = snippet::scan(cu.model().updateCode, ctx);
    e.subs.clear();
    e.bindParams(scanned, cu.model(), contexts::evaluateParams(cu.model(), cu.params(), m.dt()),
                 cu.dynamicParams(), cu.name(), prefix + "p_");
    e.bindEGPs(scanned, cu.model(), cu.name(), prefix + "e_");
    for (const auto& egp : cu.model().egpRefs)
        if (scanned.referencedNames.count(egp.name)) {
            e.subs[egp.name] = e.env.array(prefix + "er_" + egp.name,
                                           codegen::resolveType(egp.type, m.precision()),
                                           refs::resolveEGP(m, cu, egp));
            e.subs["#size:" + egp.name] =
                e.env.arraySize(prefix + "er_" + egp.name + "_n", refs::resolveEGP(m, cu, egp));
        }
    e.subs["dt"] = e.lit(m.dt());
    Block b;
    b.slots = slots(e, cu, prefix);
    // The run counter lives on the device: read once before the loop, advanced once after it.
    if (scanned.referencedNames.count("updateCount")) {
        const std::string counter =
            e.env.array(prefix + "updateCount", "uint32_t", cu.name() + ".updateCount");
        const std::string local = "sfUpdateCount" + prefix;
        b.prologue = "const uint32_t " + local + " = " + counter + "[0];\n";
        e.subs["updateCount"] = local;
        b.epilogue = counter + "[0] = " + local + " + 1u;\n";
    }
    b.body = "{\n" + elementBody(e, cu, b.slots) + "}\n";
    return b;
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

codegen::EmittedGroup emitCustomUpdate(const Model& m,
                                       const std::vector<const CustomUpdate*>& cus) {
    Emitter e{m, {}, {}};
    const CustomUpdate& first = *cus.front();
    std::vector<Block> blocks;
    std::string name;
    for (size_t k = 0; k < cus.size(); k++) {
        // Appended, not `"c" + std::string`: that trips a GCC 12 -Wrestrict false positive.
        std::string prefix;
        if (cus.size() > 1) prefix.append("c").append(std::to_string(k)).append("_");
        blocks.push_back(emitBlock(e, *cus[k], prefix));
        if (k) name += '+';
        name += cus[k]->name();
    }
    const std::string B = first.isBatched() ? "SF_BATCH" : "1u";
    std::string c = "const size_t sfN = " +
                    e.env.number("numElements", "uint64_t", double(first.numElements())) + ";\n";
    std::string bodies, epilogues;
    for (const auto& b : blocks) {
        c += b.prologue;
        bodies += b.body;
        epilogues += b.epilogue;
    }
    const std::string decode = first.isWUShaped() ? synapseDecode(e, *first.synapseGroup()) : "";
    const auto& ss = blocks.front().slots; // reductions occur only in unfused updates
    const bool neuronReduction = std::any_of(
        ss.begin(), ss.end(), [](const Slot& s) { return isNeuronReduction(s.access); });
    if (neuronReduction) {
        // One accumulator per batch element over all elements.
        c += "#pragma omp parallel for schedule(static) num_threads(a->threads) if (a->threads > "
             "1u && " +
             B + " > 1u && sfN * " + B +
             " >= 32768u)\n"
             "for (uint32_t batch = 0; batch < " +
             B + "; batch++) {\n" + accumulators(ss, isNeuronReduction) +
             "for (size_t id = 0; id < sfN; id++) {\n" + bodies + "}\n" +
             writeAccumulators(ss, isNeuronReduction, "batch") + "}\n//SF_END_PARALLEL\n";
    } else {
        // Tiles of elements in parallel; within a tile the batch is the outer loop, so every
        // batch row is read contiguously (B strided streams would defeat the prefetchers once
        // the batch is large) while batch reductions stay in a small per-tile array.
        const std::string tile = std::to_string(kTile);
        const std::string batchRed = accumulators(ss, isBatchReduction);
        c += "#pragma omp parallel for schedule(static) num_threads(a->threads) if (a->threads > "
             "1u && sfN * " +
             B +
             " >= 32768u)\n"
             "for (size_t sfTile = 0; sfTile < sfN; sfTile += " +
             tile +
             ") {\n"
             "const size_t sfEnd = sfTile + " +
             tile + " < sfN ? sfTile + " + tile + " : sfN;\n" + batchRed +
             "for (uint32_t batch = 0; batch < " + B +
             "; batch++) {\n"
             "for (size_t id = sfTile; id < sfEnd; id++) {\n" +
             decode + bodies + "}\n}\n";
        if (!batchRed.empty())
            c += "for (size_t id = sfTile; id < sfEnd; id++) {\n" + decode +
                 writeAccumulators(ss, isBatchReduction, "0u") + "}\n";
        c += "}\n//SF_END_PARALLEL\n";
    }
    c += epilogues;
    return {name, c, std::move(e.env)};
}

codegen::EmittedGroup emitCustomUpdateInit(const Model& m, const CustomUpdate& cu) {
    Emitter e{m, {}, {}};
    std::string c;
    for (const auto& v : cu.model().vars) {
        const auto r = refs::ownVar(cu, v, m.batchSize());
        c += emitVarInit(e, cu.name(), {v.name, v.type, VarAccess::ReadWrite},
                         cu.varInits().at(v.name),
                         e.env.number("n_" + v.name, "uint64_t", double(r.elements)), r.batchDim);
    }
    if (c.empty()) c = "(void)seed;\n";
    return {cu.name(), c, std::move(e.env)};
}

} // namespace spikeforge::cpu
