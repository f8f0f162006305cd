// EventProp training benchmarks and experiments (benchmarks/README.md, "Training"):
//   bench_train_eventprop yinyang [options]   Yin-Yang: accuracy per epoch, epoch wall time
//   bench_train_eventprop shd [options]       synthetic SHD-shaped data: epoch wall time
// Options: --epochs N --hidden H --dt MS --batch B --readout sum|avg|exp|max|ttfs --lr X --decay X
//          --graph-steps N (cuda) --duration MS --w-in-mean X --w-in-sd X --w-out-mean X --w-out-sd
//          X --tau0 --tau1
//          --alpha
//          --backend NAME --threads N (cpu) --train N --test N --seed S --tau-mem MS --tau-syn MS
//          --reg X --reg-target N (hidden spike-count regulariser, LifParams::regStrength)
//          --rec dense|sparse|block_sparse --rec-density D --block-size B
//          --layout random|watts_strogatz|balanced --rewire P (shd: the recurrent connection)
//          --prune-every N --prune-fraction F (block_sparse: prune and regrow its tiles every N
//          training batches, BlockPruning)
// Prints one line per epoch and a last JSON line with the results. host_fraction is the share of
// the training epochs' wall time spent outside device work, 1 − Δbusy / Δwall
// (Simulation::deviceBusySeconds; "n/a" and null where the backend does not measure busy time).
#include "spikeforge/train/eventprop.hpp"
#include "spikeforge/train/dataset.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

using namespace spikeforge;
using namespace spikeforge::train;

namespace {

struct Args {
    std::string task;
    std::map<std::string, std::string> opts;
    double num(const std::string& k, double def) const {
        auto it = opts.find(k);
        return it == opts.end() ? def : std::stod(it->second);
    }
    std::string str(const std::string& k, const std::string& def) const {
        auto it = opts.find(k);
        return it == opts.end() ? def : it->second;
    }
};

Readout readoutOf(const std::string& s) {
    if (s == "sum") return Readout::SumVar;
    if (s == "exp") return Readout::AvgVarExpWeight;
    if (s == "avg") return Readout::AvgVar;
    if (s == "max") return Readout::MaxVar;
    throw std::runtime_error("unknown readout " + s);
}

// 1 − busy / wall as text, "n/a" when busy time is not measured.
std::string fractionText(std::optional<double> busy, double wall, const char* none) {
    if (!busy || wall <= 0.0) return none;
    char text[32];
    std::snprintf(text, sizeof text, "%.4f", 1.0 - *busy / wall);
    return text;
}

std::vector<uint32_t> iota(size_t n, uint32_t from = 0) {
    std::vector<uint32_t> v(n);
    std::iota(v.begin(), v.end(), from);
    return v;
}

// One dataset holding the training examples first, then the test examples.
EventDataset concatenate(const EventDataset& a, const EventDataset& b) {
    EventDatasetBuilder out(a.numChannels(), a.numClasses(), std::max(a.duration(), b.duration()));
    for (const EventDataset* d : {&a, &b})
        for (size_t i = 0; i < d->size(); i++)
            out.add(d->label(i), d->times(i), d->channels(i));
    return std::move(out).build();
}

// The SHD network's recurrent hidden connection: --rec dense (default) | sparse (each pair with
// probability --rec-density) | block_sparse (--block-size, block density --rec-density,
// --layout random|watts_strogatz|balanced, --rewire).
ConnectionParams recurrent(const Args& a, double tauS) {
    ConnectionParams p{{0.0, 0.02}, tauS};
    const std::string kind = a.str("rec", "dense");
    const double density = a.num("rec-density", 0.1);
    if (kind == "sparse") {
        p.probability = density;
    } else if (kind == "block_sparse") {
        const std::string layout = a.str("layout", "random");
        BlockSparseInit b{unsigned(a.num("block-size", 16)), BlockLayout::Random, density,
                          a.num("rewire", 0.0)};
        if (layout == "watts_strogatz")
            b.layout = BlockLayout::WattsStrogatz;
        else if (layout == "balanced")
            b.layout = BlockLayout::Balanced;
        else if (layout != "random")
            throw std::runtime_error("unknown layout " + layout);
        p.blocks = b;
        if (a.num("prune-every", 0) > 0)
            p.pruning = BlockPruning{uint32_t(a.num("prune-every", 0)),
                                     a.num("prune-fraction", 0.1), 0};
    } else if (kind != "dense") {
        throw std::runtime_error("unknown --rec " + kind);
    }
    return p;
}

int run(const Args& a) {
    const bool yy = a.task == "yinyang";
    const size_t nTrain = size_t(a.num("train", yy ? 5000 : 8156));
    const size_t nTest = size_t(a.num("test", yy ? 1000 : 0));
    EventDataset train = yy ? makeYinYang(nTrain, 42) : makeSyntheticShd(nTrain, 42);
    EventDataset test = yy ? makeYinYang(nTest, 40) : makeSyntheticShd(nTest, 40);
    const double dt = a.num("dt", yy ? 0.1 : 1.0);
    const double duration = a.num("duration", yy ? 60.0 : 1000.0);
    Network net;
    net.addSpikeInput("In", {train.numChannels()});
    LifParams hid{a.num("tau-mem", 20.0), 1.0, uint32_t(a.num("ring", yy ? 64 : 1500))};
    hid.regStrength = a.num("reg", 0.0);
    hid.regTarget = a.num("reg-target", 14.0);
    const uint32_t numHidden = uint32_t(a.num("hidden", yy ? 200 : 256));
    net.addLif("Hid", numHidden, hid);
    const std::string readout = a.str("readout", yy ? "avg" : "exp");
    if (readout == "ttfs") {
        FirstSpikeReadoutParams fs;
        fs.lif = {a.num("tau-mem", 20.0), 1.0, uint32_t(a.num("ring-out", 64))};
        fs.tau0 = a.num("tau0", 0.5);
        fs.tau1 = a.num("tau1", 6.4);
        fs.alpha = a.num("alpha", 3e-3);
        net.addFirstSpikeReadout("Out", train.numClasses(), fs);
    } else {
        net.addLeakyIntegrate("Out", train.numClasses(),
                              {a.num("tau-mem", 20.0), readoutOf(readout)});
    }
    const double tauS = a.num("tau-syn", 5.0);
    const double nIn = train.numChannels();
    net.addConnection(
        "InHid", "In", "Hid",
        {{a.num("w-in-mean", yy ? 1.5 : 0.03), a.num("w-in-sd", yy ? 0.78 : 0.01)}, tauS});
    if (!yy) net.addConnection("HidHid", "Hid", "Hid", recurrent(a, tauS));
    net.addConnection(
        "HidOut", "Hid", "Out",
        {{a.num("w-out-mean", yy ? 0.0 : 0.0), a.num("w-out-sd", yy ? 0.3 : 0.03)}, tauS});
    (void)nIn;
    EventPropOptions opt;
    opt.dt = dt;
    opt.exampleTimesteps = uint32_t(std::lround(duration / dt));
    opt.batchSize = uint32_t(a.num("batch", 32));
    opt.adam.learningRate = a.num("lr", yy ? 5e-3 : 1e-3);
    opt.seed = uint64_t(a.num("seed", 1));
    BackendPreferences prefs;
    prefs.backend = a.str("backend", "cpu");
    prefs.cudaGraphSteps = uint32_t(a.num("graph-steps", 0)); // cuda: one graph per batch at >= 2T
    prefs.threads = uint32_t(a.num("threads", 0));            // cpu: 0 = every core
    EventPropCompiler c(net, opt, prefs);
    c.setDataset(concatenate(train, test));
    const auto testIdx = iota(test.size(), uint32_t(train.size()));
    const int epochs = int(a.num("epochs", 10));
    const double decay = a.num("decay", yy ? 0.95 : 1.0);
    double lr = opt.adam.learningRate, epochSum = 0.0, testAcc = 0.0, trainAcc = 0.0;
    double lastRate = 0.0; // hidden spikes per neuron and training example, last epoch
    // The epoch's hidden spikes, from the counter boostSilentNeurons reads (summed over epochs).
    auto hiddenSpikes = [&] {
        Simulation& sim = c.simulation();
        sim.pull("EventPropEpochSpikesHid", "count");
        double sum = 0.0;
        for (float n : sim.view<float>("EventPropEpochSpikesHid", "count"))
            sum += n;
        return sum;
    };
    double spikesBefore = hiddenSpikes();
    std::optional<double> busySum = 0.0; // [s] device busy time over the training epochs
    for (int e = 0; e < epochs; e++) {
        const auto order = shuffledIndices(train.size(), 1000 + e);
        std::vector<uint32_t> o(order.begin(), order.end());
        c.setLearningRate(lr);
        const std::optional<double> busy0 = c.simulation().deviceBusySeconds(); // [s]
        const auto t0 = std::chrono::steady_clock::now();
        const Metrics m = c.trainEpoch(o);
        const double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const std::optional<double> busy1 = c.simulation().deviceBusySeconds();
        std::optional<double> busy; // [s] this epoch's
        if (busy0 && busy1) busy = *busy1 - *busy0;
        busySum = busySum && busy ? std::optional<double>(*busySum + *busy) : std::nullopt;
        epochSum += secs;
        trainAcc = m.accuracy();
        Metrics t;
        if (!testIdx.empty()) t = c.evaluate(testIdx);
        testAcc = t.accuracy();
        const double spikesAfter = hiddenSpikes();
        lastRate = (spikesAfter - spikesBefore) / (double(numHidden) * double(o.size()));
        spikesBefore = spikesAfter;
        std::printf("epoch %d: train loss %.4f acc %.4f | test loss %.4f acc %.4f | %.2f s | "
                    "host_fraction %s | hidden spikes/neuron/example %.2f\n",
                    e, m.meanLoss(), m.accuracy(), t.meanLoss(), t.accuracy(), secs,
                    fractionText(busy, secs, "n/a").c_str(), lastRate);
        std::fflush(stdout);
        lr *= decay;
    }
    std::printf("{\"task\": \"%s\", \"backend\": \"%s\", \"train_accuracy\": %.4f, "
                "\"test_accuracy\": %.4f, \"epochs\": %d, \"epoch_s\": %.3f, "
                "\"host_fraction\": %s, \"hidden_spikes_per_neuron\": %.3f}\n",
                a.task.c_str(), prefs.backend.c_str(), trainAcc, testAcc, epochs,
                epochs ? epochSum / epochs : 0.0, fractionText(busySum, epochSum, "null").c_str(),
                lastRate);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: bench_train_eventprop yinyang|shd [--key value ...]\n";
        return 2;
    }
    Args a;
    a.task = argv[1];
    for (int i = 2; i + 1 < argc; i += 2) {
        std::string k = argv[i];
        if (k.rfind("--", 0) != 0) {
            std::cerr << "bad option " << k << "\n";
            return 2;
        }
        a.opts[k.substr(2)] = argv[i + 1];
    }
    try {
        return run(a);
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 1;
    }
}
