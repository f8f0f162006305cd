// EventProp's spiking neuron (eventprop_models.hpp) and the synapses leaving it. The discrete
// system and its exact adjoint are derived in docs/training.md ("Spikes within a step"); in
// short, per neuron and forward step (u = Isyn, the current after this step's arrivals):
//   V~ = alpha V + rho u,  I = beta u;  spike if V~ >= vThresh, at the fraction f of the step
//   where the exact trajectory V(s) = exp(-s/tauM) Vprev + r(s) u crosses vThresh (0 when Vprev
//   was already above threshold), reset to 0 at that time: V = V~ - vThresh exp(-(1 - f) dt/tauM).
// A spike reaches each target as a current jump one step (dt) after its crossing, integrated
// exactly: w CA into the input of step k+1 and w CB into that of step k+2, so that from the end
// of step k+1 on the target's V and I are those of the delayed jump, continuous in f across
// step boundaries. Backward,
// the loss depends on f through the reset, the targets (Isyn = dL/df from addToPre) and, for a
// first-spike readout, the spike time; f depends on Vprev and u through the crossing, with the
// slope of V at the crossing in the denominator (EventProp's 1/V'), which an upward crossing
// keeps positive: no floor is needed.
#include "train/eventprop_models.hpp"

#include "spikeforge/errors.hpp"

#include <cmath>
#include <string>

namespace spikeforge::train::detail {

namespace {

bool sameTau(double tauM, double tauS) {
    return std::fabs(tauS - tauM) <= 1e-9 * tauM;
}

std::string suffix(size_t i) {
    return std::to_string(i);
}

// Delivery coefficients of a spike at fraction `f` (a local of the code) for target kind i:
// CA, CB (the forward weights of the arrivals at steps k+1 and k+2) and, with `derivatives`,
// DA = dCA/df and DB = dCB/df. The spike acts on its targets one step (dt) after its crossing:
// s1 = (1 - f) dt [ms] is the time from that arrival to the end of step k+1.
std::string coefficientCode(const TargetKind& t, size_t i, const std::string& f, bool derivatives) {
    const std::string n = suffix(i);
    const std::string tm = "tgtTauM" + n, ts = "tgtTauS" + n;
    std::string c = "    const scalar s1_" + n + " = (1.0 - " + f + ") * dt;\n" +
                    "    const scalar em_" + n + " = exp(-s1_" + n + " / " + tm + ");\n";
    if (t.delta) {
        // V jumps by w at the arrival and decays to the end of step k+1 (V <- alpha (V + u)).
        c += "    CA" + n + " = em_" + n + " / tgtAlpha" + n + ";\n";
        if (derivatives)
            c += "    DA" + n + " = em_" + n + " * dt / (" + tm + " * tgtAlpha" + n + ");\n";
        return c;
    }
    // By the end of step k+1 the jump has added r = r(s1) to V and left ea of current: r/rho
    // as input to step k+1 puts exactly r on V, and ea - beta r/rho at k+2 sets the current.
    c += "    const scalar ea_" + n + " = exp(-s1_" + n + " / " + ts + ");\n";
    c += sameTau(t.tauM, t.tauS)
             ? "    const scalar r_" + n + " = s1_" + n + " / " + tm + " * em_" + n + ";\n"
             : "    const scalar r_" + n + " = " + ts + " * (ea_" + n + " - em_" + n + ") / (" +
                   ts + " - " + tm + ");\n";
    c += "    CA" + n + " = r_" + n + " / tgtRho" + n + ";\n" + "    CB" + n + " = ea_" + n +
         " - tgtBeta" + n + " * CA" + n + ";\n";
    if (!derivatives) return c;
    // d r(s)/ds at s1; ds1/df = -dt.
    c += sameTau(t.tauM, t.tauS) ? "    const scalar rp_" + n + " = em_" + n + " * (1.0 - s1_" + n +
                                       " / " + tm + ") / " + tm + ";\n"
                                 : "    const scalar rp_" + n + " = (em_" + n + " * " + ts + " / " +
                                       tm + " - ea_" + n + ") / (" + ts + " - " + tm + ");\n";
    c += "    DA" + n + " = -dt * rp_" + n + " / tgtRho" + n + ";\n" + "    DB" + n + " = ea_" + n +
         " * dt / " + ts + " - tgtBeta" + n + " * DA" + n + ";\n";
    return c;
}

std::string coefficients(const std::vector<TargetKind>& targets, const std::string& f,
                         bool derivatives) {
    std::string c;
    for (size_t i = 0; i < targets.size(); i++)
        c += coefficientCode(targets[i], i, f, derivatives);
    return c;
}

void addTargetDecls(NeuronModel& m, const std::vector<TargetKind>& targets, bool backward) {
    for (size_t i = 0; i < targets.size(); i++) {
        const std::string n = suffix(i);
        m.params.push_back("tgtTauM" + n);
        m.params.push_back("tgtTauS" + n);
        const std::string tm = "tgtTauM" + n, ts = "tgtTauS" + n;
        m.derivedParams.push_back({"tgtAlpha" + n, [tm](const ParamValues& p, double dt) {
                                       return alphaOf(p.at(tm), dt);
                                   }});
        m.derivedParams.push_back({"tgtBeta" + n, [ts](const ParamValues& p, double dt) {
                                       return betaOf(p.at(ts), dt);
                                   }});
        m.derivedParams.push_back({"tgtRho" + n, [tm, ts](const ParamValues& p, double dt) {
                                       return rhoOf(p.at(tm), p.at(ts), dt);
                                   }});
        m.vars.push_back({"CA" + n});
        if (!targets[i].delta) m.vars.push_back({"CB" + n});
        if (!backward) continue;
        m.vars.push_back({"DA" + n});
        if (!targets[i].delta) m.vars.push_back({"DB" + n});
    }
}

} // namespace

std::vector<std::string> targetVarNames(const std::vector<TargetKind>& targets, bool backward) {
    std::vector<std::string> names;
    for (size_t i = 0; i < targets.size(); i++) {
        const std::string n = suffix(i);
        names.push_back("CA" + n);
        if (!targets[i].delta) names.push_back("CB" + n);
        if (!backward) continue;
        names.push_back("DA" + n);
        if (!targets[i].delta) names.push_back("DB" + n);
    }
    return names;
}

NeuronModel lifModel(uint32_t ringSlots, const std::vector<TargetKind>& targets,
                     bool firstSpikeReadout, bool backward) {
    NeuronModel m;
    m.name = std::string(firstSpikeReadout ? "EventPropLIFFirstSpike" : "EventPropLIF") +
             (backward ? "" : "Forward");
    m.params = {"T", "tauM", "tauS", "vThresh", "slots", "regStrength", "regTarget", "batchSize"};
    m.derivedParams = {
        {"alpha", [](const ParamValues& p, double dt) { return alphaOf(p.at("tauM"), dt); }},
        {"beta", [](const ParamValues& p, double dt) { return betaOf(p.at("tauS"), dt); }},
        {"rho",
         [](const ParamValues& p, double dt) { return rhoOf(p.at("tauM"), p.at("tauS"), dt); }}};
    // F: the crossing fraction of the latest spike; InvD: 1 / (dt dV/ds) at its crossing (0 when
    // the step started above threshold or the crossing is a tangent: that spike's time is fixed).
    // BackNext: SpikeRing[NumSpikes - 1], or -1 without spikes: the backward pass compares it
    // every step, and the ring (one row per neuron, far apart in memory) is read only at spikes.
    m.vars = {{"V"},
              {"I"},
              {"F"},
              {"InvD"},
              {"LambdaV"},
              {"LambdaI"},
              {"LambdaINext"},
              {"Step", "int"},
              {"BackSpike", "int"},
              {"NumSpikes", "int"},
              {"BackNext", "int"},
              {"Dropped", "int"},
              {"SpikeSum", "scalar", VarAccess::ReadOnly}};
    addTargetDecls(m, targets, backward);
    // Scratch (not trial state): a trial writes slot n before reading it (NumSpikes counts the
    // filled slots and is reset with the variables), so resetState need not copy the buffers.
    m.arrays = {{"SpikeRing", "int", ringSlots, false},
                {"SpikeF", "scalar", ringSlots, false},
                {"SpikeInvD", "scalar", ringSlots, false}};
    // A first-spike readout also keeps its first spike time (TFirst = (Step + F) dt, 1e30
    // until it spikes), hands -TFirst/tau0 to the softmax (Logit) and receives dLoss/dTFirst
    // (DLdt). While it has not spiked it keeps its largest V and that step (MaxV, MaxStep): a
    // silent label output is pushed up there with dLoss/dMaxV = SilentGrad.
    std::string firstSpikeForward, firstSpikeTime, silentPush;
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
        firstSpikeForward = "    if (V >= vThresh && TFirst > 1e29) {\n"
                            "        TFirst = ((scalar)Step + F) * dt;\n"
                            "    }\n"
                            "    if (TFirst > 1e29 && V > MaxV) {\n"
                            "        MaxV = V;\n"
                            "        MaxStep = Step;\n"
                            "    }\n"
                            "    if (Step == nT - 1) {\n"
                            "        Logit = -TFirst / tau0;\n"
                            "    }\n";
        firstSpikeTime = " + (NumSpikes == 0 ? DLdt * dt : 0.0)";
        silentPush = "    if (k == MaxStep) {\n"
                     "        LambdaV = LambdaV + SilentGrad;\n"
                     "    }\n";
    }
    // r(s): V at time s into a step started at V = 0 with unit current (rho = r(dt)).
    const auto response = [](const std::string& s, const std::string& em, const std::string& es) {
        return "(fabs(tauS - tauM) <= 1e-9 * tauM ? " + s + " / tauM * " + em + " : tauS * (" + es +
               " - " + em + ") / (tauS - tauM))";
    };
    // The crossing within the step: V(s) = exp(-s/tauM) Vprev + r(s) Isyn = vThresh has exactly
    // one root in (0, dt] (V has at most one extremum); safeguarded Newton from the linear
    // estimate, inside a shrinking bracket. It stops when a Newton step no longer shrinks: that
    // is rounding noise (waiting for a zero step instead ran to the 30-iteration cap on one
    // crossing in six, two Newton steps oscillating by an ulp; same roots, half the exp calls).
    // InvD = 1 / (dt dV/ds) at the root, with tauM dV/ds = Isyn exp(-s/tauS) - vThresh there (0 for
    // a step that started at or above threshold, or a tangent: that spike's time is taken as
    // fixed).
    const std::string forward =
        "if (Step < nT) {\n"
        "    const scalar vPrev = V;\n"
        "    V = alpha * V + rho * Isyn;\n"
        "    I = beta * Isyn;\n"
        "    if (V >= vThresh) {\n"
        "        F = 0.0;\n"
        "        InvD = 0.0;\n"
        "        if (vPrev < vThresh) {\n"
        "            scalar lo = 0.0;\n"
        "            scalar hi = dt;\n"
        "            scalar s = dt * (vThresh - vPrev) / (V - vPrev);\n"
        "            scalar lastStep = dt;\n"
        "            for (int it = 0; it < 30; it++) {\n"
        "                const scalar em = exp(-s / tauM);\n"
        "                const scalar es = exp(-s / tauS);\n"
        "                const scalar vs = em * vPrev + " +
        response("s", "em", "es") +
        " * Isyn;\n"
        "                if (vs < vThresh) {\n"
        "                    lo = s;\n"
        "                } else {\n"
        "                    hi = s;\n"
        "                }\n"
        "                const scalar ds = (Isyn * es - vs) / tauM;\n"
        "                bool newton = ds > 0.0;\n"
        "                scalar next = newton ? s - (vs - vThresh) / ds : 0.5 * (lo + hi);\n"
        "                if (!(next >= lo && next <= hi)) {\n"
        "                    next = 0.5 * (lo + hi);\n"
        "                    newton = false;\n"
        "                }\n"
        "                const scalar step = fabs(next - s);\n"
        "                if (step == 0.0 || (newton && step >= lastStep)) {\n"
        "                    break;\n"
        "                }\n"
        "                if (newton) {\n"
        "                    lastStep = step;\n"
        "                }\n"
        "                s = next;\n"
        "            }\n"
        "            F = s / dt;\n"
        "            const scalar slope = (Isyn * exp(-s / tauS) - vThresh) / tauM;\n"
        "            InvD = slope > 0.0 ? 1.0 / (dt * slope) : 0.0;\n"
        "        }\n"
        "    }\n" +
        firstSpikeForward + "}";
    // The reset to 0 at the crossing, seen at the end of the step, and the delivery
    // coefficients of this spike.
    const std::string resetAndDeliver = "    V = V - vThresh * exp((F - 1.0) * dt / tauM);\n"
                                        "    const scalar f = F;\n" +
                                        coefficients(targets, "f", false);
    if (!backward) {
        m.arrays.clear();
        m.simCode = "const int nT = (int)T;\n" + forward + "\nStep = Step + 1;\n";
        m.thresholdConditionCode = "V >= vThresh";
        m.resetCode = "if (Step <= (int)T) {\n" + resetAndDeliver + "}\n";
        return m;
    }
    // Backward step k: LambdaV is dL/dV at the end of forward step k (after its reset). At a
    // spike of step k: dLdf collects the reset's, the targets' (Isyn) and the spike time's
    // dependence on f; f depends on Vprev and u through the crossing, df/dVprev =
    // -exp(-s/tauM) InvD and df/du = -r(s) InvD (implicit function theorem): the first is added
    // to dL/dVprev (divided by alpha, which the next step multiplies back), the second to dL/du.
    // Spike-count regularisation (the loss-shaping paper's, in this sign convention): each
    // backward spike adds tauM * regStrength * (batch-mean count - regTarget) / batchSize.
    m.simCode =
        "const int nT = (int)T;\n" + forward +
        " else {\n"
        "    const int k = 2 * nT - 1 - Step;\n"
        "    LambdaINext = LambdaI;\n"
        "    LambdaV = alpha * LambdaV;\n" +
        silentPush +
        "    scalar pendingV = 0.0;\n"
        "    scalar pendingU = 0.0;\n"
        "    if (BackSpike != 0) {\n"
        "        NumSpikes = NumSpikes - 1;\n"
        "        BackNext = NumSpikes > 0 ? SpikeRing[NumSpikes - 1] : -1;\n"
        "        const scalar f = SpikeF[NumSpikes];\n"
        "        const scalar invD = SpikeInvD[NumSpikes];\n"
        "        const scalar dLdf = -vThresh * exp((f - 1.0) * dt / tauM) * (dt / tauM) "
        "* LambdaV + Isyn" +
        firstSpikeTime +
        ";\n"
        "        const scalar sc = f * dt;\n"
        "        const scalar emc = exp(-sc / tauM);\n"
        "        const scalar esc = exp(-sc / tauS);\n"
        "        pendingV = -dLdf * emc * invD;\n"
        "        pendingU = -dLdf * " +
        response("sc", "emc", "esc") +
        " * invD;\n"
        "        LambdaV = LambdaV + tauM * regStrength * (SpikeSum / batchSize - regTarget) / "
        "batchSize;\n"
        "        BackSpike = 0;\n"
        "    }\n"
        "    LambdaI = beta * LambdaI + rho * LambdaV + pendingU;\n"
        "    LambdaV = LambdaV + pendingV / alpha;\n"
        "    while (NumSpikes > 0 && BackNext >= k) {\n"
        "        NumSpikes = NumSpikes - 1;\n"
        "        BackNext = NumSpikes > 0 ? SpikeRing[NumSpikes - 1] : -1;\n"
        "    }\n"
        "    if (NumSpikes > 0 && BackNext == k - 1) {\n"
        "        BackSpike = 1;\n"
        "        const scalar fb = SpikeF[NumSpikes - 1];\n" +
        coefficients(targets, "fb", true) +
        "    }\n"
        "}\n"
        "Step = Step + 1;\n";
    // A first-spike readout spikes once: later spikes change neither its loss nor any other
    // neuron (it is the last layer), so they would only fill its buffer.
    m.thresholdConditionCode =
        firstSpikeReadout ? "(Step <= (int)T) ? (V >= vThresh && NumSpikes == 0) : (BackSpike != 0)"
                          : "(Step <= (int)T) ? (V >= vThresh) : (BackSpike != 0)";
    // A spike that does not fit in the ring is counted (Dropped) and reported by the compiler.
    m.resetCode = "if (Step <= (int)T) {\n"
                  "    if (NumSpikes < (int)slots) {\n"
                  "        SpikeRing[NumSpikes] = Step - 1;\n"
                  "        SpikeF[NumSpikes] = F;\n"
                  "        SpikeInvD[NumSpikes] = InvD;\n"
                  "        NumSpikes = NumSpikes + 1;\n"
                  "        BackNext = Step - 1;\n"
                  "    } else {\n"
                  "        Dropped = Dropped + 1;\n"
                  "    }\n" +
                  resetAndDeliver + "}\n";
    return m;
}

WeightUpdateModel synapseModel(bool spikingSource, size_t targetKind, bool backward,
                               bool deltaTarget) {
    WeightUpdateModel m;
    m.params = {"T"};
    const std::string n = suffix(targetKind);
    // A spike input's events lie on step boundaries (f = 1): CA = 1, CB = 0, nothing to send
    // back. A spiking source delivers one step after its crossing time (the file comment).
    const std::string ca = spikingSource ? "CA" + n + "_pre" : "1.0";
    const bool twoArrivals = spikingSource && !deltaTarget;
    std::string deliver = "addToPost(g * " + ca + ");\n";
    if (twoArrivals) deliver += "addToPostDelay(g * CB" + n + "_pre, 1);\n";
    if (!backward) {
        m.name = std::string("EventPropForwardSynapse") + (spikingSource ? "Spiking" : "") +
                 (twoArrivals ? "Exp" : "");
        m.vars = {{"g", "scalar", VarAccess::ReadOnly}};
        m.preSpikeSynCode = deliver;
        return m;
    }
    m.name = std::string(spikingSource ? "EventPropSynapse" : "EventPropInputSynapse") +
             (deltaTarget ? "Delta" : "");
    m.vars = {{"g", "scalar", VarAccess::ReadOnly},
              {"Gradient", "scalar", VarAccess::ReadWrite},
              {"ReducedGradient", "scalar", VarAccess::ReadOnly}};
    // A spike emitted at step s arrives at step s+1, when the source's Step is s+1: forward
    // spikes arrive while Step_pre <= T. Backward, at the replay of that spike, LambdaI_post is
    // dL/du of the target at s+1 and LambdaINext_post at s+2. The source's values are read once
    // into locals before the branch: the same for every synapse of the row, and read outside
    // it they leave the row loop free of conditional loads, so it can run as SIMD lanes.
    std::string pre = "const int preStep = Step_pre;\n";
    if (spikingSource) pre += "const scalar preCA = CA" + n + "_pre;\n";
    if (twoArrivals)
        pre += "const scalar preCB = CB" + n + "_pre;\nconst scalar preDA = DA" + n +
               "_pre;\nconst scalar preDB = DB" + n + "_pre;\n";
    else if (spikingSource)
        pre += "const scalar preDA = DA" + n + "_pre;\n";
    const std::string preCa = spikingSource ? "preCA" : "1.0";
    std::string backwardDeliver = "addToPost(g * " + preCa + ");\n";
    if (twoArrivals) backwardDeliver += "addToPostDelay(g * preCB, 1);\n";
    std::string gradient = "    Gradient = Gradient + LambdaI_post * " + preCa;
    std::string sendBack;
    if (twoArrivals) {
        gradient += " + LambdaINext_post * preCB";
        sendBack = "    addToPre(g * (LambdaI_post * preDA + LambdaINext_post * preDB));\n";
    } else if (spikingSource) {
        // A Delta target's V jumps, and the loss samples V at step ends: a jump moving within a
        // step changes no sample, so the continuous-time term of the loss the jump passes over
        // (-w dl/dV per ms, per ms of delay) is added (docs/training.md).
        sendBack = "    addToPre(g * (LambdaI_post * preDA - dt * LossDensity_post));\n";
    }
    m.preSpikeSynCode = pre + "if (preStep <= (int)T) {\n    " + backwardDeliver + "} else {\n" +
                        gradient + ";\n" + sendBack + "}\n";
    return m;
}

} // namespace spikeforge::train::detail
