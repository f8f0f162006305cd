// Custom connectivity updates (structural plasticity): the row code of one update over every row
// of its Sparse group, editing the rows in place, then its column code over every column. A row
// is walked once by for_each_synapse; the synapses it keeps slide down over the removed ones
// (keeping their order), each with every per-synapse value it owns (all batch copies of the
// group's variables and of the per-synapse variables of the custom updates over the group);
// add_synapse then appends into the row's padding. Columns run at once and share rows, so the
// column code only marks what it removes and appends its adds with an atomic slot; a pass over
// the rows then drops the marked synapses and orders each row's added ones by target (the same
// result whatever order the adds ran in). The layout gives the row's storage and rebuilds its
// derived index after each pass.
#include "codegen/arrays.hpp"
#include "codegen/connectivity.hpp"
#include "codegen/lowerer.hpp"
#include "model/analysis.hpp"
#include "model/contexts.hpp"
#include "model/var_refs.hpp"

namespace spikeforge::codegen {

namespace {

// Macros the row code's function calls print as, defined around it (as the connectivity
// initialiser's addSynapse is).
constexpr const char* kAddMacro = "SF_CC_ADD_SYNAPSE";
constexpr const char* kRemoveMacro = "SF_CC_REMOVE_SYNAPSE";

// A per-synapse array that moves with its synapses: `copies` blocks of `stride` elements.
struct MovedArray {
    std::string array; // pointer expression
    std::string name;  // the array's plan name ("<group>.<var>")
    std::string ctype;
    unsigned copies = 1;
};

// Every per-synapse array of the group: its variables, those of the custom updates over it and
// the own variables of the connectivity updates over it.
std::vector<MovedArray> movedArrays(Lowerer& e, const SynapseGroup& sg) {
    const Model& m = e.model;
    const Precision p = m.precision();
    std::vector<MovedArray> out;
    for (const auto& v : sg.wu().model.vars) {
        const std::string name = sg.name() + "." + v.name;
        const std::string ctype = resolveType(v.type, p);
        out.push_back({e.env.array("sv_" + v.name, ctype, name, Use::ReadWrite), name, ctype,
                       hasBatchDim(v.access) ? m.batchSize() : 1u});
    }
    for (size_t k = 0; k < m.customUpdates().size(); k++) {
        const CustomUpdate& cu = *m.customUpdates()[k];
        if (!cu.isWUShaped() || cu.synapseGroup() != &sg) continue;
        for (const auto& v : cu.model().vars) {
            const auto r = refs::ownVar(cu, v, m.batchSize());
            if (!r.elementDim) continue;
            const std::string ctype = resolveType(v.type, p);
            out.push_back({e.env.array("cu" + std::to_string(k) + "_" + v.name, ctype, r.array,
                                       Use::ReadWrite),
                           r.array, ctype, r.batchDim ? m.batchSize() : 1u});
        }
    }
    for (size_t k = 0; k < m.customConnectivityUpdates().size(); k++) {
        const CustomConnectivityUpdate& cc = *m.customConnectivityUpdates()[k];
        if (cc.synapseGroup() != &sg) continue;
        for (const auto& v : cc.model().vars) {
            const std::string name = cc.name() + "." + v.name, ctype = resolveType(v.type, p);
            out.push_back(
                {e.env.array("cc" + std::to_string(k) + "_" + v.name, ctype, name, Use::ReadWrite),
                 name, ctype, 1u});
        }
    }
    return out;
}

// One line copying slot `from` of the row to slot `to`, every array and batch copy (a swap of
// the two with `swap`).
std::string moveSlot(const std::vector<MovedArray>& moved, const std::string& nSyn,
                     const std::string& from, const std::string& to, bool swap = false) {
    auto one = [&](const std::string& a, const std::string& ctype, const std::string& x,
                   const std::string& y) {
        return swap ? "{ const " + ctype + " sfTmp = " + a + "[" + y + "]; " + a + "[" + y +
                          "] = " + a + "[" + x + "]; " + a + "[" + x + "] = sfTmp; } "
                    : a + "[" + y + "] = " + a + "[" + x + "]; ";
    };
    std::string s = one("sfTargets", "uint32_t", from, to);
    for (const auto& a : moved) {
        const std::string base = "(size_t)sfC * " + nSyn + " + sfRow0 + ";
        s += "for (uint32_t sfC = 0u; sfC < " + std::to_string(a.copies) + "u; sfC++) " +
             one(a.array, a.ctype, base + from, base + to);
    }
    return s;
}

// The arrays add_synapse's values go to, in its argument order: the update's own per-synapse
// variables, then its per-synapse references.
std::vector<std::string> addedArrays(Lowerer& e, const CustomConnectivityUpdate& cc) {
    std::vector<std::string> out;
    for (const auto& v : cc.model().vars)
        out.push_back(cc.name() + "." + v.name);
    for (const auto& d : cc.model().varRefs)
        out.push_back(refs::resolve(e.model, cc.varRefs().at(d.name), cc.name(), d.name).array);
    return out;
}

// Statements storing an added synapse's values at element `element`: the references' values
// (the macro's parameters sfV<k>_, in declaration order), 0 for every other per-synapse value.
std::string addedValues(Lowerer& e, const CustomConnectivityUpdate& cc,
                        const std::vector<MovedArray>& moved, const std::string& nSyn,
                        const std::string& element) {
    const std::vector<std::string> given = addedArrays(e, cc);
    std::string stores;
    for (const auto& a : moved) {
        std::string value = "0";
        for (size_t k = 0; k < given.size(); k++)
            if (given[k] == a.name) value = "(sfV" + std::to_string(k) + "_)";
        stores += " for (uint32_t sfC = 0u; sfC < " + std::to_string(a.copies) + "u; sfC++) " +
                  a.array + "[(size_t)sfC * " + nSyn + " + " + element + "] = " + value + ";";
    }
    return stores;
}

std::string macroParams(const CustomConnectivityUpdate& cc) {
    std::string params = "sfJ_";
    for (size_t k = 0; k < cc.model().vars.size() + cc.model().varRefs.size(); k++)
        params += ", sfV" + std::to_string(k) + "_";
    return params;
}

// Binds the references: per-synapse ones at element `synapse`, neuron ones to id_pre / id_post.
void bindReferences(Lowerer& e, const CustomConnectivityUpdate& cc, const snippet::Scanned& scanned,
                    const std::vector<MovedArray>& moved, const std::string& synapse) {
    const Model& m = e.model;
    const auto& model = cc.model();
    for (const auto& d : model.varRefs) {
        if (!scanned.referencedNames.count(d.name)) continue;
        const auto r = refs::resolve(m, cc.varRefs().at(d.name), cc.name(), d.name);
        const auto found = std::find_if(moved.begin(), moved.end(),
                                        [&](const MovedArray& a) { return a.name == r.array; });
        if (found == moved.end())
            throw InternalError("connectivity update '" + cc.name() + "': " + r.array +
                                " is not a per-synapse array of its group");
        e.subs[d.name] = found->array + "[" + synapse + "]"; // batch-shared: one copy
    }
    for (const auto& v : model.vars) {
        if (!scanned.referencedNames.count(v.name)) continue;
        const auto found = std::find_if(moved.begin(), moved.end(), [&](const MovedArray& a) {
            return a.name == cc.name() + "." + v.name;
        });
        if (found == moved.end())
            throw InternalError("connectivity update '" + cc.name() + "': no array for " + v.name);
        e.subs[v.name] = found->array + "[" + synapse + "]";
    }
    auto ownNeuronVars = [&](const std::vector<VarDecl>& vars, const std::string& prefix,
                             const std::string& index) {
        for (const auto& v : vars)
            if (scanned.referencedNames.count(v.name))
                e.subs[v.name] = e.env.array(prefix + v.name, resolveType(v.type, m.precision()),
                                             cc.name() + "." + v.name, useOf(scanned, v.name)) +
                                 "[" + index + "]";
    };
    ownNeuronVars(model.preVars, "ownPre_", "id_pre");
    ownNeuronVars(model.postVars, "ownPost_", "id_post");
    auto neuronRefs = [&](const std::vector<VarRefDecl>& decls, const VarReferenceMap& bound,
                          const std::string& prefix, const std::string& index) {
        for (const auto& d : decls) {
            if (!scanned.referencedNames.count(d.name)) continue;
            const auto r = refs::resolve(m, bound.at(d.name), cc.name(), d.name);
            e.subs[d.name] = e.env.array(prefix + d.name, resolveType(r.type, m.precision()),
                                         r.array, useOf(scanned, d.name)) +
                             "[" + index + "]";
        }
    };
    neuronRefs(model.preVarRefs, cc.preVarRefs(), "pre_", "id_pre");
    neuronRefs(model.postVarRefs, cc.postVarRefs(), "post_", "id_post");
}

// What one pass lowers: the update, its group's row storage and per-synapse arrays.
struct Pass {
    Lowerer& e;
    const CustomConnectivityUpdate& cc;
    const Connectivity::RowEditing& editing;
    const std::vector<MovedArray>& moved;
    std::string nSyn;

    // The field's substitutions (references bound at element `synapse`) and random stream.
    std::string bind(const std::string& field, const std::string& synapse,
                     const std::string& element) {
        const Model& m = e.model;
        const auto& scanned = analysis::of(m, cc.name(), field);
        e.subs.clear();
        e.bindParams(scanned, contexts::evaluateParams(cc.model(), cc.params(), m.dt()), {},
                     cc.name(), "p_");
        e.bindEGPs(scanned, cc.model(), cc.name(), "egp_");
        e.subs["t"] = "sf_t";
        e.subs["dt"] = e.lit(m.dt());
        e.subs["num_pre"] = "sfNpre";
        e.subs["num_post"] = "sfNpost";
        e.subs["num_batch"] = std::to_string(m.batchSize()) + "u";
        e.subs["add_synapse"] = kAddMacro;
        e.subs["remove_synapse"] = kRemoveMacro;
        bindReferences(e, cc, scanned, moved, synapse);
        if (!scanned.usesRng) return "";
        return std::string(hookName(Hook::RngState)) + " sfRng; " + hookName(Hook::RngInit) +
               "(&sfRng, seed, " +
               e.env.number(field == "rowUpdateCode" ? "streamRow" : "streamColumn", "uint32_t",
                            streamId(cc.name(), field)) +
               ", " + element + ", 0u, " +
               e.env.array("updateCount", "uint32_t", cc.name() + ".updateCount", Use::Read) +
               "[0]);\n";
    }

    std::string render(const std::string& field, const std::string& prologue) {
        return prologue + "{\n" + e.render(cc.name(), field) + "}\n#undef " + kAddMacro +
               "\n#undef " + kRemoveMacro + "\n";
    }

    // ForEach row: the walk slides kept synapses down to sfKeep; the body runs inside
    // `do … while (0)`, so its `continue` ends the iteration, and a `break` leaving the walk
    // stops the bodies but not the sliding.
    std::string rows() {
        const std::string rng = bind("rowUpdateCode", "sfRow0 + sfK", "id_pre");
        e.synapseLoop.begin =
            "{ uint32_t sfKeep = 0u; bool sfStop = false; for (uint32_t sfK = 0u; "
            "sfK < sfLen; sfK++) { const uint32_t id_post = "
            "(uint32_t)sfTargets[sfK]; (void)id_post; bool sfRemove = false; if "
            "(!sfStop) do";
        e.synapseLoop.end = "while (0); if (sfRemove) continue; if (sfKeep != sfK) { " +
                            moveSlot(moved, nSyn, "sfK", "sfKeep") +
                            "} sfKeep++; } sfLen = sfKeep; }";
        e.synapseLoop.breakStatement = "{ sfStop = true; continue; }";
        const std::string report = hookName(Hook::ReportError),
                          error = e.errorWord(*cc.synapseGroup());
        const std::string add =
            std::string("#define ") + kAddMacro + "(" + macroParams(cc) +
            ") do { const uint32_t sfJ = (uint32_t)(sfJ_); if (sfJ >= sfNpost) { " + report + "(" +
            error + ", SF_ERROR_TARGET_RANGE); } else if (sfLen >= sfStride) { " + report + "(" +
            error + ", SF_ERROR_ROW_FULL); } else { sfTargets[sfLen] = sfJ;" +
            addedValues(e, cc, moved, nSyn, "sfRow0 + sfLen") + " sfLen++; } } while (0)\n" +
            "#define " + kRemoveMacro + "() (sfRemove = true)\n";
        return editing.setup + render("rowUpdateCode", add + rng) + editing.finish;
    }

    // ForEach column: removals marked, adds appended to their rows through an atomic length.
    std::string columns(const std::string& mark) {
        const SynapseGroup& sg = *cc.synapseGroup();
        const SynapseLoop walk = connectivityOf(sg)->columnLoop(e.env);
        const std::string rng = bind("columnUpdateCode", "sfSyn", "id_post");
        std::string perIter = walk.perIter;
        for (char& c : perIter)
            if (c == '\n') c = ' ';
        e.synapseLoop.begin = "{ bool sfStop = false; for (uint32_t sfK = " + walk.begin +
                              "; sfK < " + walk.end + "; sfK++) { " + perIter +
                              "bool sfRemove = false; if (!sfStop) do";
        e.synapseLoop.end = "while (0); if (sfRemove) " + mark + "[sfSyn] = 1u; } }";
        e.synapseLoop.breakStatement = "{ sfStop = true; continue; }";
        const std::string report = hookName(Hook::ReportError), error = e.errorWord(sg);
        const std::string add =
            std::string("#define ") + kAddMacro + "(" + macroParams(cc) +
            ") do { const uint32_t sfI_ = (uint32_t)(sfJ_); if (sfI_ >= sfNpre) { " + report + "(" +
            error + ", SF_ERROR_TARGET_RANGE); } else { const uint32_t sfAt = " +
            hookName(Hook::AtomicAddU32) + "(&" + editing.lengths +
            "[sfI_], 1u); if (sfAt >= " + editing.stride + ") { " + report + "(" + error +
            ", SF_ERROR_ROW_FULL); } else { const size_t sfE = (size_t)sfI_ * " + editing.stride +
            " + sfAt; " + editing.targets + "[sfE] = id_post;" +
            addedValues(e, cc, moved, nSyn, "sfE") + " } } } while (0)\n" + "#define " +
            kRemoveMacro + "() (sfRemove = true)\n";
        return "const uint32_t id_post = (uint32_t)sfI;\n" + walk.setup +
               render("columnUpdateCode", add + rng);
    }

    // ForEach row after the columns: the marked synapses dropped, the kept ones slid down in
    // order, the added ones (after the row's old length) sorted stably by target.
    std::string compact(const std::string& mark, const std::string& oldLength) {
        return editing.setup + "if (sfLen > sfStride) sfLen = sfStride; /* a full row's adds */\n" +
               "const uint32_t sfOld = " + oldLength + "[id_pre];\nuint32_t sfKeep = 0u;\n" +
               "for (uint32_t sfK = 0u; sfK < sfLen; sfK++) {\nif (sfK < sfOld && " + mark +
               "[sfRow0 + sfK] != 0u) continue;\nif (sfKeep != sfK) { " +
               moveSlot(moved, nSyn, "sfK", "sfKeep") +
               "}\nsfKeep++;\n}\nconst uint32_t sfAdded = sfKeep - (sfLen - sfOld);\n" +
               "for (uint32_t sfA = sfAdded + 1u; sfA < sfKeep; sfA++)\n" +
               "for (uint32_t sfB = sfA; sfB > sfAdded && sfTargets[sfB - 1u] > sfTargets[sfB]; "
               "sfB--) { " +
               moveSlot(moved, nSyn, "sfB - 1u", "sfB", true) + "}\nsfLen = sfKeep;\n" +
               editing.finish;
    }
};

} // namespace

LoweredGroup lowerConnectivityUpdate(const Model& m, const CustomConnectivityUpdate& cc) {
    using Step = BuildStep;
    const SynapseGroup& sg = *cc.synapseGroup();
    Lowerer e(m);
    const auto editing = connectivityOf(sg)->rowEditing(e.env);
    if (!editing)
        throw InternalError("synapse group '" + sg.name() + "': its rows cannot be edited");
    const auto moved = movedArrays(e, sg);
    Pass pass{e, cc, *editing, moved, e.env.number("numSyn", "uint64_t", synapseCount(sg))};
    InitBody b;
    b.setup = sizesSetup(e, sg);
    auto rebuild = [&] {
        for (const Step& s : editing->after)
            b.build.push_back(s);
    };
    if (!cc.model().rowUpdateCode.empty()) {
        b.build.push_back(
            {Step::Kind::ForEach, Step::Extent::Pre, "(uint64_t)sfNpre", pass.rows(), "", ""});
        rebuild();
    }
    if (!cc.model().columnUpdateCode.empty()) {
        const std::string mark =
            e.env.array("ccMark", "uint32_t", cc.name() + ".ccMark", Use::ReadWrite);
        const std::string old =
            e.env.array("ccOldLen", "uint32_t", cc.name() + ".ccOldLen", Use::ReadWrite);
        b.build.push_back({Step::Kind::ForEach, Step::Extent::RowSlots,
                           "(uint64_t)sfNpre * " + editing->stride, mark + "[sfI] = 0u;\n", "",
                           ""});
        b.build.push_back({Step::Kind::ForEach, Step::Extent::Pre, "(uint64_t)sfNpre",
                           old + "[sfI] = " + editing->lengths + "[sfI];\n", "", ""});
        b.build.push_back({Step::Kind::ForEach, Step::Extent::Post, "(uint64_t)sfNpost",
                           pass.columns(mark), "", ""});
        b.build.push_back({Step::Kind::ForEach, Step::Extent::Pre, "(uint64_t)sfNpre",
                           pass.compact(mark, old), "", ""});
        rebuild();
    }
    // A fresh random stream next call.
    b.build.push_back(
        {Step::Kind::Serial, Step::Extent::One, "1u",
         e.env.array("updateCount", "uint32_t", cc.name() + ".updateCount", Use::ReadWrite) +
             "[0] += 1u;\n",
         "", ""});
    return e.finish(cc.name(), std::move(b), synapseCount(sg), synapseExtent(sg));
}

} // namespace spikeforge::codegen

namespace spikeforge::codegen {

LoweredGroup lowerConnectivityUpdateInit(const Model& m, const CustomConnectivityUpdate& cc) {
    const SynapseGroup& sg = *cc.synapseGroup();
    Lowerer e(m);
    const auto conn = connectivityOf(sg);
    InitBody b;
    b.setup = sizesSetup(e, sg);
    // The per-synapse initialisers read the rows the group's initialisation built.
    b.readsEarlierGroups = !cc.model().vars.empty();
    const std::string nSyn = e.env.number("numSynInit", "uint64_t", synapseCount(sg));
    e.initNames = {{"num_pre", "sfNpre"}, {"num_post", "sfNpost"}};
    e.initPairDecode = conn->decode(e.env);
    const std::string skip = conn->paddingSkip(e.env);
    for (const auto& v : cc.model().vars)
        b.vars.push_back(e.varInit(cc.name(), v, cc.varInits().at(v.name), nSyn, false, skip));
    e.initPairDecode.clear();
    auto neuronShaped = [&](const std::vector<VarDecl>& vars, const VarInitMap& inits,
                            const std::string& count) {
        e.initNames = {{"num_neurons", count}};
        for (const auto& v : vars)
            b.vars.push_back(e.varInit(cc.name(), v, inits.at(v.name), count, false));
    };
    neuronShaped(cc.model().preVars, cc.preVarInits(), "(size_t)sfNpre");
    neuronShaped(cc.model().postVars, cc.postVarInits(), "(size_t)sfNpost");
    return e.finish(cc.name(), std::move(b), synapseCount(sg), synapseExtent(sg));
}

} // namespace spikeforge::codegen
