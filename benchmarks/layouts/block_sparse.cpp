// Event-driven propagation through BlockSparse against Sparse (and Dense) connectivity:
//   bench_layout_block_sparse [--neurons 8192] [--densities 0.01,0.05,0.1,0.25] [--rate 10]
//                             [--steps 100] [--repeats 3] [--backend cpu] [--threads 1]
//                             [--dense 1]
// N Bernoulli sources spiking at `rate` [Hz] (dt 1 ms) drive N non-spiking targets. For each
// density d: Sparse with FixedProbability(d) and BlockSparse with b = 8, 16, 32 at block density
// d (the same expected synapse count), constant weights; Dense once, for reference (every pair a
// synapse). Prints ms per step (median of the repeats), synaptic events per second (spikes x
// synapses per spike / propagation time), bytes of connectivity per synapse, the ratio of each
// BlockSparse to Sparse's events/s (measured in this run), then one JSON line. The propagation
// time is the step time less that of the same neurons without the synapse group (measured first:
// the sources' random draws alone cost tens of microseconds a step).
#include "bench_util.hpp"
#include "layer_models.hpp"
#include "spikeforge/model.hpp"
#include "spikeforge/models.hpp"
#include "spikeforge/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace spikeforge;

namespace {

struct Options {
    unsigned neurons = 8192, steps = 100, repeats = 3;
    std::vector<double> densities = {0.01, 0.05, 0.1, 0.25};
    double rate = 10.0;
    std::string backend = "cpu";
    int threads = 1;
    bool dense = true;
};

struct Kind {
    MatrixType type;
    unsigned block;    // BlockSparse only
    bool none = false; // no synapse group: the neurons' own cost
    std::string label() const {
        if (none) return "(neurons only)";
        switch (type) {
        case MatrixType::Dense:
            return "Dense";
        case MatrixType::Sparse:
            return "Sparse";
        case MatrixType::BlockSparse:
            return "BlockSparse b=" + std::to_string(block);
        case MatrixType::Toeplitz:
        case MatrixType::Procedural:
            break;
        }
        return "?";
    }
};

struct Result {
    double ms = 0, spikesPerStep = 0, synapses = 0, indexBytes = 0;
};

Result measure(const Kind& k, double density, const Options& o, const BackendPreferences& prefs) {
    Model m("block_sparse_bench");
    m.setDT(1.0);
    m.setSeed(5);
    m.addNeuronGroup("In", o.neurons, sfbench::bernoulli(), {{"p", o.rate * 1e-3}},
                     {{"spikes", 0.0}});
    m.addNeuronGroup("Out", o.neurons, sfbench::accumulate(), {}, {{"acc", 0.0}});
    const WeightUpdateInit wu{sfbench::pulse(), {}, {{"g", 0.25}}, {}, {}};
    const PostsynapticInit ps{models::DeltaCurr(), {}, {}};
    switch (k.none ? MatrixType::Toeplitz : k.type) {
    case MatrixType::Dense:
        m.addSynapseGroup("Syn", k.type, 0, "In", "Out", wu, ps);
        break;
    case MatrixType::Sparse:
        m.addSynapseGroup("Syn", k.type, 0, "In", "Out", wu, ps, init::FixedProbability(density));
        break;
    case MatrixType::BlockSparse:
        m.addSynapseGroup("Syn", k.type, 0, "In", "Out", wu, ps,
                          BlockSparseInit{k.block, BlockLayout::Random, density});
        break;
    case MatrixType::Toeplitz: // (neurons only)
        break;
    case MatrixType::Procedural:
        throw std::logic_error("not benchmarked here");
    }
    Simulation sim(m, prefs);
    Result r;
    r.synapses = k.none ? 0.0 : double(sim.synapseCount("Syn"));
    switch (k.none ? MatrixType::Toeplitz : k.type) {
    case MatrixType::Dense:
        r.indexBytes = 0;
        break;
    case MatrixType::Sparse: { // row lengths and padded index rows
        const auto& sg = m.synapseGroup("Syn");
        r.indexBytes = 4.0 * o.neurons + double(o.neurons) * sg.maxRowLength() *
                                             (o.neurons <= 256     ? 1
                                              : o.neurons <= 65536 ? 2
                                                                   : 4);
        break;
    }
    case MatrixType::BlockSparse: { // one block-column per tile
        const auto& sg = m.synapseGroup("Syn");
        r.indexBytes = 4.0 * sg.numBlockRows() * sg.blocksPerRow();
        break;
    }
    case MatrixType::Toeplitz:
    case MatrixType::Procedural:
        break;
    }
    sim.run(1);
    r.ms = sfbench::msPerStep(sim, o.steps, o.repeats);
    sim.pull("In", "spikes");
    double total = 0;
    for (float s : sim.view<float>("In", "spikes"))
        total += s;
    r.spikesPerStep = total / (1.0 + double(o.steps) * o.repeats);
    return r;
}

} // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i], v = argv[i + 1];
        if (a == "--neurons")
            o.neurons = unsigned(std::stoul(v));
        else if (a == "--densities")
            o.densities = sfbench::parseList(v);
        else if (a == "--rate")
            o.rate = std::stod(v);
        else if (a == "--steps")
            o.steps = unsigned(std::stoul(v));
        else if (a == "--repeats")
            o.repeats = unsigned(std::stoul(v));
        else if (a == "--backend")
            o.backend = v;
        else if (a == "--threads")
            o.threads = std::stoi(v);
        else if (a == "--dense")
            o.dense = v != "0";
        else {
            std::cerr << "unknown option " << a << "\n";
            return 2;
        }
    }
    const BackendPreferences prefs = sfbench::preferences(o.backend, o.threads);
    std::printf("%u -> %u neurons, %.1f Hz, %s, %d thread(s); median of %u x %u steps\n", o.neurons,
                o.neurons, o.rate, o.backend.c_str(), o.threads, o.repeats, o.steps);
    const Result base = measure(Kind{MatrixType::Dense, 0, true}, 0.0, o, prefs);
    std::printf("neurons alone: %.4f ms/step (subtracted below)\n", base.ms);
    std::printf("%-8s %-16s %10s %10s %12s %14s %10s %9s\n", "density", "layout", "ms/step",
                "net ms", "synapses", "events/s", "index B/syn", "vs Sparse");
    std::string json = "{\"neurons\": " + std::to_string(o.neurons) +
                       ", \"rate_hz\": " + std::to_string(o.rate) + ", \"backend\": \"" +
                       o.backend + "\", \"neurons_only_ms\": " + std::to_string(base.ms) +
                       ", \"results\": [";
    bool first = true;
    auto report = [&](double density, const Kind& k, const Result& r, double sparseRate) {
        const double net = std::max(r.ms - base.ms, 1e-6);
        const double events = r.spikesPerStep * r.synapses / o.neurons / (net * 1e-3);
        const double ratio = sparseRate > 0 ? events / sparseRate : 0;
        std::printf("%-8.3g %-16s %10.4f %10.4f %12.0f %14.3g %10.3f %9s\n", density,
                    k.label().c_str(), r.ms, net, r.synapses, events,
                    r.indexBytes / std::max(1.0, r.synapses),
                    sparseRate > 0 ? (std::to_string(ratio).substr(0, 5) + "x").c_str() : "-");
        json += std::string(first ? "" : ", ") + "{\"density\": " + std::to_string(density) +
                ", \"layout\": \"" + k.label() + "\", \"ms_per_step\": " + std::to_string(r.ms) +
                ", \"net_ms_per_step\": " + std::to_string(net) +
                ", \"synapses\": " + std::to_string(r.synapses) +
                ", \"events_per_s\": " + std::to_string(events) +
                ", \"vs_sparse\": " + std::to_string(ratio) + "}";
        first = false;
        return events;
    };
    if (o.dense) {
        const Kind dense{MatrixType::Dense, 0};
        report(1.0, dense, measure(dense, 1.0, o, prefs), 0);
    }
    for (double d : o.densities) {
        const Kind sparseKind{MatrixType::Sparse, 0};
        const double sparseRate = report(d, sparseKind, measure(sparseKind, d, o, prefs), 0);
        for (unsigned b : {8u, 16u, 32u}) {
            const Kind k{MatrixType::BlockSparse, b};
            report(d, k, measure(k, d, o, prefs), sparseRate);
        }
    }
    std::printf("%s]}\n", json.c_str());
    return 0;
}
