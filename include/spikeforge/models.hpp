#pragma once
// The built-in model library. Every entry is an ordinary snippet struct (snippets.hpp): copy one
// and edit its code to make a variant. Parameter names and units are documented in
// docs/models.md. Lookups by name serve the TOML front end.
#include "spikeforge/custom_update.hpp"
#include "spikeforge/snippets.hpp"

#include <optional>
#include <string>
#include <vector>

namespace spikeforge {
class Model;
}

namespace spikeforge::models {

// ---- neurons ----
const NeuronModel&
LIF(); // C [nF], TauM [ms], Vrest, Vreset, Vthresh [mV], Ioffset [nA], TauRefrac [ms]
const NeuronModel& Izhikevich(); // a, b, c, d; vars V [mV], U
const NeuronModel&
Poisson(); // rate [Hz]; var timeStepToSpike (exponential ISIs, as GeNN PoissonNew)
const NeuronModel& SpikeSourceArray(); // vars startSpike, endSpike; EGP spikeTimes [ms]
const NeuronModel& LeakyIntegrate();   // C, TauM, Vrest; var V; never spikes

// ---- postsynaptic ----
const PostsynapticModel& ExpCurr();   // tau [ms]
const PostsynapticModel& ExpCond();   // tau [ms], E [mV]; target must have V
const PostsynapticModel& DeltaCurr(); // none

// ---- weight update ----
const WeightUpdateModel& StaticPulse();               // var g
const WeightUpdateModel& StaticPulseConstantWeight(); // param g: one weight for the group
const WeightUpdateModel& StaticPulseDendriticDelay(); // vars g, d [steps]
const WeightUpdateModel& STDPNearest();  // tauPlus, tauMinus, Aplus, Aminus, Wmin, Wmax; var g
const WeightUpdateModel& STDPAllToAll(); // same parameters, trace based

// ---- current sources ----
const CurrentSourceModel& DC();            // amp [nA]
const CurrentSourceModel& GaussianNoise(); // mean, sd [nA]

// ---- custom updates ----
// refs gradient (ReadWrite, per batch), reducedGradient (ReduceBatchSum, shared): sums the
// batch's gradients into the shared one and zeroes them.
const CustomUpdateModel& BatchReduceAndZero();
// params beta1, beta2, epsilon, alpha (learning rate); vars m, v; refs gradient (ReadOnly),
// variable (ReadWrite). Bias corrections from the device-side run counter.
const CustomUpdateModel& Adam();
// Adam with a warm-up: also params warmupStart (> 0) and warmupFactor (>= 1); the rate of step t
// (its device-side run counter + 1) is min(alpha, warmupStart * warmupFactor^(t-1)).
const CustomUpdateModel& AdamWarmup();
const CustomUpdateModel& Transpose(); // ref variable; bind it with a transpose target
// Softmax of `input` over the population into `output` (both neuron-shaped, per batch element):
// adds custom updates <name>Max, <name>Sum and <name> to `updateGroup`, run in that order.
void addSoftmax(Model& model, const std::string& name, const std::string& updateGroup,
                const VarReference& input, const VarReference& output);

// Lookups by name (nullptr when unknown) and the lists of names, for "did you mean".
const NeuronModel* findNeuronModel(const std::string& name);
const PostsynapticModel* findPostsynapticModel(const std::string& name);
const WeightUpdateModel* findWeightUpdateModel(const std::string& name);
const CurrentSourceModel* findCurrentSourceModel(const std::string& name);
std::vector<std::string> neuronModelNames();
std::vector<std::string> postsynapticModelNames();
std::vector<std::string> weightUpdateModelNames();
std::vector<std::string> currentSourceModelNames();
const CustomUpdateModel* findCustomUpdateModel(const std::string& name); // the four above
std::vector<std::string> customUpdateModelNames();

} // namespace spikeforge::models

namespace spikeforge::init {

// ---- variable initialisers ----
VarInit Constant(double value);
VarInit Uniform(double min, double max);
VarInit Normal(double mean, double sd);
VarInit NormalClipped(double mean, double sd, double min, double max);
VarInit Exponential(double lambda); // rate; mean 1/lambda
VarInit Gamma(double a, double b);  // shape a, scale b
VarInit Binomial(double n, double p);

// ---- sparse connectivity initialisers ----
SparseConnectivityInit OneToOne();
SparseConnectivityInit FixedProbability(double prob);
SparseConnectivityInit FixedProbabilityNoAutapse(double prob);
SparseConnectivityInit FixedNumberPostWithReplacement(unsigned rowLength);
SparseConnectivityInit FixedNumberTotalWithReplacement(unsigned total);

// ---- Toeplitz (convolution) connectivity: parameters in model.hpp, ToeplitzConnectivityInit ----
ToeplitzConnectivityInit Conv2D(ParamValues params);
ToeplitzConnectivityInit AvgPoolConv2D(ParamValues params);
// The Toeplitz initialisers by name ("Conv2D", "AvgPoolConv2D") and their parameters.
struct ToeplitzParamNames {
    std::vector<std::string> required, optional;
};
ToeplitzParamNames toeplitzParamNames(ToeplitzKind kind);
const char* toeplitzInitName(ToeplitzKind kind);
std::optional<ToeplitzKind> findToeplitzInit(const std::string& name);
std::vector<std::string> toeplitzInitNames();

const InitSnippet* findVarInitSnippet(const std::string& name);
const SparseInitSnippet* findSparseInitSnippet(const std::string& name);
std::vector<std::string> varInitSnippetNames();
std::vector<std::string> sparseInitSnippetNames();

} // namespace spikeforge::init
