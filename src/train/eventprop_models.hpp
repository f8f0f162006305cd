#pragma once
// The snippet models of EventProp training (docs/training.md, "How EventProp runs"). Each
// neuron model runs the forward pass for steps 0 … T-1 of an example and the backward pass for
// steps T … 2T-1 (backward step T+b mirrors forward step T-1-b), keeping its own step counter
// `Step` (trial state, rewound by Simulation::resetState). A "spike" in the backward half is a
// backward event: the replay of a forward spike, which the synapses turn into gradient
// accumulation and adjoint propagation (addToPre). With backward = false every model is its
// forward half alone (InferenceCompiler): no adjoints, no spike buffers, no gradients.
#include "spikeforge/custom_update.hpp"
#include "spikeforge/snippets.hpp"
#include "spikeforge/train/network.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace spikeforge::train::detail {

// Spike input from the device dataset. Params T, numChannels (of the dataset), delayStep [ms]
// (neuron id plays channel id % numChannels delayed by (id / numChannels) delaySteps); var
// Shift (the example's channel shift, set with Example); EGPs evTimes (float [ms], events
// sorted by example, channel, time), rowOffsets (uint32, example*(numChannels+1)+channel ->
// first event), perm (int: the example of each trial slot, -1 = none), labels (int, per example,
// read by the loss). Var Example is set by
// selectExampleModel before each trial.
NeuronModel inputModel(bool backward = true);
// A kind of target among a spiking population's outgoing connections: the target's membrane and
// synaptic time constants [ms] and whether it integrates Delta input. A spike reaches targets of
// kind i with delivery coefficients (vars CA<i>, CB<i>; backward also DA<i>, DB<i>) that the
// source computes from its crossing time within the step (eventprop_lif.cpp).
struct TargetKind {
    double tauM = 20.0;
    double tauS = 5.0;
    bool delta = false;
    bool operator==(const TargetKind&) const = default;
};
// LIF with an exponential current synapse, spikes recorded (step, crossing fraction, 1/slope)
// in rings of `ringSlots` per neuron. Params T, tauM, tauS, vThresh, slots (= ringSlots),
// regStrength, regTarget, batchSize, and tgtTauM<i>, tgtTauS<i> for each target kind. A spike
// that does not fit in the ring is counted in Dropped (trial state).
// With firstSpikeReadout also param tau0 and vars TFirst [ms], Logit, Prob, DLdt, Example.
NeuronModel lifModel(uint32_t ringSlots, const std::vector<TargetKind>& targets,
                     bool firstSpikeReadout = false, bool backward = true);
// The names of the delivery-coefficient vars lifModel declares for `targets`.
std::vector<std::string> targetVarNames(const std::vector<TargetKind>& targets, bool backward);
// Leaky integrator readout. Params T, tauM, tauS. Var Sum is the readout R, Grad is dL/dR
// (written by the loss update between the passes), Prob the softmax of Sum.
// With deltaInput the input jumps V (V <- alpha (V + Isyn)) and LambdaI holds dL/d(input).
// `steps` (T) sizes the Var readout's history of V.
NeuronModel readoutModel(Readout readout, uint32_t steps, bool backward = true,
                         bool deltaInput = false);
// Exponential current synapse that injects only in the forward half. Params T, tauS.
PostsynapticModel expCurrModel();
// Weights g (shared by the batch), per-batch Gradient, shared ReducedGradient. Param T.
// A spiking source (a LIF population) delivers with the coefficients of its target kind
// `targetKind` and sends the adjoint term back to the source (addToPre); spike inputs deliver g
// at the step boundary and need nothing back. With an exponential target a spiking source uses
// addToPostDelay(·, 1): the synapse group needs 2 dendritic delay slots.
// deltaTarget: the target integrates Delta input (its LambdaI is dL/d(input)).
WeightUpdateModel synapseModel(bool spikingSource, size_t targetKind, bool backward = true,
                               bool deltaTarget = false);
// Delta synapse: the input of a step goes straight to the target's V. Param T.
PostsynapticModel deltaCurrModel();

// spikeSum (ReduceBatchSum) = count + dropped: the batch's spikes of each LIF neuron in the
// forward pass, for the spike-count regulariser.
CustomUpdateModel spikeSumModel();
// count += spikeSum: a LIF neuron's spikes over the batches, until the host reads and clears it.
CustomUpdateModel epochSpikesModel();
// total += dropped: spikes that did not fit in the ring, accumulated until the host reads them.
CustomUpdateModel droppedModel();
// Example = perm[(updateCount - trialBase) * num_batch + batch]. Param trialBase (dynamic).
// withShift (the input population's): also ref shift, params shiftMax and shiftSeed (dynamic):
// the trial's channel shift, uniform in [-shiftMax, shiftMax].
CustomUpdateModel selectExampleModel(bool withShift = false);
// Cross-entropy on the softmax of the readout: Grad = prob - onehot(label), and per batch
// element the loss and the count of correct answers accumulated (vars lossSum, correct).
CustomUpdateModel crossEntropyModel();
// Mean squared error of a Var readout against the one-hot label: writes target, accumulates
// lossSum and correct (largest Sum). Param T.
CustomUpdateModel meanSquaredErrorModel();
// atMax (ReduceNeuronSum): how many outputs share the largest value. An example counts as correct
// only when its label's output is the one largest (a tie is not an answer).
CustomUpdateModel tiesModel();
// The first-spike-time loss (FirstSpikeReadoutParams): dldt = dL/dTFirst, and lossSum, correct
// as crossEntropyModel. Params tau0, tau1, alphaReg.
CustomUpdateModel firstSpikeLossModel();

// After the batch reduction, before Adam: a reduced gradient or weight that is NaN or Inf is
// never applied (the gradient is set to 0) and the first batch it appeared in is latched in
// `bad` (updateCount + 1; 0 = none) until the host reads and clears it.
CustomUpdateModel finiteCheckModel();

// Derived parameters of the exact per-step solution: alpha = exp(-dt/tauM), beta =
// exp(-dt/tauS), rho = V at the end of a step started at V = 0 with unit current.
double alphaOf(double tauM, double dt);
double betaOf(double tauS, double dt);
double rhoOf(double tauM, double tauS, double dt);

} // namespace spikeforge::train::detail
