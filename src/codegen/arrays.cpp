#include "codegen/arrays.hpp"

#include "model/contexts.hpp"
#include "model/var_refs.hpp"

#include <algorithm>

namespace spikeforge::codegen {

std::string indexType(unsigned numPost) {
    if (numPost <= 0x100u) return "uint8_t";
    if (numPost <= 0x10000u) return "uint16_t";
    return "uint32_t";
}

size_t synapseCount(const SynapseGroup& sg) {
    const size_t pre = sg.source().size();
    return sg.matrixType() == MatrixType::Dense ? pre * sg.target().size()
                                                : pre * sg.maxRowLength();
}

unsigned bitWords(unsigned n) {
    return (n + 31) / 32;
}

size_t varCount(VarAccess access, size_t elements, unsigned batch) {
    return (hasElementDim(access) ? elements : 1) * (hasBatchDim(access) ? batch : 1);
}

bool usesDendriticDelay(const Model& m, const SynapseGroup& sg) {
    // A fact the checker records: a call on the checked tree, not a text match.
    const auto& code = sg.wu().model.preSpikeSynCode;
    if (code.empty()) return false;
    return snippet::scan(code, contexts::synapseContext(m, sg, "preSpikeSynCode"))
        .usesAddToPostDelay;
}

bool needsColumnIndex(const SynapseGroup& sg) {
    return sg.matrixType() == MatrixType::Sparse && !sg.wu().model.postSpikeSynCode.empty();
}

uint32_t streamId(const std::string& group, const std::string& purpose) {
    uint32_t h = 2166136261u;
    for (char c : group + "/" + purpose) {
        h ^= static_cast<unsigned char>(c);
        h *= 16777619u;
    }
    return h;
}

namespace {

void addVars(std::vector<ArrayDecl>& out, const std::string& group,
             const std::vector<VarDecl>& vars, size_t elements, unsigned batch, Precision p) {
    for (const auto& v : vars)
        out.push_back(
            {group + "." + v.name, resolveType(v.type, p), varCount(v.access, elements, batch)});
}

void addEGPs(std::vector<ArrayDecl>& out, const std::string& group, const SnippetBase& s,
             Precision p) {
    for (const auto& e : s.egps)
        out.push_back({group + "." + e.name, resolveType(e.type, p), 0});
}

} // namespace

std::vector<ArrayDecl> planArrays(const Model& m) {
    std::vector<ArrayDecl> out;
    out.push_back({kSnippetErrorsArray, "uint32_t", std::max<size_t>(1, contexts::codeFieldCount(m))});
    const Precision p = m.precision();
    const std::string scalar = resolveType("scalar", p);
    const unsigned B = m.batchSize();
    for (const auto& ng : m.neuronGroups()) {
        const std::string& n = ng->name();
        const size_t N = ng->size(), D = ng->numDelaySlots();
        out.push_back({n + ".spkCnt", "uint32_t", B * D});
        out.push_back({n + ".spk", "uint32_t", B * D * N});
        out.push_back({n + ".st", scalar, B * N});
        out.push_back({n + ".spkBits", "uint32_t", B * size_t(bitWords(ng->size()))});
        out.push_back({n + ".recordSpk", "uint32_t", 0});
        addVars(out, n, ng->model().vars, N, B, p);
        addEGPs(out, n, ng->model(), p);
    }
    for (const auto& sg : m.synapseGroups()) {
        const std::string& n = sg->name();
        const size_t pre = sg->source().size(), post = sg->target().size();
        out.push_back({n + ".inSyn", scalar, B * post});
        out.push_back({n + ".error", "uint32_t", 1});
        if (usesDendriticDelay(m, *sg))
            out.push_back({n + ".denDelay", scalar, B * sg->maxDendriticDelaySteps() * post});
        const auto& wu = sg->wu().model;
        addVars(out, n, wu.vars, synapseCount(*sg), B, p);
        addVars(out, n, wu.preVars, pre, B, p);
        addVars(out, n, wu.postVars, post, B, p);
        addVars(out, n, sg->ps().model.vars, post, B, p);
        addEGPs(out, n, wu, p);
        addEGPs(out, n, sg->ps().model, p);
        if (sg->matrixType() == MatrixType::Sparse) {
            out.push_back({n + ".rowLength", "uint32_t", pre});
            out.push_back({n + ".ind", indexType(sg->target().size()), pre * sg->maxRowLength()});
            if (!sg->connectivity()->snippet.preCalcRowLengthCode.empty())
                out.push_back({n + ".preCalcRowLength", "uint32_t", pre});
            if (needsColumnIndex(*sg)) {
                out.push_back({n + ".colStart", "uint32_t", post + 1});
                out.push_back({n + ".colSyn", "uint32_t", pre * sg->maxRowLength()});
            }
        }
    }
    for (const auto& cu : m.customUpdates()) {
        out.push_back({cu->name() + ".updateCount", "uint32_t", 1});
        addEGPs(out, cu->name(), cu->model(), p); // bound by the custom-update emitter
        for (const auto& v : cu->model().vars) {
            const auto r = refs::ownVar(*cu, v, B);
            out.push_back({r.array, resolveType(v.type, p), r.elements * (r.batchDim ? B : 1)});
        }
    }
    for (const auto& cs : m.currentSources()) {
        addVars(out, cs->name(), cs->bound().model.vars, cs->target().size(), B, p);
        addEGPs(out, cs->name(), cs->bound().model, p);
    }
    return out;
}

} // namespace spikeforge::codegen
