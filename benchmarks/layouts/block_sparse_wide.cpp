// A wide recurrent spiking layer on BlockSparse against Sparse connectivity (issue #20):
//   bench_layout_block_sparse_wide [--neurons 32768] [--density 0.01] [--steps 200]
//                                  [--repeats 3] [--budget-mib 1024] [--backend cpu]
//                                  [--threads 1]
// N LIF neurons (a constant drive just above threshold, membranes started at random: about
// 15-20 Hz, asynchronous) with all-to-all-at-`density` recurrent ExpCurr synapses whose weights
// are per-synapse variables drawn from Normal(0, 0.01 nA). Connectivity: BlockSparse b = 16 and
// 32 (Random and Watts-Strogatz layouts, block density `density`) and Sparse FixedProbability
// (`density`: the same expected synapse count). Dense is sized, not built: its N^2 weights
// against the memory budget. Prints, per connectivity: device bytes of the recurrent group
// (the model's device bytes less those of the neurons alone) and per synapse, whether it fits
// the budget, ms per step (median of the repeats), firing rate and synaptic events per second,
// then one JSON line; last, the cost of block pruning on the b = 16 random layer
// (Simulation::pruneBlocks of a tenth of its tiles: median of 5 calls, each waited for). dt = 0.1
// ms.
#include "bench_util.hpp"
#include "spikeforge/model.hpp"
#include "spikeforge/models.hpp"
#include "spikeforge/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

using namespace spikeforge;

namespace {

struct Options {
    unsigned neurons = 32768, steps = 200, repeats = 3;
    double density = 0.01, budgetMiB = 1024;
    std::string backend = "cpu";
    int threads = 1;
};

struct Connectivity {
    std::string label;
    MatrixType type = MatrixType::Sparse;
    std::optional<BlockSparseInit> blocks; // BlockSparse only
    bool none = false;                     // the neurons alone
};

struct Result {
    double ms = 0, deviceBytes = 0, synapses = 0, spikesPerStep = 0;
};

constexpr double kDt = 0.1; // [ms]

void addLayer(Model& m, const Connectivity& c, const Options& o) {
    m.setDT(kDt);
    m.setSeed(7);
    // R = TauM / C = 80 MOhm: 0.2 nA holds V at -49 mV, 1 mV above threshold (ISI about 55 ms).
    m.addNeuronGroup("Hidden", o.neurons, models::LIF(),
                     {{"C", 0.25},
                      {"TauM", 20.0},
                      {"Vrest", -65.0},
                      {"Vreset", -65.0},
                      {"Vthresh", -50.0},
                      {"Ioffset", 0.2},
                      {"TauRefrac", 2.0}},
                     {{"V", init::Uniform(-65.0, -50.0)}, {"RefracTime", 0.0}})
        .setSpikeRecording(true);
    if (c.none) return;
    const WeightUpdateInit wu{models::StaticPulse(), {}, {{"g", init::Normal(0.0, 0.01)}}, {}, {}};
    const PostsynapticInit ps{models::ExpCurr(), {{"tau", 5.0}}, {}};
    if (c.blocks)
        m.addSynapseGroup("Rec", MatrixType::BlockSparse, 0, "Hidden", "Hidden", wu, ps, *c.blocks);
    else if (c.type == MatrixType::Sparse)
        m.addSynapseGroup("Rec", MatrixType::Sparse, 0, "Hidden", "Hidden", wu, ps,
                          init::FixedProbability(o.density));
    else
        m.addSynapseGroup("Rec", MatrixType::Dense, 0, "Hidden", "Hidden", wu, ps);
}

Result measure(const Connectivity& c, const Options& o, const BackendPreferences& prefs) {
    Model m("block_sparse_wide");
    addLayer(m, c, o);
    Simulation sim(m, prefs);
    Result r;
    r.synapses = c.none ? 0.0 : double(sim.synapseCount("Rec"));
    r.deviceBytes = double(sim.memoryUsage().deviceBytes);
    sim.setRecordingWindow(uint64_t(o.steps) * o.repeats + 1);
    sim.run(1);
    r.ms = sfbench::msPerStep(sim, o.steps, o.repeats);
    sim.pullRecording();
    r.spikesPerStep = double(sim.spikes("Hidden").size()) / (1.0 + double(o.steps) * o.repeats);
    return r;
}

// [ms] one pruneBlocks call removing and regrowing a tenth of the tiles (median of 5), and the
// tiles.
std::pair<double, uint64_t> pruneCost(const Options& o, const BackendPreferences& prefs) {
    BlockSparseInit blocks{16, BlockLayout::Random, o.density};
    blocks.prunedBy = "g";
    Model m("block_sparse_wide_prune");
    addLayer(m, {"pruned", MatrixType::BlockSparse, blocks, false}, o);
    Simulation sim(m, prefs);
    const SynapseGroup& sg = m.synapseGroup("Rec");
    const uint64_t tiles = uint64_t(sg.numBlockRows()) * sg.blocksPerRow();
    sim.pruneBlocks("Rec", uint32_t(tiles / 10)); // warm-up
    sim.checkErrors();
    std::vector<double> ms;
    for (int i = 0; i < 5; i++) {
        const auto t0 = std::chrono::steady_clock::now();
        sim.pruneBlocks("Rec", uint32_t(tiles / 10));
        sim.checkErrors(); // waits for the device
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
    }
    return {sfbench::median(ms), tiles};
}

bool parse(int argc, char** argv, Options& o) {
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i], v = argv[i + 1];
        if (a == "--neurons")
            o.neurons = unsigned(std::stoul(v));
        else if (a == "--density")
            o.density = std::stod(v);
        else if (a == "--steps")
            o.steps = unsigned(std::stoul(v));
        else if (a == "--repeats")
            o.repeats = unsigned(std::stoul(v));
        else if (a == "--budget-mib")
            o.budgetMiB = std::stod(v);
        else if (a == "--backend")
            o.backend = v;
        else if (a == "--threads")
            o.threads = std::stoi(v);
        else {
            std::cerr << "unknown option " << a << "\n";
            return false;
        }
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse(argc, argv, o)) return 2;
    const BackendPreferences prefs = sfbench::preferences(o.backend, o.threads);
    const double budget = o.budgetMiB * 1024 * 1024; // [B]
    std::printf("%u LIF neurons, recurrent at density %.3g, %s, %d thread(s), dt %.1f ms; "
                "median of %u x %u steps; budget %.0f MiB\n",
                o.neurons, o.density, o.backend.c_str(), o.threads, kDt, o.repeats, o.steps,
                o.budgetMiB);
    const Result base = measure({"(neurons only)", MatrixType::Sparse, {}, true}, o, prefs);
    { // Dense, sized from the model: one float per pair
        Model m("block_sparse_wide_dense");
        addLayer(m, {"Dense", MatrixType::Dense, {}, false}, o);
        m.finalise();
        const double bytes = 4.0 * double(m.synapseGroup("Rec").synapseVarElements());
        std::printf("Dense: %.0f synapses need %.2f GiB of weights: %s the budget (not run)\n",
                    double(o.neurons) * o.neurons, bytes / (1 << 30),
                    bytes <= budget ? "within" : "beyond");
    }
    std::printf("neurons alone: %.4f ms/step, %.1f MiB (subtracted below)\n", base.ms,
                base.deviceBytes / (1 << 20));
    std::printf("%-32s %12s %10s %8s %8s %10s %8s %12s\n", "connectivity", "synapses", "MiB",
                "B/syn", "budget", "ms/step", "rate Hz", "events/s");
    std::vector<Connectivity> kinds = {{"Sparse", MatrixType::Sparse, {}, false}};
    for (unsigned b : {16u, 32u})
        for (BlockLayout layout : {BlockLayout::Random, BlockLayout::WattsStrogatz})
            kinds.push_back(
                {"BlockSparse b=" + std::to_string(b) +
                     (layout == BlockLayout::Random ? " random" : " watts_strogatz"),
                 MatrixType::BlockSparse,
                 BlockSparseInit{b, layout, o.density, layout == BlockLayout::Random ? 0.0 : 0.1},
                 false});
    std::string json = "{\"neurons\": " + std::to_string(o.neurons) +
                       ", \"density\": " + std::to_string(o.density) + ", \"backend\": \"" +
                       o.backend + "\", \"results\": [";
    for (size_t i = 0; i < kinds.size(); i++) {
        const Result r = measure(kinds[i], o, prefs);
        const double bytes = r.deviceBytes - base.deviceBytes;
        const double rate = r.spikesPerStep / o.neurons / (kDt * 1e-3);    // [Hz]
        const double events = r.spikesPerStep * (r.synapses / o.neurons) / // per second
                              (std::max(r.ms - base.ms, 1e-6) * 1e-3);
        std::printf("%-32s %12.0f %10.1f %8.2f %8s %10.4f %8.1f %12.3g\n", kinds[i].label.c_str(),
                    r.synapses, bytes / (1 << 20), bytes / std::max(1.0, r.synapses),
                    bytes <= budget ? "fits" : "beyond", r.ms, rate, events);
        json += std::string(i ? ", " : "") + "{\"connectivity\": \"" + kinds[i].label +
                "\", \"synapses\": " + std::to_string(r.synapses) +
                ", \"bytes\": " + std::to_string(bytes) +
                ", \"ms_per_step\": " + std::to_string(r.ms) +
                ", \"rate_hz\": " + std::to_string(rate) +
                ", \"events_per_s\": " + std::to_string(events) + "}";
    }
    const auto [pruneMs, tiles] = pruneCost(o, prefs);
    std::printf("pruning a tenth of the %llu tiles (b=16 random): %.3f ms a call (median of 5)\n",
                static_cast<unsigned long long>(tiles), pruneMs);
    json += "], \"prune_ms\": " + std::to_string(pruneMs) +
            ", \"prune_tiles\": " + std::to_string(tiles / 10);
    std::printf("%s}\n", json.c_str());
    return 0;
}
