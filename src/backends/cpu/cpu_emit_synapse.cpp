// Spike propagation, postsynaptic learning and synapse-group initialisation kernels for the CPU
// backend. Work is split over batch elements: each batch element owns its input buffers, so no
// atomics are needed and the summation order is fixed.
#include "backends/cpu/cpu_emit.hpp"
#include "codegen/arrays.hpp"

namespace spikeforge::cpu {

namespace {

// Substitutions shared by pre- and post-spike synapse code: synapse, pre/post and neighbour
// variables, spike times, params. Synapse index local: sfSyn; batch local: batch.
void bindSynapseNames(Emitter& e, const SynapseGroup& sg, const snippet::Scanned& scanned) {
    const Model& m = e.model;
    const auto& wu = sg.wu();
    const std::string nPre = "sfNpre", nPost = "sfNpost";
    const std::string nSyn = e.env.number("numSyn", "uint64_t", codegen::synapseCount(sg));
    auto used = [&](const std::string& n) { return scanned.referencedNames.count(n) > 0; };
    for (const auto& v : wu.model.vars) {
        if (!used(v.name)) continue;
        const std::string arr = e.env.array(
            "g_" + v.name, codegen::resolveType(v.type, m.precision()), sg.name() + "." + v.name);
        e.subs[v.name] =
            arr + "[" + (hasBatchDim(v.access) ? "(size_t)batch * " + nSyn + " + " : "") + "sfSyn]";
    }
    auto bindNeuronVars = [&](const std::vector<VarDecl>& vars, const std::string& owner,
                              const std::string& prefix, const std::string& suffix,
                              const std::string& idx, const std::string& n) {
        for (const auto& v : vars) {
            if (!used(v.name + suffix)) continue;
            const std::string arr = e.env.array(
                prefix + v.name, codegen::resolveType(v.type, m.precision()), owner + "." + v.name);
            e.subs[v.name + suffix] = arr + "[" + neuronVarIndex(v.access, idx, n) + "]";
        }
    };
    bindNeuronVars(wu.model.preVars, sg.name(), "pre_", "", "id_pre", nPre);
    bindNeuronVars(wu.model.postVars, sg.name(), "post_", "", "id_post", nPost);
    bindNeuronVars(sg.source().model().vars, sg.source().name(), "src_", "_pre", "id_pre", nPre);
    bindNeuronVars(sg.target().model().vars, sg.target().name(), "tgt_", "_post", "id_post", nPost);
    if (used("st_pre"))
        e.subs["st_pre"] = e.env.array("stPre", e.scalar(), sg.source().name() + ".st") +
                           "[(size_t)batch * sfNpre + id_pre]";
    if (used("st_post"))
        e.subs["st_post"] = e.env.array("stPost", e.scalar(), sg.target().name() + ".st") +
                            "[(size_t)batch * sfNpost + id_post]";
    e.bindParams(scanned, wu.model, contexts::evaluateParams(wu.model, wu.params, m.dt()),
                 wu.dynamicParams, sg.name(), "wu_p_");
    e.bindEGPs(scanned, wu.model, sg.name(), "wu_e_");
    e.subs["t"] = "sf_t";
    e.subs["dt"] = e.lit(m.dt());
    e.subs["num_pre"] = "sfNpre";
    e.subs["num_post"] = "sfNpost";
}

std::string sizesPreamble(Emitter& e, const SynapseGroup& sg) {
    const std::string S = e.scalar();
    return "const uint32_t sfNpre = " + e.env.number("numPre", "uint32_t", sg.source().size()) +
           ";\nconst uint32_t sfNpost = " +
           e.env.number("numPost", "uint32_t", sg.target().size()) + ";\n" + "const " + S +
           " sf_t = (" + S + ")a->t; (void)sf_t;\n";
}

// Slot of the spike queue of `ng` holding the spikes emitted `1 + delay` steps ago.
std::string queueSlot(Emitter& e, const std::string& prefix, const NeuronGroup& ng,
                      unsigned delay) {
    const std::string D = e.env.number(prefix + "DelaySlots", "uint32_t", ng.numDelaySlots());
    const std::string d = e.env.number(prefix + "Delay", "uint32_t", delay);
    return "(uint32_t)((a->step + " + D + " - (1u + " + d + ") % " + D + ") % " + D + ")";
}

// Opens the loops over the spikes that `ng` emitted 1 + delay steps ago: batch elements (in
// parallel when worth it), then spikes, naming each spike's neuron `idName`. `perBatch` is code
// run once per batch element before its spikes. The caller closes two braces and the parallel
// region's marker.
std::string openSpikeLoops(Emitter& e, const NeuronGroup& ng, const std::string& prefix,
                           unsigned delay, const std::string& nExpr, const std::string& perBatch,
                           const std::string& idName) {
    const std::string D = e.env.number(prefix + "DelaySlots", "uint32_t", ng.numDelaySlots());
    const std::string cnt = e.env.array(prefix + "SpkCnt", "uint32_t", ng.name() + ".spkCnt");
    const std::string spk = e.env.array(prefix + "Spk", "uint32_t", ng.name() + ".spk");
    return "const uint32_t sfSlot = " + queueSlot(e, prefix, ng, delay) + ";\n" +
           "#pragma omp parallel for schedule(static) num_threads(a->threads) if (a->threads > 1u "
           "&& SF_BATCH > 1u && SF_BATCH * sfNpost >= 16384u)\n"
           "for (uint32_t batch = 0; batch < SF_BATCH; batch++) {\n"
           "const uint32_t sfCnt = " +
           cnt + "[(size_t)batch * " + D + " + sfSlot];\n" + "const uint32_t* sfSpk = " + spk +
           " + ((size_t)batch * " + D + " + sfSlot) * " + nExpr + ";\n" + perBatch +
           "for (uint32_t sfS = 0; sfS < sfCnt; sfS++) {\nconst uint32_t " + idName +
           " = sfSpk[sfS];\n";
}

} // namespace

codegen::EmittedGroup emitPresynapticUpdate(const Model& m, const SynapseGroup& sg) {
    Emitter e{m, {}, {}};
    const auto& code = sg.wu().model.preSpikeSynCode;
    const auto ctx = contexts::synapseContext(m, sg, "preSpikeSynCode");
    const auto scanned = snippet::scan(code, ctx);
    std::string c = sizesPreamble(e, sg);
    bindSynapseNames(e, sg, scanned);
    const std::string inSyn = e.env.array("inSyn", e.scalar(), sg.name() + ".inSyn");
    e.subs["addToPost"] = "sfInSyn[id_post] += ";
    e.subs["addToPostDelay"] = "SF_ADD_TO_POST_DELAY";
    const std::string body = e.render(code, ctx);
    std::string perBatch =
        e.scalar() + "* sfInSyn = " + inSyn + " + (size_t)batch * sfNpost; (void)sfInSyn;\n";
    if (codegen::usesDendriticDelay(m, sg)) {
        const std::string dd = e.env.number("dd", "uint32_t", sg.maxDendriticDelaySteps());
        perBatch += "const uint32_t sfDd = " + dd + ";\nconst uint64_t sfStep = a->step;\n" +
                    e.scalar() +
                    "* sfDen = " + e.env.array("denDelay", e.scalar(), sg.name() + ".denDelay") +
                    " + (size_t)batch * sfDd * sfNpost;\nuint32_t* sfErr = " +
                    e.env.array("error", "uint32_t", sg.name() + ".error") + ";\n";
    }
    c += openSpikeLoops(e, sg.source(), "src", sg.axonalDelaySteps(), "sfNpre", perBatch, "id_pre");
    if (sg.matrixType() == MatrixType::Dense) {
        c += "for (uint32_t id_post = 0; id_post < sfNpost; id_post++) {\n"
             "const size_t sfSyn = (size_t)id_pre * sfNpost + id_post;\n" +
             body + "}\n";
    } else {
        const std::string stride = e.env.number("rowStride", "uint32_t", sg.maxRowLength());
        const std::string it = codegen::indexType(sg.target().size());
        c += "const uint32_t sfLen = " +
             e.env.array("rowLength", "uint32_t", sg.name() + ".rowLength") +
             "[id_pre];\n"
             "const " +
             it + "* sfRow = " + e.env.array("ind", it, sg.name() + ".ind") +
             " + (size_t)id_pre * " + stride +
             ";\n"
             "for (uint32_t sfK = 0; sfK < sfLen; sfK++) {\n"
             "const uint32_t id_post = sfRow[sfK];\n"
             "const size_t sfSyn = (size_t)id_pre * " +
             stride + " + sfK;\n" + body + "}\n";
    }
    c += "}\n}\n//SF_END_PARALLEL\n";
    return {sg.name(), c, std::move(e.env)};
}

codegen::EmittedGroup emitPostsynapticUpdate(const Model& m, const SynapseGroup& sg) {
    Emitter e{m, {}, {}};
    const auto& code = sg.wu().model.postSpikeSynCode;
    const auto ctx = contexts::synapseContext(m, sg, "postSpikeSynCode");
    const auto scanned = snippet::scan(code, ctx);
    std::string c = sizesPreamble(e, sg);
    bindSynapseNames(e, sg, scanned);
    const std::string body = e.render(code, ctx);
    c += openSpikeLoops(e, sg.target(), "tgt", 0, "sfNpost", "", "id_post");
    if (sg.matrixType() == MatrixType::Dense) {
        c += "for (uint32_t id_pre = 0; id_pre < sfNpre; id_pre++) {\n"
             "const size_t sfSyn = (size_t)id_pre * sfNpost + id_post;\n" +
             body + "}\n";
    } else {
        const std::string stride = e.env.number("rowStride", "uint32_t", sg.maxRowLength());
        c += "const uint32_t* sfColStart = " +
             e.env.array("colStart", "uint32_t", sg.name() + ".colStart") +
             ";\n"
             "const uint32_t* sfColSyn = " +
             e.env.array("colSyn", "uint32_t", sg.name() + ".colSyn") +
             ";\n"
             "for (uint32_t sfK = sfColStart[id_post]; sfK < sfColStart[id_post + 1]; sfK++) {\n"
             "const size_t sfSyn = sfColSyn[sfK];\n"
             "const uint32_t id_pre = (uint32_t)(sfSyn / " +
             stride + ");\n" + body + "}\n";
    }
    c += "}\n}\n//SF_END_PARALLEL\n";
    return {sg.name(), c, std::move(e.env)};
}

namespace {

std::string emitConnectivityInit(Emitter& e, const SynapseGroup& sg) {
    const Model& m = e.model;
    const auto& conn = *sg.connectivity();
    const std::string stride = e.env.number("rowStride", "uint32_t", sg.maxRowLength());
    const std::string it = codegen::indexType(sg.target().size());
    const std::string rowLength = e.env.array("rowLength", "uint32_t", sg.name() + ".rowLength");
    const std::string ind = e.env.array("ind", it, sg.name() + ".ind");
    const std::string err = e.env.array("error", "uint32_t", sg.name() + ".error");
    const auto values = contexts::evaluateParams(conn.snippet, conn.params, m.dt());
    std::string c = "const uint32_t num_pre = sfNpre, num_post = sfNpost; (void)num_pre; "
                    "(void)num_post;\n";
    if (!conn.snippet.preCalcRowLengthCode.empty()) {
        const auto ctx = contexts::preCalcRowLengthContext(m, sg);
        const auto scanned = snippet::scan(conn.snippet.preCalcRowLengthCode, ctx);
        e.subs.clear();
        e.bindParams(scanned, conn.snippet, values, {}, sg.name(), "cp_");
        e.subs["preCalcRowLength"] =
            e.env.array("preCalcRowLength", "uint32_t", sg.name() + ".preCalcRowLength");
        e.subs["#size:preCalcRowLength"] = "sfNpre";
        c += "{\nsf_rng sfRng; sf_rng_init(&sfRng, seed, " +
             e.env.number("streamPreCalc", "uint32_t",
                          codegen::streamId(sg.name(), "connectivity.preCalc")) +
             ", 0u, 0u, 0u);\n" + e.render(conn.snippet.preCalcRowLengthCode, ctx) + "}\n";
    }
    const auto ctx = contexts::rowBuildContext(m, sg);
    const auto scanned = snippet::scan(conn.snippet.rowBuildCode, ctx);
    e.subs.clear();
    e.bindParams(scanned, conn.snippet, values, {}, sg.name(), "cp_");
    if (scanned.referencedNames.count("preCalcRowLength")) {
        e.subs["preCalcRowLength"] =
            e.env.array("preCalcRowLength", "uint32_t", sg.name() + ".preCalcRowLength");
        e.subs["#size:preCalcRowLength"] = "sfNpre";
    }
    e.subs["addSynapse"] = "SF_ADD_SYNAPSE";
    c += "#pragma omp parallel for schedule(dynamic, 16) num_threads(a->threads) if (a->threads > "
         "1u && sfNpre >= 256u)\n"
         "for (uint32_t id_pre = 0; id_pre < sfNpre; id_pre++) {\n"
         "sf_rng sfRng; sf_rng_init(&sfRng, seed, " +
         e.env.number("streamConn", "uint32_t", codegen::streamId(sg.name(), "connectivity")) +
         ", id_pre, 0u, 0u);\n"
         "const uint32_t sfStride = " +
         stride + ";\n" + it + "* sfRow = " + ind +
         " + (size_t)id_pre * sfStride;\nuint32_t sfLen = 0;\n" +
         e.render(conn.snippet.rowBuildCode, ctx) +
         "if (sfLen > sfStride) {\n#pragma omp atomic\n" + err +
         "[0] |= SF_ERROR_ROW_OVERFLOW;\n"
         "sfLen = sfStride;\n}\n" +
         rowLength + "[id_pre] = sfLen;\n}\n//SF_END_PARALLEL\n";
    if (codegen::needsColumnIndex(sg)) {
        // Column index (CSC over synapse ids) for postsynaptic learning: a counting sort.
        const std::string colStart = e.env.array("colStart", "uint32_t", sg.name() + ".colStart");
        const std::string colSyn = e.env.array("colSyn", "uint32_t", sg.name() + ".colSyn");
        c += "{\nuint32_t* cs = " + colStart +
             ";\n"
             "for (uint32_t j = 0; j <= sfNpost; j++) cs[j] = 0;\n"
             "for (uint32_t i = 0; i < sfNpre; i++) for (uint32_t k = 0; k < " +
             rowLength + "[i]; k++) cs[" + ind + "[(size_t)i * " + stride +
             " + k] + 1]++;\n"
             "for (uint32_t j = 0; j < sfNpost; j++) cs[j + 1] += cs[j];\n"
             "std::vector<uint32_t> cursor(cs, cs + sfNpost);\n"
             "for (uint32_t i = 0; i < sfNpre; i++) for (uint32_t k = 0; k < " +
             rowLength + "[i]; k++) {\nconst size_t s = (size_t)i * " + stride + " + k;\n" +
             colSyn + "[cursor[" + ind + "[s]]++] = (uint32_t)s;\n}\n}\n";
    }
    return c;
}

} // namespace

codegen::EmittedGroup emitSynapseInit(const Model& m, const SynapseGroup& sg) {
    Emitter e{m, {}, {}};
    std::string c = sizesPreamble(e, sg);
    if (sg.matrixType() == MatrixType::Sparse) c += emitConnectivityInit(e, sg);
    const auto& wu = sg.wu().model;
    const std::string nSyn = e.env.number("numSynInit", "uint64_t", codegen::synapseCount(sg));
    std::string skip;
    if (sg.matrixType() == MatrixType::Sparse) {
        const std::string stride = e.env.number("rowStride", "uint32_t", sg.maxRowLength());
        skip = "if (i % " + stride +
               " >= " + e.env.array("rowLength", "uint32_t", sg.name() + ".rowLength") + "[i / " +
               stride + "]) continue;\n";
    }
    for (const auto& v : wu.vars)
        c += emitVarInit(e, sg.name(), v, sg.wu().varInits.at(v.name), nSyn, hasBatchDim(v.access),
                         skip);
    for (const auto& v : wu.preVars)
        c += emitVarInit(e, sg.name(), v, sg.wuPreVarInits().at(v.name),
                         hasElementDim(v.access) ? "(size_t)sfNpre" : "1u", hasBatchDim(v.access));
    for (const auto& v : wu.postVars)
        c += emitVarInit(e, sg.name(), v, sg.wuPostVarInits().at(v.name),
                         hasElementDim(v.access) ? "(size_t)sfNpost" : "1u", hasBatchDim(v.access));
    for (const auto& v : sg.ps().model.vars)
        c += emitVarInit(e, sg.name(), v, sg.ps().varInits.at(v.name),
                         hasElementDim(v.access) ? "(size_t)sfNpost" : "1u", hasBatchDim(v.access));
    return {sg.name(), c, std::move(e.env)};
}

codegen::EmittedGroup emitCurrentSourceInit(const Model& m, const CurrentSource& cs) {
    Emitter e{m, {}, {}};
    const std::string N = e.env.number("numNeurons", "uint32_t", cs.target().size());
    std::string c;
    for (const auto& v : cs.bound().model.vars)
        c += emitVarInit(e, cs.name(), v, cs.bound().varInits.at(v.name),
                         hasElementDim(v.access) ? N : "1u", hasBatchDim(v.access));
    if (c.empty()) c = "(void)seed;\n";
    return {cs.name(), c, std::move(e.env)};
}

} // namespace spikeforge::cpu
