// Neuron update and neuron-group initialisation kernels for the CPU backend.
#include "backends/cpu/cpu_emit.hpp"
#include "codegen/arrays.hpp"

namespace spikeforge::cpu {

namespace {

// Load/store of a block of variables into locals named prefix+name.
struct VarBlock {
    std::string loads, stores;
};

VarBlock loadVars(Emitter& e, const std::vector<VarDecl>& vars, const std::string& owner,
                  const std::string& fieldPrefix, const std::string& localPrefix,
                  const std::string& nExpr, Subs& subs) {
    VarBlock b;
    for (const auto& v : vars) {
        const std::string type = codegen::resolveType(v.type, e.model.precision());
        const std::string arr = e.env.array(fieldPrefix + v.name, type, owner + "." + v.name);
        const std::string idx = neuronVarIndex(v.access, "id", nExpr);
        const std::string local = localPrefix + v.name;
        b.loads += type + " " + local + " = " + arr + "[" + idx + "];\n";
        if (!isReadOnly(v.access)) b.stores += arr + "[" + idx + "] = " + local + ";\n";
        subs[v.name] = local;
    }
    return b;
}

// One snippet run per neuron in its own scope: its variables loaded into locals, its parameters
// and EGPs bound under `fieldPrefix`, the code rendered (with `extra` substitutions), the
// variables stored back. The emitter's substitutions are restored afterwards.
struct SnippetBlock {
    std::string loads, code, stores;
};

SnippetBlock snippetBlock(Emitter& e, const SnippetBase& model, const std::vector<VarDecl>& vars,
                          const ParamValues& params, const std::set<std::string>& dynamic,
                          const std::string& owner, const std::string& localPrefix,
                          const std::string& fieldPrefix, const std::string& code,
                          const snippet::Context& ctx, const Subs& extra = {}) {
    const auto scanned = snippet::scan(code, ctx);
    Subs saved = e.subs;
    const auto v = loadVars(e, vars, owner, localPrefix + "v_", "l_" + localPrefix, "sfN", e.subs);
    e.bindParams(scanned, model, contexts::evaluateParams(model, params, e.model.dt()), dynamic,
                 owner, fieldPrefix + "p_");
    e.bindEGPs(scanned, model, owner, fieldPrefix + "e_");
    SnippetBlock b{v.loads, e.render(code, ctx, extra), v.stores};
    e.subs = saved;
    return b;
}

// Incoming synapse group k: accumulate its input (and dendritic delay ring) into Isyn.
std::string postsynapticBlock(Emitter& e, const SynapseGroup& sg, size_t k) {
    const std::string p = "ps" + std::to_string(k) + "_";
    const auto& ps = sg.ps();
    const auto b = snippetBlock(e, ps.model, ps.model.vars, ps.params, ps.dynamicParams, sg.name(),
                                p, p, ps.model.simCode, contexts::postsynapticContext(e.model, sg),
                                {{"inSyn", "l_" + p + "inSyn"}});
    const std::string inSyn = e.env.array(p + "inSyn", e.scalar(), sg.name() + ".inSyn");
    std::string s = "{ // input from " + sg.name() + "\n";
    s += e.scalar() + " l_" + p + "inSyn = " + inSyn + "[(size_t)batch * sfN + id];\n";
    if (codegen::usesDendriticDelay(e.model, sg)) {
        const std::string den = e.env.array(p + "denDelay", e.scalar(), sg.name() + ".denDelay");
        const std::string dd = e.env.number(p + "dd", "uint32_t", sg.maxDendriticDelaySteps());
        s += e.scalar() + "* sfDen = " + den + " + ((size_t)batch * " + dd +
             " + (size_t)(a->step % " + dd + ")) * sfN;\nl_" + p +
             "inSyn += sfDen[id]; sfDen[id] = 0;\n";
    }
    s += b.loads + b.code + b.stores;
    s += inSyn + "[(size_t)batch * sfN + id] = l_" + p + "inSyn;\n}\n";
    return s;
}

std::string currentSourceBlock(Emitter& e, const CurrentSource& cs, size_t k) {
    const std::string p = "cs" + std::to_string(k) + "_";
    const auto& bound = cs.bound();
    const auto b =
        snippetBlock(e, bound.model, bound.model.vars, bound.params, bound.dynamicParams, cs.name(),
                     p, p, bound.model.injectionCode, contexts::currentSourceContext(e.model, cs));
    return "{ // current source " + cs.name() + "\n" + b.loads + b.code + b.stores + "}\n";
}

// Weight-update pre (or post) variable code of synapse group k run by this neuron.
std::string wuNeuronBlock(Emitter& e, const SynapseGroup& sg, size_t k, bool pre,
                          const std::string& field) {
    const auto& wu = sg.wu();
    const std::string& code = field == "preSpikeCode"      ? wu.model.preSpikeCode
                              : field == "preDynamicsCode" ? wu.model.preDynamicsCode
                              : field == "postSpikeCode"   ? wu.model.postSpikeCode
                                                           : wu.model.postDynamicsCode;
    if (code.empty()) return "";
    const std::string p = std::string(pre ? "wpre" : "wpost") + std::to_string(k) + "_";
    const auto b = snippetBlock(e, wu.model, pre ? wu.model.preVars : wu.model.postVars, wu.params,
                                wu.dynamicParams, sg.name(), p, "wu_" + p, code,
                                contexts::wuNeuronContext(e.model, sg, pre, field));
    return "{ // " + sg.name() + "." + field + "\n" + b.loads + b.code + b.stores + "}\n";
}

} // namespace

codegen::EmittedGroup emitNeuronUpdate(const Model& m, const NeuronGroup& ng) {
    Emitter e{m, {}, {}};
    const auto& b = ng.bound();
    const auto& nm = b.model;
    const std::string S = e.scalar();
    const std::string N = e.env.number("numNeurons", "uint32_t", ng.size());
    const std::string D = e.env.number("numDelaySlots", "uint32_t", ng.numDelaySlots());
    const std::string spkCnt = e.env.array("spkCnt", "uint32_t", ng.name() + ".spkCnt");
    const std::string spk = e.env.array("spk", "uint32_t", ng.name() + ".spk");
    const std::string st = e.env.array("st", S, ng.name() + ".st");
    const std::string bits = e.env.array("spkBits", "uint32_t", ng.name() + ".spkBits");
    const std::string stream =
        e.env.number("stream", "uint32_t", codegen::streamId(ng.name(), "sim"));

    e.subs = {{"t", "sf_t"},  {"dt", e.lit(m.dt())},  {"Isyn", "sfIsyn"},
              {"st", "l_st"}, {"num_neurons", "sfN"}, {"injectCurrent", "sfIsyn += "}};
    const auto vars = loadVars(e, nm.vars, ng.name(), "v_", "l_", "sfN", e.subs);
    for (const char* f : {"simCode", "thresholdConditionCode", "resetCode"}) {
        const std::string& code = std::string(f) == "simCode"     ? nm.simCode
                                  : std::string(f) == "resetCode" ? nm.resetCode
                                                                  : nm.thresholdConditionCode;
        const auto scanned = snippet::scan(code, contexts::neuronContext(m, ng, f));
        e.bindParams(scanned, nm, contexts::evaluateParams(nm, b.params, m.dt()), b.dynamicParams,
                     ng.name(), "p_");
        e.bindEGPs(scanned, nm, ng.name(), "e_");
    }
    std::string inputs, dynamics, spikeCode;
    size_t k = 0, kPre = 0, kPost = 0;
    for (const auto& sg : m.synapseGroups()) {
        if (&sg->target() == &ng) {
            inputs += postsynapticBlock(e, *sg, k++);
            dynamics += wuNeuronBlock(e, *sg, kPost, false, "postDynamicsCode");
            spikeCode += wuNeuronBlock(e, *sg, kPost++, false, "postSpikeCode");
        }
        if (&sg->source() == &ng) {
            dynamics += wuNeuronBlock(e, *sg, kPre, true, "preDynamicsCode");
            spikeCode += wuNeuronBlock(e, *sg, kPre++, true, "preSpikeCode");
        }
    }
    k = 0;
    for (const auto& cs : m.currentSources())
        if (&cs->target() == &ng) inputs += currentSourceBlock(e, *cs, k++);

    const std::string sim = e.render(nm.simCode, contexts::neuronContext(m, ng, "simCode"));
    const std::string reset = e.render(nm.resetCode, contexts::neuronContext(m, ng, "resetCode"));
    std::string threshold = "false";
    if (!nm.thresholdConditionCode.empty())
        threshold =
            "(\n" + e.render(nm.thresholdConditionCode, contexts::thresholdContext(m, ng)) + ")";
    std::string perNeuron = vars.loads + inputs + dynamics + sim;
    // Every snippet of this kernel was rendered through `e`, which recorded whether one draws
    // random numbers; only then does each neuron seed a generator.
    const bool rng = e.usesRng;

    std::string c;
    c += "const uint32_t sfN = " + N + ";\nconst uint32_t sfWords = (sfN + 31u) / 32u;\n";
    c += "const uint32_t sfSlot = (uint32_t)(a->step % " + D + ");\n";
    c += "const " + S + " sf_t = (" + S + ")a->t; (void)sf_t;\n";
    // Small groups run serially: one step of a few thousand neurons takes microseconds, less
    // than a fork/join of threads costs on a busy machine.
    c += "#pragma omp parallel for collapse(2) schedule(static) num_threads(a->threads) if "
         "(a->threads > 1u && SF_BATCH * sfN >= 32768u)\n"
         "for (uint32_t batch = 0; batch < SF_BATCH; batch++)\n"
         "for (uint32_t sfW = 0; sfW < sfWords; sfW++) {\n"
         "uint32_t sfBits = 0;\n"
         "const uint32_t sfEnd = (sfW + 1u) * 32u < sfN ? (sfW + 1u) * 32u : sfN;\n"
         "for (uint32_t id = sfW * 32u; id < sfEnd; id++) {\n";
    c += S + " sfIsyn = 0; (void)sfIsyn;\n";
    c += S + " l_st = " + st + "[(size_t)batch * sfN + id];\n";
    if (rng)
        c += "sf_rng sfRng; sf_rng_init(&sfRng, a->seed, " + stream +
             ", id, batch, (sf_u32)a->step);\n";
    c += perNeuron;
    // Stores are unconditional and the spike bit is data, not control flow, so that a loop
    // without per-spike synapse code can be if-converted and vectorised.
    c += "const bool sfSpike = " + threshold + ";\n";
    c += "if (sfSpike) {\n" + reset + "l_st = sf_t;\n" + spikeCode + "}\n";
    c += "sfBits |= (uint32_t)sfSpike << (id & 31u);\n";
    c += st + "[(size_t)batch * sfN + id] = l_st;\n";
    c += vars.stores;
    c += "}\n" + bits + "[(size_t)batch * sfWords + sfW] = sfBits;\n}\n//SF_END_PARALLEL\n";
    // Compaction keeps spikes in neuron order whatever the thread count, so summation order
    // downstream (and hence the result) never depends on scheduling.
    c += "#pragma omp parallel for schedule(static) num_threads(a->threads) if (a->threads > 1u && "
         "SF_BATCH > 1u && SF_BATCH * sfN >= 32768u)\n"
         "for (uint32_t batch = 0; batch < SF_BATCH; batch++) {\n"
         "const uint32_t* sfB = " +
         bits +
         " + (size_t)batch * sfWords;\n"
         "uint32_t* sfSpk = " +
         spk + " + ((size_t)batch * " + D +
         " + sfSlot) * sfN;\n"
         "uint32_t sfCnt = 0;\n"
         "for (uint32_t w = 0; w < sfWords; w++) {\n"
         "uint32_t x = sfB[w];\n"
         "while (x) { sfSpk[sfCnt++] = w * 32u + (uint32_t)__builtin_ctz(x); x &= x - 1u; }\n}\n" +
         spkCnt + "[(size_t)batch * " + D + " + sfSlot] = sfCnt;\n";
    if (ng.spikeRecording()) {
        const std::string rec = e.env.array("recordSpk", "uint32_t", ng.name() + ".recordSpk");
        c += "if (" + rec +
             " && a->step >= a->recordStart && a->step - a->recordStart < "
             "a->recordSteps)\n"
             "memcpy(" +
             rec +
             " + ((size_t)(a->step - a->recordStart) * SF_BATCH + batch) * "
             "sfWords, sfB, sfWords * sizeof(uint32_t));\n";
    }
    c += "}\n//SF_END_PARALLEL\n";
    return {ng.name(), c, std::move(e.env)};
}

codegen::EmittedGroup emitNeuronInit(const Model& m, const NeuronGroup& ng) {
    Emitter e{m, {}, {}};
    const std::string N = e.env.number("numNeurons", "uint32_t", ng.size());
    std::string c;
    const std::string st = e.env.array("st", e.scalar(), ng.name() + ".st");
    c += "for (size_t i = 0; i < (size_t)SF_BATCH * " + N + "; i++) " + st + "[i] = SF_TIME_MIN;\n";
    for (const auto& v : ng.model().vars) {
        const std::string count = hasElementDim(v.access) ? N : "1u";
        c += emitVarInit(e, ng.name(), v, ng.bound().varInits.at(v.name), count,
                         hasBatchDim(v.access));
    }
    return {ng.name(), c, std::move(e.env)};
}

} // namespace spikeforge::cpu
