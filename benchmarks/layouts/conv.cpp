// A convolution layer as Toeplitz connectivity against the same weights as a Dense matrix:
//   bench_layout_conv [--height 32] [--width 32] [--channels 16] [--kernel 3] [--rate 0.05]
//                     [--steps 200] [--repeats 3] [--backend cpu] [--threads 1]
// H x W x C Poisson-like sources (each spikes with probability `rate` per step) drive an
// H x W x C layer through a k x k convolution (stride 1, padding k / 2, float). The Dense
// group's weights are read from the Toeplitz group through the codec, so both deliver the same
// input; the program checks that they do (the targets' summed input, to float rounding) before
// it reports. Prints step time medians [ms], the ratio Dense / Toeplitz, the bytes of the
// synapse state of each, then one JSON line.
#include "layer_models.hpp"
#include "spikeforge/model.hpp"
#include "spikeforge/models.hpp"
#include "spikeforge/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

using namespace spikeforge;

namespace {

struct Options {
    unsigned height = 32, width = 32, channels = 16, kernel = 3, steps = 200, repeats = 3;
    double rate = 0.05;
    std::string backend = "cpu";
    int threads = 1;
};

using sfbench::accumulate;
using sfbench::bernoulli;
using sfbench::pulse;

void addLayers(Model& m, const Options& o) {
    m.setDT(1.0);
    m.setSeed(1234);
    const unsigned n = o.height * o.width * o.channels;
    m.addNeuronGroup("In", n, bernoulli(), {{"p", o.rate}}, {{"spikes", 0.0}});
    m.addNeuronGroup("Out", n, accumulate(), {}, {{"acc", 0.0}});
}

ToeplitzConnectivityInit conv(const Options& o) {
    return init::Conv2D({{"conv_kh", o.kernel},
                         {"conv_kw", o.kernel},
                         {"conv_ih", o.height},
                         {"conv_iw", o.width},
                         {"conv_ic", o.channels},
                         {"conv_oc", o.channels},
                         {"conv_padh", o.kernel / 2},
                         {"conv_padw", o.kernel / 2}});
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Median step time [ms] over the repeats, and the targets' summed input after the last.
std::pair<double, std::vector<float>> timeSteps(Simulation& sim, const Options& o) {
    std::vector<double> ms;
    sim.run(5);                                // warm up
    for (unsigned r = 0; r < o.repeats; r++) { // both models draw the same spikes (same seed)
        const auto t0 = std::chrono::steady_clock::now();
        sim.run(o.steps);
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count() /
            o.steps);
    }
    sim.pull("Out", "acc");
    const auto acc = sim.view<float>("Out", "acc");
    return {median(ms), {acc.begin(), acc.end()}};
}

unsigned parseUnsigned(const char* s) {
    return static_cast<unsigned>(std::stoul(s));
}

} // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--height")
            o.height = parseUnsigned(argv[i + 1]);
        else if (a == "--width")
            o.width = parseUnsigned(argv[i + 1]);
        else if (a == "--channels")
            o.channels = parseUnsigned(argv[i + 1]);
        else if (a == "--kernel")
            o.kernel = parseUnsigned(argv[i + 1]);
        else if (a == "--steps")
            o.steps = parseUnsigned(argv[i + 1]);
        else if (a == "--repeats")
            o.repeats = parseUnsigned(argv[i + 1]);
        else if (a == "--rate")
            o.rate = std::stod(argv[i + 1]);
        else if (a == "--backend")
            o.backend = argv[i + 1];
        else if (a == "--threads")
            o.threads = std::stoi(argv[i + 1]);
        else {
            std::cerr << "unknown option " << a << "\n";
            return 2;
        }
    }
    BackendPreferences prefs;
    prefs.backend = o.backend;
    if (o.backend == "cpu") prefs.threads = o.threads;

    Model tm("conv_toeplitz");
    addLayers(tm, o);
    tm.addSynapseGroup("Conv", MatrixType::Toeplitz, 0, "In", "Out",
                       {pulse(), {}, {{"g", init::Normal(0.0, 0.1)}}, {}, {}},
                       {models::DeltaCurr(), {}, {}}, conv(o));
    Simulation tsim(tm, prefs);
    // The Dense group holds the same weights, summed per pair, read through the codec.
    const unsigned n = o.height * o.width * o.channels;
    const auto pairs = tsim.synapses("Conv");
    const auto values = tsim.synapseValues("Conv", "g");
    Model dm("conv_dense");
    addLayers(dm, o);
    dm.addSynapseGroup("Conv", MatrixType::Dense, 0, "In", "Out",
                       {pulse(), {}, {{"g", 0.0}}, {}, {}}, {models::DeltaCurr(), {}, {}});
    Simulation dsim(dm, prefs);
    {
        auto g = dsim.view<float>("Conv", "g");
        std::fill(g.begin(), g.end(), 0.0f);
        for (size_t k = 0; k < pairs.size(); k++)
            g[size_t(pairs[k].pre) * n + pairs[k].post] += float(values[k]);
        dsim.push("Conv", "g");
    }
    const auto [toeplitzMs, toeplitzAcc] = timeSteps(tsim, o);
    const auto [denseMs, denseAcc] = timeSteps(dsim, o);
    double worst = 0.0, scale = 0.0;
    for (size_t j = 0; j < n; j++) {
        worst = std::max(worst, double(std::fabs(toeplitzAcc[j] - denseAcc[j])));
        scale = std::max(scale, double(std::fabs(denseAcc[j])));
    }
    const bool same = worst <= 1e-4 * std::max(1.0, scale);
    const double kernelBytes = double(o.kernel) * o.kernel * o.channels * o.channels * 4;
    const double denseBytes = double(n) * n * 4;
    std::printf("conv %ux%ux%u -> %ux%ux%u, %ux%u kernel, rate %.3f/step, %u steps, %s\n", o.height,
                o.width, o.channels, o.height, o.width, o.channels, o.kernel, o.kernel, o.rate,
                o.steps, o.backend.c_str());
    std::printf("Toeplitz: %.3f ms/step, %.0f bytes of weights\n", toeplitzMs, kernelBytes);
    std::printf("Dense:    %.3f ms/step, %.0f bytes of weights\n", denseMs, denseBytes);
    std::printf("Dense / Toeplitz step time: %.2f; outputs agree: %s (largest difference %.3g "
                "of %.3g)\n",
                denseMs / toeplitzMs, same ? "yes" : "NO", worst, scale);
    std::printf("{\"toeplitz_ms\": %.4f, \"dense_ms\": %.4f, \"ratio\": %.3f, "
                "\"toeplitz_weight_bytes\": %.0f, \"dense_weight_bytes\": %.0f, \"agree\": %s}\n",
                toeplitzMs, denseMs, denseMs / toeplitzMs, kernelBytes, denseBytes,
                same ? "true" : "false");
    return same ? 0 : 1;
}
