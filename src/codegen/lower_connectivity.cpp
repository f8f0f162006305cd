// Custom connectivity updates (structural plasticity): the row code of one update over every row
// of its Sparse group, editing the rows in place. A row is walked once by for_each_synapse;
// the synapses it keeps slide down over the removed ones (keeping their order), each with every
// per-synapse value it owns (all batch copies of the group's variables and of the per-synapse
// variables of the custom updates over the group); add_synapse then appends into the row's
// padding. The layout gives the row's storage and rebuilds its derived index afterwards.
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
    unsigned copies = 1;
};

std::vector<MovedArray> movedArrays(Lowerer& e, const SynapseGroup& sg) {
    const Model& m = e.model;
    const Precision p = m.precision();
    std::vector<MovedArray> out;
    for (const auto& v : sg.wu().model.vars) {
        const std::string name = sg.name() + "." + v.name;
        out.push_back({e.env.array("sv_" + v.name, resolveType(v.type, p), name, Use::ReadWrite),
                       name, hasBatchDim(v.access) ? m.batchSize() : 1u});
    }
    for (size_t k = 0; k < m.customUpdates().size(); k++) {
        const CustomUpdate& cu = *m.customUpdates()[k];
        if (!cu.isWUShaped() || cu.synapseGroup() != &sg) continue;
        for (const auto& v : cu.model().vars) {
            const auto r = refs::ownVar(cu, v, m.batchSize());
            if (!r.elementDim) continue;
            out.push_back({e.env.array("cu" + std::to_string(k) + "_" + v.name,
                                       resolveType(v.type, p), r.array, Use::ReadWrite),
                           r.array, r.batchDim ? m.batchSize() : 1u});
        }
    }
    return out;
}

// Statements copying slot `from` of the row to slot `to`, every array and batch copy.
std::string moveSlot(const std::vector<MovedArray>& moved, const std::string& nSyn,
                     const std::string& from, const std::string& to) {
    std::string s = "sfTargets[" + to + "] = sfTargets[" + from + "];\n";
    for (const auto& a : moved)
        s += "for (uint32_t sfC = 0u; sfC < " + std::to_string(a.copies) + "u; sfC++) " + a.array +
             "[(size_t)sfC * " + nSyn + " + sfRow0 + " + to + "] = " + a.array + "[(size_t)sfC * " +
             nSyn + " + sfRow0 + " + from + "];\n";
    return s;
}

// The add_synapse macro: target j with the values of the references (in declaration order), the
// other per-synapse values 0 in every copy; a full row or a target out of range is reported on
// the group's error word and adds nothing.
std::string addMacro(Lowerer& e, const CustomConnectivityUpdate& cc,
                     const std::vector<MovedArray>& moved, const std::string& nSyn) {
    const SynapseGroup& sg = *cc.synapseGroup();
    const auto& decls = cc.model().varRefs;
    std::string params = "sfJ_";
    for (size_t k = 0; k < decls.size(); k++)
        params += ", sfV" + std::to_string(k) + "_";
    std::string stores;
    for (const auto& a : moved) {
        std::string value = "0";
        for (size_t k = 0; k < decls.size(); k++)
            if (refs::resolve(e.model, cc.varRefs().at(decls[k].name), cc.name(), decls[k].name)
                    .array == a.name)
                value = "(sfV" + std::to_string(k) + "_)";
        stores += " for (uint32_t sfC = 0u; sfC < " + std::to_string(a.copies) + "u; sfC++) " +
                  a.array + "[(size_t)sfC * " + nSyn + " + sfRow0 + sfLen] = " + value + ";";
    }
    const std::string error = e.errorWord(sg);
    const std::string report = hookName(Hook::ReportError);
    return std::string("#define ") + kAddMacro + "(" + params +
           ") do { const uint32_t sfJ = (uint32_t)(sfJ_); if (sfJ >= sfNpost) { " + report + "(" +
           error + ", SF_ERROR_TARGET_RANGE); } else if (sfLen >= sfStride) { " + report + "(" +
           error + ", SF_ERROR_ROW_FULL); } else { sfTargets[sfLen] = sfJ;" + stores +
           " sfLen++; } } while (0)\n";
}

// Binds the references: per-synapse ones to slot sfK of the row, neuron ones to id_pre / id_post.
void bindReferences(Lowerer& e, const CustomConnectivityUpdate& cc, const snippet::Scanned& scanned,
                    const std::vector<MovedArray>& moved) {
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
        e.subs[d.name] = found->array + "[sfRow0 + sfK]"; // batch-shared: one copy
    }
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

} // namespace

LoweredGroup lowerConnectivityUpdate(const Model& m, const CustomConnectivityUpdate& cc) {
    const SynapseGroup& sg = *cc.synapseGroup();
    const std::string field = "rowUpdateCode";
    Lowerer e(m);
    const auto editing = connectivityOf(sg)->rowEditing(e.env);
    if (!editing)
        throw InternalError("synapse group '" + sg.name() + "': its rows cannot be edited");
    const auto& scanned = analysis::of(m, cc.name(), field);
    const std::string nSyn = e.env.number("numSyn", "uint64_t", synapseCount(sg));
    const auto moved = movedArrays(e, sg);

    e.bindParams(scanned, contexts::evaluateParams(cc.model(), cc.params(), m.dt()), {}, cc.name(),
                 "p_");
    e.bindEGPs(scanned, cc.model(), cc.name(), "egp_");
    e.subs["t"] = "sf_t";
    e.subs["dt"] = e.lit(m.dt());
    e.subs["num_pre"] = "sfNpre";
    e.subs["num_post"] = "sfNpost";
    e.subs["num_batch"] = std::to_string(m.batchSize()) + "u";
    e.subs["add_synapse"] = kAddMacro;
    e.subs["remove_synapse"] = kRemoveMacro;
    bindReferences(e, cc, scanned, moved);
    // The walk: a removed synapse is skipped when its iteration ends, a kept one slides down to
    // sfKeep. The body runs inside `do … while (0)`, so its `continue` ends the iteration; a
    // `break` leaving the loop stops the bodies but not the sliding.
    e.synapseLoop.begin =
        "{ uint32_t sfKeep = 0u; bool sfStop = false; for (uint32_t sfK = 0u; "
        "sfK < sfLen; sfK++) { const uint32_t id_post = (uint32_t)sfTargets[sfK]; "
        "(void)id_post; bool sfRemove = false; if (!sfStop) do";
    std::string slide = moveSlot(moved, nSyn, "sfK", "sfKeep");
    for (char& c : slide)
        if (c == '\n') c = ' ';
    e.synapseLoop.end = "while (0); if (sfRemove) continue; if (sfKeep != sfK) { " + slide +
                        "} sfKeep++; } sfLen = sfKeep; }";
    e.synapseLoop.breakStatement = "{ sfStop = true; continue; }";

    std::string row = editing->setup + addMacro(e, cc, moved, nSyn) + "#define " + kRemoveMacro +
                      "() (sfRemove = true)\n";
    const std::string code = e.render(cc.name(), field);
    if (scanned.usesRng)
        row += std::string(hookName(Hook::RngState)) + " sfRng; " + hookName(Hook::RngInit) +
               "(&sfRng, seed, " +
               e.env.number("streamRow", "uint32_t", streamId(cc.name(), "rowUpdate")) +
               ", id_pre, 0u, " +
               e.env.array("updateCount", "uint32_t", cc.name() + ".updateCount", Use::Read) +
               "[0]);\n";
    row += "{\n" + code + "}\n" + editing->finish + "#undef " + kAddMacro + "\n#undef " +
           kRemoveMacro + "\n";

    using Step = BuildStep;
    InitBody b;
    b.setup = sizesSetup(e, sg);
    b.build.push_back({Step::Kind::ForEach, Step::Extent::Pre, "(uint64_t)sfNpre", row, "", ""});
    for (const Step& s : editing->after)
        b.build.push_back(s);
    // A fresh random stream next call.
    b.build.push_back(
        {Step::Kind::Serial, Step::Extent::One, "1u",
         e.env.array("updateCount", "uint32_t", cc.name() + ".updateCount", Use::ReadWrite) +
             "[0] += 1u;\n",
         "", ""});
    return e.finish(cc.name(), std::move(b), synapseCount(sg), synapseExtent(sg));
}

} // namespace spikeforge::codegen
