// Built-in neuron models (models.hpp). Definitions and parameter names follow GeNN's
// NeuronModels where GeNN has the model. Units: time [ms], voltage [mV], current [nA],
// capacitance [nF], so that resistance = TauM / C is in [MOhm] and current × resistance in [mV].
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

// ExpTC = exp(-dt / TauM) and Rmembrane = TauM / C [MOhm], shared by LIF and LeakyIntegrate.
std::vector<DerivedParamDecl> membraneDerivedParams(const char* model) {
    auto expTC = [model](const ParamValues& p, double dt) {
        return std::exp(-dt / param(p, "TauM", model));
    };
    auto rMembrane = [model](const ParamValues& p, double) {
        return param(p, "TauM", model) / param(p, "C", model);
    };
    return {{"ExpTC", expTC}, {"Rmembrane", rMembrane}};
}

NeuronModel makeLIF() {
    NeuronModel m;
    m.name = "LIF";
    m.params = {"C", "TauM", "Vrest", "Vreset", "Vthresh", "Ioffset", "TauRefrac"};
    m.derivedParams = membraneDerivedParams("LIF");
    m.paramDomain = [](const ParamValues& v, Precision) {
        return Domain(v).positive("C").positive("TauM").nonNegative("TauRefrac").problem();
    };
    m.vars = {var("V"), var("RefracTime")};
    // Exact integration of C dV/dt = (Vrest - V) / R + I over one step with I held constant.
    // RefracTime counts down by dt; the neuron leaves the refractory period once at most half a
    // step remains, so TauRefrac is TauRefrac/dt steps exactly even though, e.g., 5 - 50 x 0.1
    // is not 0 in binary (a `<= 0` test gave 51 steps there), and rounds to the nearest step
    // otherwise.
    m.simCode = "if (RefracTime <= 0.5 * dt) {\n"
                "    const scalar alpha = (Isyn + Ioffset) * Rmembrane + Vrest;\n"
                "    V = alpha - ExpTC * (alpha - V);\n"
                "} else {\n"
                "    RefracTime -= dt;\n"
                "}\n";
    m.thresholdConditionCode = "RefracTime <= 0.5 * dt && V >= Vthresh";
    m.resetCode = "V = Vreset;\n"
                  "RefracTime = TauRefrac;\n";
    return m;
}

NeuronModel makeIzhikevich() {
    NeuronModel m;
    m.name = "Izhikevich";
    m.params = {"a", "b", "c", "d"};
    m.vars = {var("V"), var("U")};
    // Izhikevich (2003), integrated as in GeNN: V in two half steps for stability, then U with
    // the new V; V is capped at 30 mV (the spike peak) so recorded traces stay readable.
    m.simCode = "V += 0.5 * (0.04 * V * V + 5.0 * V + 140.0 - U + Isyn) * dt;\n"
                "V += 0.5 * (0.04 * V * V + 5.0 * V + 140.0 - U + Isyn) * dt;\n"
                "U += a * (b * V - U) * dt;\n"
                "if (V > 30.0) {\n"
                "    V = 30.0;\n"
                "}\n";
    m.thresholdConditionCode = "V >= 29.99";
    m.resetCode = "V = c;\n"
                  "U += d;\n";
    return m;
}

NeuronModel makePoisson() {
    NeuronModel m;
    m.name = "Poisson";
    m.params = {"rate"};
    m.paramDomain = [](const ParamValues& v, Precision) {
        return Domain(v).nonNegative("rate").problem();
    };
    // Mean inter-spike interval in time steps: 1000 / (rate [Hz] · dt [ms]). A rate <= 0 gives 0,
    // which the code reads as "never spike" (an infinite value could not be folded into code).
    m.derivedParams = {
        {"isiTimesteps",
         [](const ParamValues& p, double dt) {
             const double rate = param(p, "rate", "Poisson");
             return rate > 0.0 ? 1000.0 / (rate * dt) : 0.0;
         }},
    };
    // timeStepToSpike: steps left until the next spike; initialise it to 0 (the first interval
    // is then drawn in the first step). Intervals are exponential, as GeNN's PoissonNew, and the
    // fractional remainder carries over, so the long-run rate is exact up to one spike per step.
    m.vars = {var("timeStepToSpike")};
    m.simCode = "if (isiTimesteps > 0.0) {\n"
                "    if (timeStepToSpike <= 0.0) {\n"
                "        timeStepToSpike += isiTimesteps * rand_exponential();\n"
                "    }\n"
                "    timeStepToSpike -= 1.0;\n"
                "}\n";
    m.thresholdConditionCode = "isiTimesteps > 0.0 && timeStepToSpike <= 0.0";
    return m;
}

NeuronModel makeSpikeSourceArray() {
    NeuronModel m;
    m.name = "SpikeSourceArray";
    // Neuron i emits spikeTimes[startSpike .. endSpike) (sorted, [ms]); startSpike advances at
    // each spike, so both are ReadWrite (one copy per batch element). At most one spike per step:
    // several times within one step come out in successive steps.
    m.vars = {var("startSpike", "unsigned int"), var("endSpike", "unsigned int")};
    m.egps = {EGPDecl{"spikeTimes", "scalar"}};
    m.thresholdConditionCode = "startSpike != endSpike && t >= spikeTimes[startSpike]";
    m.resetCode = "startSpike++;\n";
    return m;
}

NeuronModel makeLeakyIntegrate() {
    NeuronModel m;
    m.name = "LeakyIntegrate";
    m.params = {"C", "TauM", "Vrest"};
    m.derivedParams = membraneDerivedParams("LeakyIntegrate");
    m.paramDomain = [](const ParamValues& v, Precision) {
        return Domain(v).positive("C").positive("TauM").problem();
    };
    m.vars = {var("V")};
    m.simCode = "const scalar alpha = Isyn * Rmembrane + Vrest;\n"
                "V = alpha - ExpTC * (alpha - V);\n";
    return m; // no threshold: never spikes (a readout)
}

using NeuronFactory = const NeuronModel& (*)();

constexpr std::pair<const char*, NeuronFactory> kNeuronModels[] = {
    {"LIF", &LIF},
    {"Izhikevich", &Izhikevich},
    {"Poisson", &Poisson},
    {"SpikeSourceArray", &SpikeSourceArray},
    {"LeakyIntegrate", &LeakyIntegrate},
};

} // namespace

const NeuronModel& LIF() {
    static const NeuronModel m = makeLIF();
    return m;
}

const NeuronModel& Izhikevich() {
    static const NeuronModel m = makeIzhikevich();
    return m;
}

const NeuronModel& Poisson() {
    static const NeuronModel m = makePoisson();
    return m;
}

const NeuronModel& SpikeSourceArray() {
    static const NeuronModel m = makeSpikeSourceArray();
    return m;
}

const NeuronModel& LeakyIntegrate() {
    static const NeuronModel m = makeLeakyIntegrate();
    return m;
}

const NeuronModel* findNeuronModel(const std::string& name) {
    for (const auto& [n, factory] : kNeuronModels) {
        if (name == n) {
            return &factory();
        }
    }
    return nullptr;
}

std::vector<std::string> neuronModelNames() {
    std::vector<std::string> names;
    for (const auto& entry : kNeuronModels) {
        names.emplace_back(entry.first);
    }
    return names;
}

} // namespace spikeforge::models
