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

std::vector<Slot> slots(Emitter& e, const CustomUpdate& cu) {
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
        s.array = e.env.array("r_" + s.name, s.type, s.target.array);
        auto ref = cu.varRefs().find(s.name);
        if (ref != cu.varRefs().end() && !ref->second.transposeGroup.empty()) {
            const auto t = refs::resolve(e.model,
                                         {ref->second.transposeGroup, ref->second.transposeVar},
                                         cu.name(), s.name);
            s.transpose = e.env.array("t_" + s.name, s.type, t.array);
            s.transposeBatched = t.batchDim && cu.isBatched();
        }
        if (isReduction(s.access) && !isFloating(s.type))
            throw ModelError("custom update '" + cu.name() + "': reduction target '" + s.name +
                             "' must be floating point, not " + s.type);
    }
    return out;
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
            c += sum ? "sfAcc_" + s.name + " += l_" + s.name + ";\n"
                     : "sfAcc_" + s.name + " = l_" + s.name + " > sfAcc_" + s.name + " ? l_" +
                           s.name + " : sfAcc_" + s.name + ";\n";
        }
    }
    return c;
}

std::string accumulators(const std::vector<Slot>& ss, bool (*which)(A)) {
    std::string c;
    for (const auto& s : ss)
        if (which(s.access)) {
            const bool sum = s.access == A::ReduceBatchSum || s.access == A::ReduceNeuronSum;
            c += s.type + " sfAcc_" + s.name + " = " + (sum ? "0" : "-INFINITY") + ";\n";
        }
    return c;
}

std::string writeAccumulators(const std::vector<Slot>& ss, bool (*which)(A),
                              const std::string& batch) {
    std::string c;
    for (const auto& s : ss)
        if (which(s.access))
            c += s.array + "[" + index(s.target, batch) + "] = sfAcc_" + s.name + ";\n";
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

codegen::EmittedGroup emitCustomUpdate(const Model& m, const CustomUpdate& cu) {
    Emitter e{m, {}, {}};
    const auto ctx = contexts::customUpdateContext(m, cu);
    const auto scanned = snippet::scan(cu.model().updateCode, ctx);
    e.bindParams(scanned, cu.model(), contexts::evaluateParams(cu.model(), cu.params(), m.dt()),
                 cu.dynamicParams(), cu.name(), "p_");
    e.bindEGPs(scanned, cu.model(), cu.name(), "e_");
    e.subs["dt"] = e.lit(m.dt());
    const auto ss = slots(e, cu);
    const std::string B = cu.isBatched() ? "SF_BATCH" : "1u";
    std::string c =
        "const size_t sfN = " + e.env.number("numElements", "uint64_t", double(cu.numElements())) +
        ";\n";
    const std::string decode = cu.isWUShaped() ? synapseDecode(e, *cu.synapseGroup()) : "";
    // The run counter lives on the device: read once here, advanced once after the loop.
    std::string counterEnd;
    if (scanned.referencedNames.count("updateCount")) {
        const std::string counter =
            e.env.array("updateCount", "uint32_t", cu.name() + ".updateCount");
        c += "const uint32_t sfUpdateCount = " + counter + "[0];\n";
        e.subs["updateCount"] = "sfUpdateCount";
        counterEnd = counter + "[0] = sfUpdateCount + 1u;\n";
    }
    const std::string body = elementBody(e, cu, ss);
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
             "for (size_t id = 0; id < sfN; id++) {\n" + body + "}\n" +
             writeAccumulators(ss, isNeuronReduction, "batch") + "}\n//SF_END_PARALLEL\n";
    } else {
        // Elements in parallel, the batch innermost so batch reductions stay in registers.
        c += "#pragma omp parallel for schedule(static) num_threads(a->threads) if (a->threads > "
             "1u && sfN * " +
             B +
             " >= 32768u)\n"
             "for (size_t id = 0; id < sfN; id++) {\n" +
             decode + accumulators(ss, isBatchReduction) + "for (uint32_t batch = 0; batch < " + B +
             "; batch++) {\n" + body + "}\n" + writeAccumulators(ss, isBatchReduction, "0u") +
             "}\n//SF_END_PARALLEL\n";
    }
    c += counterEnd;
    return {cu.name(), c, std::move(e.env)};
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
