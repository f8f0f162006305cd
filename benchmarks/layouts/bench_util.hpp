#pragma once
// What the layout benchmarks share: the median, timing a simulation per step, and the backend
// preferences their --backend and --threads options give.
#include "spikeforge/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <string>
#include <vector>

namespace sfbench {

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

// The median over `repeats` runs of `steps` steps of the milliseconds per step [ms].
inline double msPerStep(spikeforge::Simulation& sim, unsigned steps, unsigned repeats) {
    std::vector<double> ms;
    for (unsigned i = 0; i < repeats; i++) {
        const auto t0 = std::chrono::steady_clock::now();
        sim.run(steps);
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count() /
            steps);
    }
    return median(ms);
}

// "0.01,0.05,0.1" as numbers (the benchmarks' list options).
inline std::vector<double> parseList(const std::string& text) {
    std::vector<double> out;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ','))
        out.push_back(std::stod(item));
    return out;
}

// --backend NAME --threads N (threads on the cpu backend only).
inline spikeforge::BackendPreferences preferences(const std::string& backend, int threads) {
    spikeforge::BackendPreferences prefs;
    prefs.backend = backend;
    if (backend == "cpu") prefs.threads = threads;
    return prefs;
}

} // namespace sfbench
