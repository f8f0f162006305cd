// EventProp snippet models (eventprop_models.hpp). The equations and their discrete form are
// derived in docs/training.md ("How EventProp runs"); in short, per neuron and step:
//   forward  (u = Isyn, the current at the start of the step after this step's input)
//     V <- alpha V + rho u,   I <- beta u              (exact solution over one step)
//   backward (the transpose of that recursion, index k = 2T-1-Step)
//     lambdaV <- alpha lambdaV + dl/dV_k,  [jump at a recorded spike],  lambdaI <- beta lambdaI
//     + rho lambdaV
//   jump at a spike (Wunderlich & Pehle, with the current at the spike):
//     lambdaV += (vThresh lambdaV + tauM sum_j w_jn (lambdaV_j/tauM_j - lambdaI_j/tauS_j)) / (I -
//     V)
//   gradient of w_jn: the sum of lambdaI_j one step after each spike of n.
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
    m.params = {"T", "numChannels"};
    m.egps = {
        {"evTimes", "float"}, {"rowOffsets", "unsigned int"}, {"perm", "int"}, {"labels", "int"}};
    m.vars = {{"Example", "int"},      {"Start", "unsigned int"}, {"Cursor", "unsigned int"},
              {"End", "unsigned int"}, {"Step", "int"},           {"Fire", "int"}};
    // Forward: spike in the step an event falls in (several events in one step: one spike).
    // Backward step for index k: replay the spike of forward step k-1, walking the events back.
    m.simCode = "const int nT = (int)T;\n"
                "if (Step == 0) {\n"
                "    if (Example >= 0) {\n"
                "        const uint32_t row = (uint32_t)Example * ((uint32_t)numChannels + 1u) + "
                "id;\n"
                "        Start = rowOffsets[row];\n"
                "        End = rowOffsets[row + 1u];\n"
                "    } else {\n"
                "        Start = 0u;\n"
                "        End = 0u;\n"
                "    }\n"
                "    Cursor = Start;\n"
                "}\n"
                "Fire = 0;\n"
                "if (Step < nT) {\n"
                "    if (Cursor < End && (int)floor(evTimes[Cursor] / dt) <= Step) {\n"
                "        Fire = 1;\n"
                "        while (Cursor < End && (int)floor(evTimes[Cursor] / dt) <= Step) {\n"
                "            Cursor = Cursor + 1u;\n"
                "        }\n"
                "    }\n"
                "}" +
                std::string(backward ? " else {\n"
                                       "    const int k = 2 * nT - 1 - Step;\n"
                                       "    while (Cursor > Start && (int)floor(evTimes[Cursor - "
                                       "1u] / dt) >= k) {\n"
                                       "        Cursor = Cursor - 1u;\n"
                                       "    }\n"
                                       "    if (Cursor > Start && (int)floor(evTimes[Cursor - 1u] "
                                       "/ dt) == k - 1) {\n"
                                       "        Fire = 1;\n"
                                       "    }\n"
                                       "}\n"
                                     : "\n") +
                "Step = Step + 1;\n";
    m.thresholdConditionCode = "Fire != 0";
    return m;
}

NeuronModel lifModel(uint32_t ringSlots, bool firstSpikeReadout, bool backward) {
    NeuronModel m;
    m.name = std::string(firstSpikeReadout ? "EventPropLIFFirstSpike" : "EventPropLIF") +
             (backward ? "" : "Forward");
    m.params = {"T", "tauM", "tauS", "vThresh", "slots", "regStrength", "regTarget", "batchSize"};
    m.derivedParams = stepFactors();
    m.vars = {{"V"},
              {"I"},
              {"LambdaV"},
              {"LambdaI"},
              {"Step", "int"},
              {"BackSpike", "int"},
              {"NumSpikes", "int"},
              {"Dropped", "int"},
              {"SpikeSum", "scalar", VarAccess::ReadOnly}};
    m.arrays = {{"SpikeRing", "int", ringSlots}, {"SpikeIV", "scalar", ringSlots}};
    // A first-spike readout also keeps its first spike time, interpolated within the step
    // (TFirst, 1e30 until it spikes), hands -TFirst/tau0 to the softmax (Logit) and receives
    // dLoss/dTFirst (DLdt) for the jump of its first spike. While it has not spiked it keeps its
    // largest V and that step (MaxV, MaxStep): a silent label output is pushed up there with
    // dLoss/dMaxV = SilentGrad (firstSpikeLossModel).
    std::string firstSpikeForward, firstSpikeJump, silentPush;
    if (firstSpikeReadout) {
        m.params.push_back("tau0");
        m.vars.insert(m.vars.end(), {{"TFirst"},
                                     {"Logit"},
                                     {"Prob"},
                                     {"DLdt"},
                                     {"Example", "int"},
                                     {"MaxV"},
                                     {"MaxStep", "int"},
                                     {"SilentGrad"}});
        firstSpikeForward =
            "    if (V >= vThresh && TFirst > 1e29) {\n"
            "        TFirst = ((scalar)Step + (vThresh - vPrev) / (V - vPrev)) * dt;\n"
            "    }\n"
            "    if (TFirst > 1e29 && V > MaxV) {\n"
            "        MaxV = V;\n"
            "        MaxStep = Step;\n"
            "    }\n"
            "    if (Step == nT - 1) {\n"
            "        Logit = -TFirst / tau0;\n"
            "    }\n";
        firstSpikeJump = " - (NumSpikes == 0 ? tauM * DLdt : 0.0)";
        silentPush = "    if (k == MaxStep) {\n"
                     "        LambdaV = LambdaV + SilentGrad;\n"
                     "    }\n";
    }
    // The jump divides by I - V at the spike (tauM times the slope); a crossing at the very end
    // of a step can leave it tiny or negative, so it is kept above a thousandth of vThresh.
    // Spike-count regularisation (the loss-shaping paper's, in this sign convention): each
    // backward spike adds tauM * regStrength * (batch-mean count - regTarget) / batchSize.
    m.simCode = "const int nT = (int)T;\n"
                "if (Step < nT) {\n"
                "    const scalar vPrev = V;\n"
                "    V = alpha * V + rho * Isyn;\n"
                "    I = beta * Isyn;\n" +
                firstSpikeForward +
                "} else {\n"
                "    const int k = 2 * nT - 1 - Step;\n"
                "    LambdaV = alpha * LambdaV;\n" +
                silentPush +
                "    if (BackSpike != 0) {\n"
                "        NumSpikes = NumSpikes - 1;\n"
                "        const scalar slope = fmax(SpikeIV[NumSpikes], 0.001 * vThresh);\n"
                "        LambdaV = LambdaV + (vThresh * LambdaV + tauM * Isyn" +
                firstSpikeJump +
                ") / slope;\n"
                "        LambdaV = LambdaV + tauM * regStrength * (SpikeSum / batchSize - "
                "regTarget) / batchSize;\n"
                "        BackSpike = 0;\n"
                "    }\n"
                "    LambdaI = beta * LambdaI + rho * LambdaV;\n"
                "    while (NumSpikes > 0 && SpikeRing[NumSpikes - 1] >= k) {\n"
                "        NumSpikes = NumSpikes - 1;\n"
                "    }\n"
                "    if (NumSpikes > 0 && SpikeRing[NumSpikes - 1] == k - 1) {\n"
                "        BackSpike = 1;\n"
                "    }\n"
                "}\n"
                "Step = Step + 1;\n";
    if (!backward) {
        // Inference: the forward half alone, no spike buffers.
        m.arrays.clear();
        m.simCode = "const int nT = (int)T;\n"
                    "if (Step < nT) {\n"
                    "    const scalar vPrev = V;\n"
                    "    V = alpha * V + rho * Isyn;\n"
                    "    I = beta * Isyn;\n" +
                    firstSpikeForward +
                    "}\n"
                    "Step = Step + 1;\n";
        m.thresholdConditionCode = "V >= vThresh";
        m.resetCode = "V = 0.0;\n";
        return m;
    }
    // A first-spike readout spikes once: later spikes change neither its loss nor any other
    // neuron (it is the last layer), so they would only fill its buffer.
    m.thresholdConditionCode =
        firstSpikeReadout ? "(Step <= (int)T) ? (V >= vThresh && NumSpikes == 0) : (BackSpike != 0)"
                          : "(Step <= (int)T) ? (V >= vThresh) : (BackSpike != 0)";
    // A spike that does not fit in the ring is counted (Dropped) and reported by the compiler.
    m.resetCode = "if (Step <= (int)T) {\n"
                  "    if (NumSpikes < (int)slots) {\n"
                  "        SpikeRing[NumSpikes] = Step - 1;\n"
                  "        SpikeIV[NumSpikes] = I - V;\n"
                  "        NumSpikes = NumSpikes + 1;\n"
                  "    } else {\n"
                  "        Dropped = Dropped + 1;\n"
                  "    }\n"
                  "    V = 0.0;\n"
                  "}\n";
    return m;
}

NeuronModel readoutModel(Readout readout, uint32_t steps, bool backward, bool deltaInput) {
    NeuronModel m;
    m.name = std::string("EventPropReadout") + readoutName(readout) + (deltaInput ? "Delta" : "") +
             (backward ? "" : "Forward");
    m.params = {"T", "tauM", "tauS"};
    m.derivedParams = stepFactors();
    // LossDensity: dl/dV per ms at the step the backward pass is at, which a Delta synapse's
    // adjoint term needs (moving a jump in V moves where the loss sees it).
    m.vars = {{"V"},    {"Sum"},         {"LambdaV"},        {"LambdaI"},        {"Grad"},
              {"Prob"}, {"Step", "int"}, {"Example", "int"}, {"MaxStep", "int"}, {"LossDensity"}};
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

WeightUpdateModel synapseModel(bool propagateBack, bool backward, bool deltaTarget) {
    WeightUpdateModel m;
    m.params = {"T", "tauMPost", "tauSPost"};
    if (!backward) {
        m.name = "EventPropForwardSynapse";
        m.vars = {{"g", "scalar", VarAccess::ReadOnly}};
        m.preSpikeSynCode = "addToPost(g);\n";
        return m;
    }
    m.name = std::string(propagateBack ? "EventPropSynapse" : "EventPropInputSynapse") +
             (deltaTarget ? "Delta" : "");
    m.vars = {{"g", "scalar", VarAccess::ReadOnly},
              {"Gradient", "scalar", VarAccess::ReadWrite},
              {"ReducedGradient", "scalar", VarAccess::ReadOnly}};
    // A spike emitted at step s arrives at step s+1, when the source's Step is s+1: forward
    // spikes arrive while Step_pre <= T.
    m.preSpikeSynCode = "if (Step_pre <= (int)T) {\n"
                        "    addToPost(g);\n"
                        "} else {\n"
                        "    Gradient = Gradient + LambdaI_post;\n";
    // The source's jump term, -dL/d(arrival time) of its input to the target: a later arrival
    // delays the target's jump in I (Exponential: its V rises later, its I decays less) or in V
    // (Delta: its V decays less before the jump, and the loss sees the jump later).
    if (propagateBack)
        m.preSpikeSynCode +=
            deltaTarget
                ? "    addToPre(g * (LossDensity_post - LambdaI_post / tauMPost));\n"
                : "    addToPre(g * (LambdaV_post / tauMPost - LambdaI_post / tauSPost));\n";
    m.preSpikeSynCode += "}\n";
    return m;
}

CustomUpdateModel selectExampleModel() {
    CustomUpdateModel m;
    m.name = "EventPropSelectExample";
    m.params = {"trialBase"};
    m.varRefs = {{"example", "int", CA::ReadWrite}};
    m.egpRefs = {{"perm", "int"}};
    m.updateCode = "example = perm[(updateCount - (uint32_t)trialBase) * num_batch + batch];\n";
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
                   "        lossSum = lossSum - log(fmax(prob, 1e-30)) +\n"
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
                 {"example", "int", CA::ReadOnly},
                 {"grad", "scalar", CA::ReadWrite}};
    m.egpRefs = {{"labels", "int"}};
    m.updateCode = "if (example < 0) {\n"
                   "    grad = 0.0;\n"
                   "} else if ((int)id == labels[example]) {\n"
                   "    grad = prob - 1.0;\n"
                   "    lossSum = lossSum - log(fmax(prob, 1e-30));\n"
                   "    if (readout >= maxReadout && atMax < 1.5) {\n"
                   "        correct = correct + 1;\n"
                   "    }\n"
                   "} else {\n"
                   "    grad = prob;\n"
                   "}\n";
    return m;
}

} // namespace spikeforge::train::detail
