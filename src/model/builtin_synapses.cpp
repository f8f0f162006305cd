// Built-in postsynaptic, weight update and current source models (models.hpp). Definitions and
// parameter names follow GeNN's where GeNN has the model. Units: time [ms], voltage [mV],
// current [nA]; a weight g is in the unit its postsynaptic model expects (nA for ExpCurr and
// DeltaCurr, uS for ExpCond).
#include "spikeforge/errors.hpp"
#include "spikeforge/models.hpp"

#include "model/builtin_common.hpp"

#include <cmath>
#include <utility>

namespace spikeforge::models {

namespace {

using detail::Domain;
using detail::param;
using detail::var;

std::string tauDomain(const ParamValues& v, Precision) {
    return Domain(v).positive("tau").problem();
}

std::string stdpDomain(const ParamValues& v, Precision) {
    return Domain(v)
        .positive("tauPlus")
        .positive("tauMinus")
        .ordered("Wmin", "Wmax", false)
        .problem();
}

DerivedParamDecl expDecay(const char* model) {
    return {"expDecay", [model](const ParamValues& p, double dt) {
                return std::exp(-dt / param(p, "tau", model));
            }};
}

// ---- postsynaptic ----

PostsynapticModel makeExpCurr() {
    PostsynapticModel m;
    m.name = "ExpCurr";
    m.params = {"tau"};
    m.paramDomain = tauDomain;
    // init scales the input so that a unit weight injects a total charge of tau·1 whatever dt
    // is: the mean of the decaying exponential over the first step (as GeNN).
    m.derivedParams = {
        expDecay("ExpCurr"),
        {"init",
         [](const ParamValues& p, double dt) {
             const double tau = param(p, "tau", "ExpCurr");
             return tau * (1.0 - std::exp(-dt / tau)) / dt;
         }},
    };
    m.simCode = "injectCurrent(init * inSyn);\n"
                "inSyn *= expDecay;\n";
    return m;
}

PostsynapticModel makeExpCond() {
    PostsynapticModel m;
    m.name = "ExpCond";
    m.params = {"tau", "E"};
    m.paramDomain = tauDomain;
    m.derivedParams = {expDecay("ExpCond")};
    // conductance [uS] × driving force [mV] = current [nA]; the target neuron must have V
    m.simCode = "injectCurrent(inSyn * (E - V));\n"
                "inSyn *= expDecay;\n";
    return m;
}

PostsynapticModel makeDeltaCurr() {
    PostsynapticModel m;
    m.name = "DeltaCurr";
    m.simCode = "injectCurrent(inSyn);\n"
                "inSyn = 0.0;\n";
    return m;
}

// ---- weight update ----

// A function, not a global: the models may be built during other translation units' static
// initialisation.
std::vector<std::string> stdpParams() {
    return {"tauPlus", "tauMinus", "Aplus", "Aminus", "Wmin", "Wmax"};
}

WeightUpdateModel makeStaticPulse() {
    WeightUpdateModel m;
    m.name = "StaticPulse";
    m.vars = {var("g", "scalar", VarAccess::ReadOnly)};
    m.preSpikeSynCode = "addToPost(g);\n";
    return m;
}

// One weight for the whole group, as a parameter (GeNN's StaticPulseConstantWeight): no weight
// array is stored or read, which halves the memory traffic of spike delivery.
WeightUpdateModel makeStaticPulseConstantWeight() {
    WeightUpdateModel m;
    m.name = "StaticPulseConstantWeight";
    m.params = {"g"};
    m.preSpikeSynCode = "addToPost(g);\n";
    return m;
}

WeightUpdateModel makeStaticPulseDendriticDelay() {
    WeightUpdateModel m;
    m.name = "StaticPulseDendriticDelay";
    // d: dendritic delay in time steps, added to the group's axonal delay
    m.vars = {var("g", "scalar", VarAccess::ReadOnly), var("d", "uint8_t", VarAccess::ReadOnly)};
    m.preSpikeSynCode = "addToPostDelay(g, d);\n";
    return m;
}

// Additive STDP with symmetric nearest-spike pairing (Morrison, Diesmann & Gerstner 2008,
// Fig. 7B), read from the neurons' last spike times:
//  - at each presynaptic spike (time st_pre) the synapse first transmits g, then is depressed by
//    Aminus·exp(-(st_pre - st_post)/tauMinus), pairing it with the latest postsynaptic spike at or
//    before it; the weight is clipped at Wmin;
//  - at each postsynaptic spike (time st_post) it is potentiated by
//    Aplus·exp(-(st_post - st_pre)/tauPlus), pairing it with the latest presynaptic spike at or
//    before it; the weight is clipped at Wmax.
// So one postsynaptic spike may pair with several later presynaptic spikes (and vice versa):
// only the nearest preceding partner of each spike counts. Spikes of both neurons in the same
// step have equal times and count in both directions. A neuron that has not spiked yet has
// st = the precision's lowest value (or -inf), excluded by the `> -1.0e29` tests.
WeightUpdateModel makeSTDPNearest() {
    WeightUpdateModel m;
    m.name = "STDPNearest";
    m.params = stdpParams();
    m.paramDomain = stdpDomain;
    m.vars = {var("g")};
    m.preSpikeSynCode = "addToPost(g);\n"
                        "if (st_post > -1.0e29 && st_post <= st_pre) {\n"
                        "    g = fmax(Wmin, g - Aminus * exp(-(st_pre - st_post) / tauMinus));\n"
                        "}\n";
    m.postSpikeSynCode = "if (st_pre > -1.0e29 && st_pre <= st_post) {\n"
                         "    g = fmin(Wmax, g + Aplus * exp(-(st_post - st_pre) / tauPlus));\n"
                         "}\n";
    return m;
}

// Additive STDP with all-to-all pairing, through traces kept per neuron (not per synapse):
//   preTrace at time preTraceT  = sum over presynaptic spikes t_i <= preTraceT of
//                                 exp(-(preTraceT - t_i) / tauPlus)
//   postTrace at time postTraceT = sum over postsynaptic spikes t_j <= postTraceT of
//                                 exp(-(postTraceT - t_j) / tauMinus)
// preSpikeCode / postSpikeCode add each spike to its neuron's trace (decaying the trace lazily
// from the time of the previous spike). Then:
//  - at a presynaptic spike at st_pre, g transmits, then drops by Aminus·Σ_j exp(-(st_pre -
//    t_j)/tauMinus) over EVERY postsynaptic spike t_j already in postTrace, clipped at Wmin;
//  - at a postsynaptic spike at st_post, g rises by Aplus·Σ_i exp(-(st_post - t_i)/tauPlus) over
//    EVERY presynaptic spike t_i already in preTrace, clipped at Wmax.
// Each (pre, post) pair thus counts once for depression if the post spike came first and once
// for potentiation if the pre spike came first. With the neuron-level spike code running before
// the synapse code of the same spikes (GeNN's order), a pair in the same step counts both ways.
// Initial values: preTrace = postTrace = 0 and preTraceT = postTraceT = -1e30 (give them with
// preVarInits / postVarInits); with a zero trace the time only has to be finite or -inf.
WeightUpdateModel makeSTDPAllToAll() {
    WeightUpdateModel m;
    m.name = "STDPAllToAll";
    m.params = stdpParams();
    m.paramDomain = stdpDomain;
    m.vars = {var("g")};
    m.preVars = {var("preTrace"), var("preTraceT")};
    m.postVars = {var("postTrace"), var("postTraceT")};
    m.preSpikeCode = "preTrace = preTrace * exp(-(t - preTraceT) / tauPlus) + 1.0;\n"
                     "preTraceT = t;\n";
    m.postSpikeCode = "postTrace = postTrace * exp(-(t - postTraceT) / tauMinus) + 1.0;\n"
                      "postTraceT = t;\n";
    m.preSpikeSynCode =
        "addToPost(g);\n"
        "g = fmax(Wmin, g - Aminus * postTrace * exp(-(st_pre - postTraceT) / tauMinus));\n";
    m.postSpikeSynCode =
        "g = fmin(Wmax, g + Aplus * preTrace * exp(-(st_post - preTraceT) / tauPlus));\n";
    return m;
}

// ---- current sources ----

CurrentSourceModel makeDC() {
    CurrentSourceModel m;
    m.name = "DC";
    m.params = {"amp"};
    m.injectionCode = "injectCurrent(amp);\n";
    return m;
}

CurrentSourceModel makeGaussianNoise() {
    CurrentSourceModel m;
    m.name = "GaussianNoise";
    // a fresh normal draw every step (white in discrete time; scale sd with dt yourself)
    m.params = {"mean", "sd"};
    m.paramDomain = [](const ParamValues& v, Precision) {
        return Domain(v).nonNegative("sd").problem();
    };
    m.injectionCode = "injectCurrent(mean + sd * rand_normal());\n";
    return m;
}

template <typename T> using Factory = const T& (*)();

constexpr std::pair<const char*, Factory<PostsynapticModel>> kPostsynapticModels[] = {
    {"ExpCurr", &ExpCurr},
    {"ExpCond", &ExpCond},
    {"DeltaCurr", &DeltaCurr},
};

constexpr std::pair<const char*, Factory<WeightUpdateModel>> kWeightUpdateModels[] = {
    {"StaticPulse", &StaticPulse},
    {"StaticPulseConstantWeight", &StaticPulseConstantWeight},
    {"StaticPulseDendriticDelay", &StaticPulseDendriticDelay},
    {"STDPNearest", &STDPNearest},
    {"STDPAllToAll", &STDPAllToAll},
};

constexpr std::pair<const char*, Factory<CurrentSourceModel>> kCurrentSourceModels[] = {
    {"DC", &DC},
    {"GaussianNoise", &GaussianNoise},
};

template <typename T, std::size_t N>
const T* findIn(const std::pair<const char*, Factory<T>> (&table)[N], const std::string& name) {
    for (const auto& [n, factory] : table) {
        if (name == n) {
            return &factory();
        }
    }
    return nullptr;
}

template <typename T, std::size_t N>
std::vector<std::string> namesOf(const std::pair<const char*, Factory<T>> (&table)[N]) {
    std::vector<std::string> names;
    for (const auto& entry : table) {
        names.emplace_back(entry.first);
    }
    return names;
}

} // namespace

const PostsynapticModel& ExpCurr() {
    static const PostsynapticModel m = makeExpCurr();
    return m;
}

const PostsynapticModel& ExpCond() {
    static const PostsynapticModel m = makeExpCond();
    return m;
}

const PostsynapticModel& DeltaCurr() {
    static const PostsynapticModel m = makeDeltaCurr();
    return m;
}

const WeightUpdateModel& StaticPulse() {
    static const WeightUpdateModel m = makeStaticPulse();
    return m;
}

const WeightUpdateModel& StaticPulseConstantWeight() {
    static const WeightUpdateModel m = makeStaticPulseConstantWeight();
    return m;
}

const WeightUpdateModel& StaticPulseDendriticDelay() {
    static const WeightUpdateModel m = makeStaticPulseDendriticDelay();
    return m;
}

const WeightUpdateModel& STDPNearest() {
    static const WeightUpdateModel m = makeSTDPNearest();
    return m;
}

const WeightUpdateModel& STDPAllToAll() {
    static const WeightUpdateModel m = makeSTDPAllToAll();
    return m;
}

const CurrentSourceModel& DC() {
    static const CurrentSourceModel m = makeDC();
    return m;
}

const CurrentSourceModel& GaussianNoise() {
    static const CurrentSourceModel m = makeGaussianNoise();
    return m;
}

const PostsynapticModel* findPostsynapticModel(const std::string& name) {
    return findIn(kPostsynapticModels, name);
}

const WeightUpdateModel* findWeightUpdateModel(const std::string& name) {
    return findIn(kWeightUpdateModels, name);
}

const CurrentSourceModel* findCurrentSourceModel(const std::string& name) {
    return findIn(kCurrentSourceModels, name);
}

std::vector<std::string> postsynapticModelNames() {
    return namesOf(kPostsynapticModels);
}
std::vector<std::string> weightUpdateModelNames() {
    return namesOf(kWeightUpdateModels);
}
std::vector<std::string> currentSourceModelNames() {
    return namesOf(kCurrentSourceModels);
}

} // namespace spikeforge::models
