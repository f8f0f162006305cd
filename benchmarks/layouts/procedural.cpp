// Procedural against Sparse connectivity at equal connectivity:
//   bench_layout_procedural [--neurons 100000] [--prob 0.01] [--rate 10] [--steps 200]
//                           [--repeats 3] [--weights constant|normal] [--backend cpu]
//                           [--threads 1]
// N sources spiking as Bernoulli processes at `rate` [Hz] (dt 1 ms) drive N non-spiking targets
// through FixedProbability(prob) synapses, stored (Sparse) or regenerated at each spike
// (Procedural; the same rows, see docs/models.md). Checks that both deliver the same input, then
// prints step time medians, synaptic events per second and the bytes of synapse state of each,
// then one JSON line.
#include "layer_models.hpp"
#include "spikeforge/model.hpp"
#include "spikeforge/models.hpp"
#include "spikeforge/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

using namespace spikeforge;

namespace {

struct Options {
    unsigned neurons = 100000, steps = 200, repeats = 3;
    double prob = 0.01, rate = 10.0;
    std::string weights = "constant", backend = "cpu";
    int threads = 1;
};

using sfbench::accumulate;
using sfbench::bernoulli;
using sfbench::pulse;

// Both models have the same names and seed: the same spikes and the same rows.
void build(Model& m, MatrixType type, const Options& o) {
    m.setDT(1.0);
    m.setSeed(77);
    m.addNeuronGroup("In", o.neurons, bernoulli(), {{"p", o.rate * 1e-3}}, {{"spikes", 0.0}});
    m.addNeuronGroup("Out", o.neurons, accumulate(), {}, {{"acc", 0.0}});
    const VarInit g = o.weights == "normal" ? init::Normal(0.0, 1.0) : VarInit(0.5);
    m.addSynapseGroup("Syn", type, 0, "In", "Out", {pulse(), {}, {{"g", g}}, {}, {}},
                      {models::DeltaCurr(), {}, {}}, init::FixedProbability(o.prob));
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct Result {
    double ms = 0, setupSeconds = 0, spikesPerStep = 0;
    std::vector<float> acc;
};

Result measure(MatrixType type, const Options& o, const BackendPreferences& prefs) {
    Model m("procedural_vs_sparse");
    build(m, type, o);
    Result r;
    auto t0 = std::chrono::steady_clock::now();
    Simulation sim(m, prefs);
    sim.run(1); // initialisation done
    r.setupSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::vector<double> ms;
    for (unsigned k = 0; k < o.repeats; k++) { // the runs continue: both models stay in step
        t0 = std::chrono::steady_clock::now();
        sim.run(o.steps);
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count() /
            o.steps);
    }
    r.ms = median(ms);
    sim.pull("Out", "acc");
    sim.pull("In", "spikes");
    const auto acc = sim.view<float>("Out", "acc");
    const auto spikes = sim.view<float>("In", "spikes");
    double total = 0;
    for (float s : spikes)
        total += s;
    r.spikesPerStep = total / (1.0 + double(o.steps) * o.repeats);
    r.acc.assign(acc.begin(), acc.end());
    return r;
}

} // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i], v = argv[i + 1];
        if (a == "--neurons")
            o.neurons = unsigned(std::stoul(v));
        else if (a == "--prob")
            o.prob = std::stod(v);
        else if (a == "--rate")
            o.rate = std::stod(v);
        else if (a == "--steps")
            o.steps = unsigned(std::stoul(v));
        else if (a == "--repeats")
            o.repeats = unsigned(std::stoul(v));
        else if (a == "--weights")
            o.weights = v;
        else if (a == "--backend")
            o.backend = v;
        else if (a == "--threads")
            o.threads = std::stoi(v);
        else {
            std::cerr << "unknown option " << a << "\n";
            return 2;
        }
    }
    if (o.weights != "constant" && o.weights != "normal") {
        std::cerr << "--weights must be constant or normal\n";
        return 2;
    }
    BackendPreferences prefs;
    prefs.backend = o.backend;
    if (o.backend == "cpu") prefs.threads = o.threads;
    const Result sparse = measure(MatrixType::Sparse, o, prefs);
    const Result procedural = measure(MatrixType::Procedural, o, prefs);
    double worst = 0, scale = 0;
    for (size_t j = 0; j < sparse.acc.size(); j++) {
        worst = std::max(worst, double(std::fabs(sparse.acc[j] - procedural.acc[j])));
        scale = std::max(scale, double(std::fabs(sparse.acc[j])));
    }
    const bool same = worst <= 1e-4 * std::max(1.0, scale);
    // Synapse state: Sparse stores row lengths, padded index rows and padded weights.
    Model probe("probe");
    build(probe, MatrixType::Sparse, o);
    probe.finalise();
    const double stride = probe.synapseGroup("Syn").maxRowLength();
    const double synapses = double(o.neurons) * o.neurons * o.prob;
    const double indexBytes = o.neurons <= 256 ? 1 : o.neurons <= 65536 ? 2 : 4;
    const double sparseBytes = double(o.neurons) * (4 + stride * (indexBytes + 4));
    const double events = sparse.spikesPerStep * o.neurons * o.prob; // per step
    std::printf("%u -> %u neurons, p %.4g (%.0f synapses, row stride %.0f), %.1f Hz, %s weights, "
                "%s\n",
                o.neurons, o.neurons, o.prob, synapses, stride, o.rate, o.weights.c_str(),
                o.backend.c_str());
    std::printf("Sparse:     %.3f ms/step, %.3g synaptic events/s, %.0f bytes of synapse state "
                "(%.2f per synapse), set-up %.2f s\n",
                sparse.ms, events / (sparse.ms * 1e-3), sparseBytes, sparseBytes / synapses,
                sparse.setupSeconds);
    std::printf("Procedural: %.3f ms/step, %.3g synaptic events/s, 0 bytes of synapse state, "
                "set-up %.2f s\n",
                procedural.ms, events / (procedural.ms * 1e-3), procedural.setupSeconds);
    std::printf("Procedural / Sparse step time: %.2f; outputs agree: %s (largest difference %.3g "
                "of %.3g)\n",
                procedural.ms / sparse.ms, same ? "yes" : "NO", worst, scale);
    std::printf("{\"sparse_ms\": %.4f, \"procedural_ms\": %.4f, \"ratio\": %.3f, "
                "\"sparse_bytes\": %.0f, \"procedural_bytes\": 0, \"events_per_step\": %.1f, "
                "\"agree\": %s}\n",
                sparse.ms, procedural.ms, procedural.ms / sparse.ms, sparseBytes, events,
                same ? "true" : "false");
    return same ? 0 : 1;
}
