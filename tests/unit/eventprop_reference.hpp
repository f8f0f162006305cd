#pragma once
// A reference for EventProp gradient tests: the same network simulated in continuous time,
// exactly between events (closed-form LIF and exponential-synapse solutions), with threshold
// crossings located by bisection to ~1e-13 ms. Its loss is smooth in the weights wherever no
// spike appears or vanishes, so central differences of it are accurate to ~1e-8; the engine's
// discrete-time gradient must approach it as dt shrinks.
//
// Network: input channels -> one LIF layer (optionally recurrent) -> leaky-integrate readout
// (AvgVar: R = (1/T) * integral of V), loss = -log softmax(R)[label]. Weights are row-major
// [source][target]. An input spike at time s reaches the LIF layer at (floor(s/dt) + 1) * dt,
// when the engine delivers it; LIF spikes are delivered at once (the engine adds < dt).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace eventprop_reference {

struct Network {
    size_t numInputs = 0, numHidden = 0, numOutputs = 0;
    double tauMHidden = 20.0, tauMOutput = 20.0, tauS = 5.0, vThresh = 1.0; // [ms]
    double duration = 0.0;                                                  // [ms]
    double dt = 1.0;          // [ms] the engine's step: only for the input delivery times
    bool deltaOutput = false; // hidden -> output synapses jump the output's V, not its I
    std::vector<double> wIn, wRec, wOut; // [in][hid], [hid][hid] (may be empty), [hid][out]
    std::vector<std::pair<double, size_t>> inputSpikes; // (time [ms], channel), sorted
    size_t label = 0;
};

struct Result {
    double loss = 0.0;
    std::vector<double> readout;
    std::vector<size_t> spikeCounts; // per hidden neuron
    std::vector<double> firstSpike;  // per hidden neuron [ms]; NaN if it never spiked
};

// V and I of one neuron after `s` ms from (v, i) without events; and the integral of V.
struct Membrane {
    double tauM, tauS;
    double rho(double s) const {
        if (std::fabs(tauS - tauM) <= 1e-12 * tauM) return s / tauM * std::exp(-s / tauM);
        return tauS * (std::exp(-s / tauS) - std::exp(-s / tauM)) / (tauS - tauM);
    }
    double v(double v0, double i0, double s) const {
        return std::exp(-s / tauM) * v0 + rho(s) * i0;
    }
    double i(double i0, double s) const { return std::exp(-s / tauS) * i0; }
    double integralV(double v0, double i0, double s) const {
        const double a = tauM * (1.0 - std::exp(-s / tauM));
        if (std::fabs(tauS - tauM) <= 1e-12 * tauM)
            return v0 * a + i0 * (tauM * (1.0 - std::exp(-s / tauM)) - s * std::exp(-s / tauM));
        const double b = tauS * (1.0 - std::exp(-s / tauS));
        return v0 * a + i0 * tauS / (tauS - tauM) * (b - a);
    }
};

inline Result simulate(const Network& n) {
    const Membrane hid{n.tauMHidden, n.tauS}, out{n.tauMOutput, n.tauS};
    std::vector<double> vh(n.numHidden, 0.0), ih(n.numHidden, 0.0);
    std::vector<double> vo(n.numOutputs, 0.0), io(n.numOutputs, 0.0), integral(n.numOutputs, 0.0);
    Result r;
    r.spikeCounts.assign(n.numHidden, 0);
    r.firstSpike.assign(n.numHidden, std::nan(""));
    // Input deliveries at the engine's step boundaries.
    std::vector<std::pair<double, size_t>> arrivals;
    for (const auto& [time, c] : n.inputSpikes) {
        const double at = (std::floor(time / n.dt) + 1.0) * n.dt;
        if (at < n.duration) arrivals.emplace_back(at, c);
    }
    std::sort(arrivals.begin(), arrivals.end());
    const double sample = 0.005; // [ms] crossing search resolution
    auto advance = [&](double s) {
        for (size_t o = 0; o < n.numOutputs; o++) {
            integral[o] += out.integralV(vo[o], io[o], s);
            vo[o] = out.v(vo[o], io[o], s);
            io[o] = out.i(io[o], s);
        }
        for (size_t h = 0; h < n.numHidden; h++) {
            vh[h] = hid.v(vh[h], ih[h], s);
            ih[h] = hid.i(ih[h], s);
        }
    };
    double t = 0.0;
    size_t next = 0;
    while (t < n.duration) {
        const double stop =
            std::min(next < arrivals.size() ? arrivals[next].first : n.duration, n.duration);
        const double s = std::min(sample, stop - t);
        // The earliest crossing within (t, t + s], if any.
        double first = s;
        size_t who = n.numHidden;
        for (size_t h = 0; h < n.numHidden; h++) {
            if (hid.v(vh[h], ih[h], s) < n.vThresh) continue;
            double lo = 0.0, hi = s;
            for (int it = 0; it < 60; it++) {
                const double mid = 0.5 * (lo + hi);
                (hid.v(vh[h], ih[h], mid) >= n.vThresh ? hi : lo) = mid;
            }
            if (hi < first || who == n.numHidden) {
                first = hi;
                who = h;
            }
        }
        advance(first);
        t += first;
        if (who < n.numHidden) {
            vh[who] = 0.0;
            if (r.spikeCounts[who]++ == 0) r.firstSpike[who] = t;
            for (size_t o = 0; o < n.numOutputs; o++)
                (n.deltaOutput ? vo[o] : io[o]) += n.wOut[who * n.numOutputs + o];
            if (!n.wRec.empty())
                for (size_t h = 0; h < n.numHidden; h++)
                    ih[h] += n.wRec[who * n.numHidden + h];
            continue;
        }
        while (next < arrivals.size() && arrivals[next].first <= t + 1e-12) {
            for (size_t h = 0; h < n.numHidden; h++)
                ih[h] += n.wIn[arrivals[next].second * n.numHidden + h];
            next++;
        }
    }
    r.readout.resize(n.numOutputs);
    if (n.numOutputs == 0) return r;
    double maxR = -1e300;
    for (size_t o = 0; o < n.numOutputs; o++) {
        r.readout[o] = integral[o] / n.duration;
        maxR = std::max(maxR, r.readout[o]);
    }
    double sum = 0.0;
    for (double x : r.readout)
        sum += std::exp(x - maxR);
    r.loss = -(r.readout[n.label] - maxR - std::log(sum));
    return r;
}

// Central differences of the loss for every element of `weights` (a member of `n`), with the
// spike counts unchanged under both perturbations (else NaN: the loss jumps there).
inline std::vector<double> gradient(Network n, std::vector<double> Network::*weights, double h) {
    const Result base = simulate(n);
    std::vector<double> g((n.*weights).size());
    for (size_t k = 0; k < g.size(); k++) {
        const double w0 = (n.*weights)[k];
        (n.*weights)[k] = w0 + h;
        const Result up = simulate(n);
        (n.*weights)[k] = w0 - h;
        const Result down = simulate(n);
        (n.*weights)[k] = w0;
        g[k] = (up.spikeCounts == base.spikeCounts && down.spikeCounts == base.spikeCounts)
                   ? (up.loss - down.loss) / (2.0 * h)
                   : std::nan("");
    }
    return g;
}

} // namespace eventprop_reference
