// EventProp snippet models (eventprop_models.hpp) other than the spiking neuron and its
// synapses (eventprop_lif.cpp). The discrete system and its adjoint are derived in
// docs/training.md ("How EventProp runs"); per readout neuron and step:
//   forward  (u = Isyn, the current at the start of the step after this step's input)
//     V <- alpha V + rho u,   I <- beta u              (exact solution over one step)
//   backward (the transpose of that recursion, index k = 2T-1-Step)
//     lambdaV <- alpha lambdaV + dl/dV_k,  lambdaI <- beta lambdaI + rho lambdaV
#include "train/eventprop_models.hpp"

#include "spikeforge/errors.hpp"

#include <cmath>
#include <string>

namespace spikeforge::train::detail {

namespace {

using CA = CustomUpdateVarAccess;

double param(const ParamValues& p, const char* name) {
    return p.at(name);
}

// alpha, beta and rho from the model's tauM and tauS parameters.
std::vector<DerivedParamDecl> stepFactors() {
    return {
        {"alpha", [](const ParamValues& p, double dt) { return alphaOf(param(p, "tauM"), dt); }},
        {"beta", [](const ParamValues& p, double dt) { return betaOf(param(p, "tauS"), dt); }},
        {"rho", [](const ParamValues& p, double dt) {
             return rhoOf(param(p, "tauM"), param(p, "tauS"), dt);
         }}};
}

// The readout weight of step `k` (an expression in k) for R = sum_k c_k V_k.
std::string readoutWeight(Readout r, const std::string& k) {
    switch (r) {
    case Readout::SumVar:
        return "1.0";
    case Readout::AvgVar:
        return "(1.0 / T)";
    case Readout::AvgVarExpWeight:
        return "(exp(-(scalar)(" + k + " + 1) / T) / T)";
    case Readout::MaxVar:
    case Readout::Var:
        break;
    }
    throw InternalError("readoutWeight of a readout that is not a weighted sum");
}

} // namespace

double alphaOf(double tauM, double dt) {
    return std::exp(-dt / tauM);
}

double betaOf(double tauS, double dt) {
    return std::exp(-dt / tauS);
}

double rhoOf(double tauM, double tauS, double dt) {
    // V(dt) for tauM dV/dt = -V + I, V(0) = 0, I(s) = exp(-s/tauS): tauS (beta - alpha) /
    // (tauS - tauM), whose limit for tauS = tauM is (dt/tau) exp(-dt/tau).
    if (std::fabs(tauS - tauM) <= 1e-9 * tauM) return dt / tauM * std::exp(-dt / tauM);
    return tauS * (betaOf(tauS, dt) - alphaOf(tauM, dt)) / (tauS - tauM);
}

NeuronModel inputModel(bool backward) {
    NeuronModel m;
    m.name = backward ? "EventPropInput" : "EventPropInputForward";
    m.params = {"T", "numChannels", "delayStep"};
    m.egps = {
        {"evTimes", "float"}, {"rowOffsets", "unsigned int"}, {"perm", "int"}, {"labels", "int"}};
    m.vars = {{"Example", "int"},      {"Start", "unsigned int"}, {"Cursor", "unsigned int"},
              {"End", "unsigned int"}, {"Step", "int"},           {"NextStep", "int"},
              {"Fired", "int"},        {"Shift", "int"}};
    // Neuron id plays channel id % numChannels, moved by the example's channel shift (Shift,
    // set with Example: an augmentation), delayed by (id / numChannels) * delayStep [ms] (the
    // delay line's copies). Forward: spike in the step an event falls in (several events in one
    // step: one spike). Backward step for index k: replay the spike of forward step k-1,
    // walking the events back. NextStep caches the step of the event at the cursor (forward) or
    // before it (backward), so a step without an event costs one comparison: most of the
    // population is silent in most steps. Fired is the last step with a spike.
    const std::string bin = "(int)floor((evTimes[Cursor] + (scalar)(id / (uint32_t)numChannels) "
                            "* delayStep) / dt)";
    const std::string binBefore = "(int)floor((evTimes[Cursor - 1u] + (scalar)(id / "
                                  "(uint32_t)numChannels) * delayStep) / dt)";
    m.simCode = "const int nT = (int)T;\n"
                "if (Step == 0) {\n"
                "    const int channel = (int)(id % (uint32_t)numChannels) - Shift;\n"
                "    if (Example >= 0 && channel >= 0 && channel < (int)numChannels) {\n"
                "        const uint32_t row = (uint32_t)Example * ((uint32_t)numChannels + 1u) + "
                "(uint32_t)channel;\n"
                "        Start = rowOffsets[row];\n"
                "        End = rowOffsets[row + 1u];\n"
                "    } else {\n"
                "        Start = 0u;\n"
                "        End = 0u;\n"
                "    }\n"
                "    Cursor = Start;\n"
                "    NextStep = Cursor < End ? " +
                bin +
                " : 2147483647;\n"
                "}\n"
                "if (Step < nT) {\n"
                "    if (NextStep <= Step) {\n"
                "        Fired = Step;\n"
                "        while (Cursor < End && " +
                bin +
                " <= Step) {\n"
                "            Cursor = Cursor + 1u;\n"
                "        }\n"
                "        NextStep = Cursor < End ? " +
                bin +
                " : 2147483647;\n"
                "    }\n"
                "}" +
                (backward ? " else {\n"
                            "    const int k = 2 * nT - 1 - Step;\n"
                            "    if (Step == nT) {\n"
                            "        NextStep = Cursor > Start ? " +
                                binBefore +
                                " : -1;\n"
                                "    }\n"
                                "    while (Cursor > Start && NextStep >= k) {\n"
                                "        Cursor = Cursor - 1u;\n"
                                "        NextStep = Cursor > Start ? " +
                                binBefore +
                                " : -1;\n"
                                "    }\n"
                                "    if (NextStep == k - 1) {\n"
                                "        Fired = Step;\n"
                                "    }\n"
                                "}\n"
                          : std::string("\n")) +
                "Step = Step + 1;\n";
    m.thresholdConditionCode = "Fired + 1 == Step";
    return m;
}

NeuronModel readoutModel(Readout readout, uint32_t steps, bool backward, bool deltaInput) {
    NeuronModel m;
    m.name = std::string("EventPropReadout") + readoutName(readout) + (deltaInput ? "Delta" : "") +
             (backward ? "" : "Forward");
    m.params = {"T", "tauM", "tauS"};
    m.derivedParams = stepFactors();
    // LambdaINext: LambdaI of the step after (dL/du one step later), for synapses that deliver
    // a spike in two arrivals (eventprop_lif.cpp). LossDensity: dl/dV per ms at the step the
    // backward pass is at, which a Delta synapse's adjoint term needs (moving a jump in V moves
    // where the loss sees it).
    m.vars = {{"V"},          {"Sum"},  {"LambdaV"},     {"LambdaI"},        {"LambdaINext"},
              {"Grad"},       {"Prob"}, {"Step", "int"}, {"Example", "int"}, {"MaxStep", "int"},
              {"LossDensity"}};
    // MaxVar: R = V at the step where V was largest (the first such step); dR/dV_k is 1 there.
    // Var (mean squared error): every step's V is kept (VHist) for the backward pass, with
    // Sum and SumSq for the loss; Target is the one-hot label the loss update writes.
    std::string forwardReadout, backwardSource;
    switch (readout) {
    case Readout::MaxVar:
        forwardReadout = "    if (V > Sum) {\n"
                         "        Sum = V;\n"
                         "        MaxStep = Step;\n"
                         "    }\n";
        backwardSource = "(k == MaxStep ? Grad : 0.0)";
        break;
    case Readout::Var:
        m.vars.insert(m.vars.end(), {{"SumSq"}, {"Target"}});
        if (backward) m.arrays = {{"VHist", "scalar", steps}};
        forwardReadout = std::string("    Sum = Sum + V;\n"
                                     "    SumSq = SumSq + V * V;\n") +
                         (backward ? "    VHist[Step] = V;\n" : "");
        backwardSource = "(VHist[k] - Target) / T";
        break;
    case Readout::SumVar:
    case Readout::AvgVar:
    case Readout::AvgVarExpWeight:
        forwardReadout = "    Sum = Sum + " + readoutWeight(readout, "Step") + " * V;\n";
        backwardSource = "Grad * " + readoutWeight(readout, "k");
        break;
    }
    const std::string forwardVoltage =
        deltaInput ? "    V = alpha * (V + Isyn);\n" : "    V = alpha * V + rho * Isyn;\n";
    const std::string backwardCurrent = deltaInput
                                            ? "    LambdaI = alpha * LambdaV;\n"
                                            : "    LambdaI = beta * LambdaI + rho * LambdaV;\n";
    std::string code = "const int nT = (int)T;\n"
                       "if (Step < nT) {\n" +
                       forwardVoltage + forwardReadout + "}";
    if (backward)
        code += " else {\n"
                "    const int k = 2 * nT - 1 - Step;\n"
                "    LambdaINext = LambdaI;\n"
                "    LossDensity = " +
                backwardSource +
                " / dt;\n"
                "    LambdaV = alpha * LambdaV + LossDensity * dt;\n" +
                backwardCurrent + "}\n";
    else
        code += "\n";
    m.simCode = code + "Step = Step + 1;\n";
    return m;
}

PostsynapticModel expCurrModel() {
    PostsynapticModel m;
    m.name = "EventPropExpCurr";
    m.params = {"T", "tauS"};
    m.derivedParams = {
        {"beta", [](const ParamValues& p, double dt) { return betaOf(param(p, "tauS"), dt); }}};
    m.simCode = "if (Step < (int)T) {\n"
                "    injectCurrent(inSyn);\n"
                "}\n"
                "inSyn = inSyn * beta;\n";
    return m;
}

PostsynapticModel deltaCurrModel() {
    PostsynapticModel m;
    m.name = "EventPropDeltaCurr";
    m.params = {"T"};
    m.simCode = "if (Step < (int)T) {\n"
                "    injectCurrent(inSyn);\n"
                "}\n"
                "inSyn = 0.0;\n";
    return m;
}

CustomUpdateModel selectExampleModel(bool withShift) {
    CustomUpdateModel m;
    m.name = withShift ? "EventPropSelectInput" : "EventPropSelectExample";
    m.params = {"trialBase"};
    m.varRefs = {{"example", "int", CA::ReadWrite}};
    m.egpRefs = {{"perm", "int"}};
    m.updateCode = "const uint32_t slot = updateCount - (uint32_t)trialBase;\n"
                   "example = perm[slot * num_batch + batch];\n";
    if (!withShift) return m;
    // The channel shift of this trial, uniform in [-shiftMax, shiftMax]: a hash of the trial's
    // place in the call and shiftSeed (the same for every neuron of a batch element; fit() sets
    // the seed from the epoch, so a resumed run repeats the shifts).
    m.params.insert(m.params.end(), {"shiftMax", "shiftSeed"});
    m.varRefs.push_back({"shift", "int", CA::ReadWrite});
    m.updateCode += "uint32_t h = (slot * num_batch + batch) ^ (uint32_t)shiftSeed;\n"
                    "h = (h ^ (h >> 16)) * 73244475u;\n"
                    "h = (h ^ (h >> 16)) * 73244475u;\n"
                    "h = h ^ (h >> 16);\n"
                    "const int most = (int)shiftMax;\n"
                    "shift = most > 0 ? (int)(h % (uint32_t)(2 * most + 1)) - most : 0;\n";
    return m;
}

CustomUpdateModel spikeSumModel() {
    CustomUpdateModel m;
    m.name = "EventPropSpikeSum";
    m.varRefs = {{"count", "int", CA::ReadOnly},
                 {"dropped", "int", CA::ReadOnly},
                 {"spikeSum", "scalar", CA::ReduceBatchSum}};
    m.updateCode = "spikeSum = (scalar)(count + dropped);\n";
    return m;
}

CustomUpdateModel epochSpikesModel() {
    CustomUpdateModel m;
    m.name = "EventPropEpochSpikes";
    m.vars = {{"count", "scalar", CA::ReadWrite}};
    m.varRefs = {{"spikeSum", "scalar", CA::ReadOnly}};
    m.updateCode = "count = count + spikeSum;\n";
    return m;
}

CustomUpdateModel droppedModel() {
    CustomUpdateModel m;
    m.name = "EventPropDropped";
    m.vars = {{"total", "int", CA::ReadWrite}};
    m.varRefs = {{"dropped", "int", CA::ReadOnly}};
    m.updateCode = "total = total + dropped;\n";
    return m;
}

CustomUpdateModel tiesModel() {
    CustomUpdateModel m;
    m.name = "EventPropTies";
    m.vars = {{"atMax", "scalar", CA::ReduceNeuronSum}};
    m.varRefs = {{"output", "scalar", CA::ReadOnly},
                 {"maxValue", "scalar", CA::ReadOnlySharedNeuron}};
    m.updateCode = "atMax = output >= maxValue ? 1.0 : 0.0;\n";
    return m;
}

CustomUpdateModel firstSpikeLossModel() {
    CustomUpdateModel m;
    m.name = "EventPropFirstSpikeLoss";
    m.params = {"tau0", "tau1", "alphaReg", "silentPush", "vThresh"};
    m.vars = {{"lossSum", "scalar", CA::ReadWrite}, {"correct", "int", CA::ReadWrite}};
    m.varRefs = {{"logit", "scalar", CA::ReadOnly},
                 {"maxLogit", "scalar", CA::ReadOnlySharedNeuron},
                 {"atMax", "scalar", CA::ReadOnlySharedNeuron},
                 {"prob", "scalar", CA::ReadOnly},
                 {"sumExp", "scalar", CA::ReadOnlySharedNeuron},
                 {"tFirst", "scalar", CA::ReadOnly},
                 {"maxV", "scalar", CA::ReadOnly},
                 {"example", "int", CA::ReadOnly},
                 {"dldt", "scalar", CA::ReadWrite},
                 {"silentGrad", "scalar", CA::ReadWrite}};
    m.egpRefs = {{"labels", "int"}};
    // dL/dt_k = (onehot_k - p_k) / tau0, plus alpha/tau1 exp(t_k/tau1) for the label; nothing
    // for an output that did not spike (it is not in the softmax: p_k = 0). A label output that
    // did not spike has no spike time to move: its loss is silentPush * (vThresh - max V), whose
    // gradient pushes its largest voltage up (silentGrad), instead of the cross-entropy.
    m.updateCode = "const bool spiked = tFirst < 1e29;\n"
                   "dldt = 0.0;\n"
                   "silentGrad = 0.0;\n"
                   "if (example >= 0) {\n"
                   "    const bool isLabel = (int)id == labels[example];\n"
                   "    if (spiked) {\n"
                   "        dldt = ((isLabel ? 1.0 : 0.0) - prob) / tau0;\n"
                   "        if (isLabel) {\n"
                   "            dldt = dldt + alphaReg / tau1 * exp(tFirst / tau1);\n"
                   "        }\n"
                   "    }\n"
                   "    if (isLabel && spiked) {\n"
                   "        lossSum = lossSum + log(sumExp) - (logit - maxLogit) +\n"
                   "                  alphaReg * (exp(tFirst / tau1) - 1.0);\n"
                   "        if (logit >= maxLogit && atMax < 1.5) {\n"
                   "            correct = correct + 1;\n"
                   "        }\n"
                   "    } else if (isLabel) {\n"
                   "        lossSum = lossSum + silentPush * (vThresh - maxV);\n"
                   "        silentGrad = -silentPush;\n"
                   "    }\n"
                   "}\n";
    return m;
}

CustomUpdateModel finiteCheckModel() {
    CustomUpdateModel m;
    m.name = "EventPropFiniteCheck";
    m.vars = {{"bad", "int", CA::ReadWrite}};
    m.varRefs = {{"gradient", "scalar", CA::ReadWrite}, {"weight", "scalar", CA::ReadOnly}};
    m.updateCode = "if (isnan(gradient) || isinf(gradient) || isnan(weight) || isinf(weight)) {\n"
                   "    if (bad == 0) {\n"
                   "        bad = (int)updateCount + 1;\n"
                   "    }\n"
                   "    gradient = 0.0;\n"
                   "}\n";
    return m;
}

CustomUpdateModel meanSquaredErrorModel() {
    CustomUpdateModel m;
    m.name = "EventPropMeanSquaredError";
    m.params = {"T"};
    m.vars = {{"lossSum", "scalar", CA::ReadWrite}, {"correct", "int", CA::ReadWrite}};
    m.varRefs = {{"sum", "scalar", CA::ReadOnly},
                 {"sumSq", "scalar", CA::ReadOnly},
                 {"maxSum", "scalar", CA::ReadOnlySharedNeuron},
                 {"atMax", "scalar", CA::ReadOnlySharedNeuron},
                 {"example", "int", CA::ReadOnly},
                 {"target", "scalar", CA::ReadWrite}};
    m.egpRefs = {{"labels", "int"}};
    // sum_t (V - y)^2 = SumSq - 2 y Sum + T y^2, over 2T.
    m.updateCode = "target = 0.0;\n"
                   "if (example >= 0) {\n"
                   "    const bool isLabel = (int)id == labels[example];\n"
                   "    target = isLabel ? 1.0 : 0.0;\n"
                   "    lossSum = lossSum + (sumSq - 2.0 * target * sum + T * target * target) / "
                   "(2.0 * T);\n"
                   "    if (isLabel && sum >= maxSum && atMax < 1.5) {\n"
                   "        correct = correct + 1;\n"
                   "    }\n"
                   "}\n";
    return m;
}

CustomUpdateModel crossEntropyModel() {
    CustomUpdateModel m;
    m.name = "EventPropCrossEntropy";
    m.vars = {{"lossSum", "scalar", CA::ReadWrite}, {"correct", "int", CA::ReadWrite}};
    m.varRefs = {{"readout", "scalar", CA::ReadOnly},
                 {"maxReadout", "scalar", CA::ReadOnlySharedNeuron},
                 {"atMax", "scalar", CA::ReadOnlySharedNeuron},
                 {"prob", "scalar", CA::ReadOnly},
                 {"sumExp", "scalar", CA::ReadOnlySharedNeuron},
                 {"example", "int", CA::ReadOnly},
                 {"grad", "scalar", CA::ReadWrite}};
    m.egpRefs = {{"labels", "int"}};
    // -log softmax(R)[label] as a log-sum-exp: log(sum exp(R - max)) - (R_label - max), exact
    // for any spread of the readouts (a clamped log(prob) would saturate while the gradient
    // prob - 1 does not).
    m.updateCode = "if (example < 0) {\n"
                   "    grad = 0.0;\n"
                   "} else if ((int)id == labels[example]) {\n"
                   "    grad = prob - 1.0;\n"
                   "    lossSum = lossSum + log(sumExp) - (readout - maxReadout);\n"
                   "    if (readout >= maxReadout && atMax < 1.5) {\n"
                   "        correct = correct + 1;\n"
                   "    }\n"
                   "} else {\n"
                   "    grad = prob;\n"
                   "}\n";
    return m;
}

} // namespace spikeforge::train::detail
