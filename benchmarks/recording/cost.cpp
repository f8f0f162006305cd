// What spike recording costs a COBA run (issue #19: ≤ 5 %):
//   bench_recording [--neurons 4000] [--prob 0.02] [--duration-ms 10000] [--repeats 11]
//                   [--backend cpu] [--threads 1] [--chunk-steps 0]
// Two simulations of the same network (examples/coba_model.hpp), one with spike recording on
// both populations, one without. Each repeat runs both from the initial state, in alternating
// order; the recorded run is timed from run() to the end of pullRecording(), so the decode of the
// last chunk and the delivery of every spike (to a counting sink, as `spikeforge simulate` does)
// are inside the time. Checks that the recorded spikes are the same in every repeat and that the
// rates are those of COBA, then prints the medians, the ratio of medians, the median and minimum
// of the per-repeat ratios, and one JSON line.
#include "../../examples/coba_model.hpp"
#include "spikeforge/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

using namespace spikeforge;

namespace {

struct Options {
    unsigned neurons = 4000, repeats = 11;
    double prob = 0.02, durationMs = 10000.0; // [ms]
    std::string backend = "cpu";
    int threads = 1;
    unsigned chunkSteps = 0; // 0: the runtime's choice (Simulation::setRecordingChunkSteps)
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

std::string cpuName() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown CPU";
}

double secondsSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool parse(int argc, char** argv, Options& o) {
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i], v = argv[i + 1];
        if (a == "--neurons")
            o.neurons = unsigned(std::stoul(v));
        else if (a == "--prob")
            o.prob = std::stod(v);
        else if (a == "--duration-ms")
            o.durationMs = std::stod(v);
        else if (a == "--repeats")
            o.repeats = unsigned(std::stoul(v));
        else if (a == "--backend")
            o.backend = v;
        else if (a == "--chunk-steps")
            o.chunkSteps = unsigned(std::stoul(v));
        else if (a == "--threads")
            o.threads = std::stoi(v);
        else {
            std::cerr << "unknown option " << a << "\n";
            return false;
        }
    }
    if (argc % 2 == 0 || o.repeats == 0 || o.neurons < 10) {
        std::cerr << "usage: bench_recording [--neurons N>=10] [--prob P] [--duration-ms T] "
                     "[--repeats R>=1] [--backend B] [--threads T] [--chunk-steps S]\n";
        return false;
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse(argc, argv, o)) return 2;
    BackendPreferences prefs;
    prefs.backend = o.backend;
    if (o.backend == "cpu") prefs.threads = o.threads;

    Model off("coba_unrecorded"), on("coba_recorded");
    coba::build(off, o.neurons, o.prob, false);
    coba::build(on, o.neurons, o.prob, true);
    Simulation simOff(off, prefs), simOn(on, prefs);
    uint64_t delivered = 0;
    simOn.setSpikeSink([&](const std::string&, std::span<const SpikeEvent> spikes) {
        delivered += spikes.size();
    });
    const auto steps = static_cast<uint64_t>(o.durationMs / off.dt() + 0.5);

    std::vector<double> tOff, tOn, ratios;
    uint64_t firstCount = 0;
    for (unsigned r = 0; r < o.repeats; r++) {
        double secondsOff = 0, secondsOn = 0;
        for (int k = 0; k < 2; k++) {
            if ((k == 0) == (r % 2 == 0)) { // alternate which goes first
                simOff.reset();
                const auto t0 = std::chrono::steady_clock::now();
                simOff.run(steps);
                secondsOff = secondsSince(t0);
            } else {
                simOn.reset();
                if (o.chunkSteps) simOn.setRecordingChunkSteps(o.chunkSteps);
                simOn.setRecordingWindow(steps);
                delivered = 0;
                const auto t0 = std::chrono::steady_clock::now();
                simOn.run(steps);
                simOn.pullRecording();
                secondsOn = secondsSince(t0);
            }
        }
        if (r == 0) firstCount = delivered;
        if (delivered != firstCount) {
            std::cerr << "FAIL: repeat " << r << " recorded " << delivered << " spikes, repeat 0 "
                      << firstCount << ": the same run must record the same spikes\n";
            return 1;
        }
        tOff.push_back(secondsOff);
        tOn.push_back(secondsOn);
        ratios.push_back(secondsOn / secondsOff);
    }
    const double rateHz = double(firstCount) / (o.neurons * o.durationMs * 1e-3);
    if (rateHz < 5.0 || rateHz > 60.0) {
        std::cerr << "FAIL: mean rate " << rateHz << " Hz is not COBA's (about 20 Hz)\n";
        return 1;
    }
    const double ratio = median(tOn) / median(tOff);
    std::printf("COBA N=%u p=%.3g, %.0f ms (%llu steps), backend %s, %d thread(s); %s, %u cores\n",
                o.neurons, o.prob, o.durationMs, (unsigned long long)steps, o.backend.c_str(),
                o.threads, cpuName().c_str(), std::thread::hardware_concurrency());
    std::printf("recorded spikes: %llu (%.2f Hz mean rate), chunk %llu steps\n",
                (unsigned long long)firstCount, rateHz,
                (unsigned long long)simOn.memoryUsage().recordingChunkSteps);
    std::printf("without recording: median %.4f s (min %.4f)\n", median(tOff),
                *std::min_element(tOff.begin(), tOff.end()));
    std::printf("with recording:    median %.4f s (min %.4f)\n", median(tOn),
                *std::min_element(tOn.begin(), tOn.end()));
    std::printf("with / without: %.3f (ratio of medians); per repeat: median %.3f, min %.3f; "
                "target <= 1.05\n",
                ratio, median(ratios), *std::min_element(ratios.begin(), ratios.end()));
    std::printf("{\"neurons\": %u, \"steps\": %llu, \"repeats\": %u, \"off_s\": %.6f, \"on_s\": "
                "%.6f, \"ratio\": %.4f, \"ratio_median\": %.4f, \"spikes\": %llu}\n",
                o.neurons, (unsigned long long)steps, o.repeats, median(tOff), median(tOn), ratio,
                median(ratios), (unsigned long long)firstCount);
    return 0;
}
