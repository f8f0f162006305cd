// The Potjans–Diesmann microcircuit (examples/microcircuit.toml) at small scale, loaded the way
// `spikeforge simulate` loads it, on every usable backend: every population fires at a low,
// irregular rate, inhibitory populations fire faster than the excitatory population of their
// layer, and (where opencl is usable) cpu and opencl give the same population rates.
//
// Scale: 4 % of the neurons (3,087), half the in-degrees (k_scale = 0.5: weights × √2 and the
// lost mean input as DC, docs/examples.md), 5.9 million synapses, 1.5 s of model time; the
// first 200 ms (the transient from the random initial voltages) are left out of every
// statistic. Full in-degrees at this scale (k_scale = 1) drive L5E above L5I: with 4 % of the
// sources every neuron shares far more of its inputs with its neighbours than at full scale.
#include "backend_fixture.hpp"
#include "example_runner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <vector>

using namespace spikeforge;

namespace {

constexpr double kDurationMs = 1500.0; // [ms] model time run
constexpr double kSkipMs = 200.0;      // [ms] transient left out
const std::vector<std::string> kSets = {"scale=0.04", "k_scale=0.5"};
const std::vector<std::string> kLayers = {"L23", "L4", "L5", "L6"};

struct PopulationStats {
    unsigned size = 0;
    uint64_t spikes = 0;    // after the transient
    double seconds = 0.0;   // [s] analysed time
    double rateHz = 0.0;    // spikes / (size × analysed time)
    double meanCv = 0.0;    // mean over neurons with at least kMinIsis intervals
    unsigned cvNeurons = 0; // how many neurons the mean CV is over
};

constexpr unsigned kMinIsis = 3;

// Rate and ISI irregularity of one population. The CV of a neuron's ISIs is sd / mean with the
// n - 1 estimator of the variance.
PopulationStats statsOf(const std::vector<SpikeEvent>& spikes, unsigned size, double endMs) {
    PopulationStats s;
    s.size = size;
    std::vector<std::vector<double>> times(size);
    for (const SpikeEvent& e : spikes)
        if (e.time >= kSkipMs) times[e.neuron].push_back(e.time);
    double cvSum = 0.0;
    for (const auto& t : times) {
        s.spikes += t.size();
        if (t.size() < kMinIsis + 1) continue;
        double sum = 0.0, sumSq = 0.0;
        for (size_t i = 1; i < t.size(); ++i) {
            const double isi = t[i] - t[i - 1];
            sum += isi;
            sumSq += isi * isi;
        }
        const double n = double(t.size() - 1);
        const double mean = sum / n;
        const double var = (sumSq - n * mean * mean) / (n - 1.0);
        cvSum += std::sqrt(std::max(var, 0.0)) / mean;
        ++s.cvNeurons;
    }
    s.seconds = (endMs - kSkipMs) * 1e-3;
    s.rateHz = double(s.spikes) / (double(size) * s.seconds);
    s.meanCv = s.cvNeurons > 0 ? cvSum / s.cvNeurons : 0.0;
    return s;
}

// One run per backend per test process: the parameterised test and the cross-backend test
// share it.
const std::map<std::string, PopulationStats>& microcircuitOn(const std::string& backend) {
    static std::map<std::string, std::map<std::string, PopulationStats>> cache;
    static std::mutex mutex;
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(backend);
    if (it != cache.end()) return it->second;
    BackendPreferences prefs;
    prefs.backend = backend;
    sftest::ExampleRun run("microcircuit.toml", kSets, prefs);
    const auto spikes = run.run(kDurationMs);
    std::map<std::string, PopulationStats> stats;
    for (const auto& g : run.config.model->neuronGroups())
        stats[g->name()] = statsOf(spikes.at(g->name()), g->size(), kDurationMs);
    for (const auto& [name, s] : stats) // the margins, for whoever reads the log
        std::printf("microcircuit on %s: %-5s %6.2f Hz, ISI CV %.2f over %u neurons\n",
                    backend.c_str(), name.c_str(), s.rateHz, s.meanCv, s.cvNeurons);
    return cache.emplace(backend, std::move(stats)).first->second;
}

bool usable(const std::string& backend) {
    const auto b = sftest::usableBackends();
    return std::find(b.begin(), b.end(), backend) != b.end();
}

} // namespace

class Microcircuit : public sftest::BackendTest {};

// Asynchronous irregular activity: 0.1–30 Hz in every population (the full model's rates are
// 0.9–8.7 Hz), and a mean ISI CV above 0.5 in each (a Poisson process has 1, the full model
// about 0.7–1; tonic, clock-like firing stays below 0.3) over at least 10 neurons with 3 or
// more intervals.
TEST_P(Microcircuit, EveryPopulationFiresAtALowIrregularRate) {
    const auto& stats = microcircuitOn(GetParam());
    ASSERT_EQ(stats.size(), 8u);
    for (const auto& [name, s] : stats) {
        SCOPED_TRACE(name);
        EXPECT_GE(s.rateHz, 0.1);
        EXPECT_LE(s.rateHz, 30.0);
        EXPECT_GE(s.cvNeurons, 10u);
        EXPECT_GT(s.meanCv, 0.5);
    }
}

// In every layer the inhibitory population fires faster than the excitatory one (full model:
// L2/3 0.9 vs 3.0 Hz, L4 4.4 vs 5.9, L5 7.6 vs 8.6, L6 1.1 vs 7.8).
TEST_P(Microcircuit, InhibitoryAboveExcitatoryInEachLayer) {
    const auto& stats = microcircuitOn(GetParam());
    for (const std::string& layer : kLayers) {
        SCOPED_TRACE(layer);
        ASSERT_TRUE(stats.count(layer + "E") && stats.count(layer + "I"));
        EXPECT_GT(stats.at(layer + "I").rateHz, stats.at(layer + "E").rateHz);
    }
}

SF_INSTANTIATE_BACKEND_TESTS(Microcircuit);

// cpu and opencl build the same network (same seed: same connectivity, weights, delays and
// initial voltages) but sum inputs in different orders, so the chaotic spike trains part within
// milliseconds; the population rates are statistics of the same network and must agree. The
// tolerance is 15 % of the mean rate plus 5 standard errors of a Poisson count (sqrt of the
// spike count over both runs), which covers the run-to-run spread of rates seen between seeds.
TEST(MicrocircuitCrossBackend, CpuAndOpenclPopulationRatesAgree) {
    if (!usable("opencl")) GTEST_SKIP() << "the opencl backend is not usable on this machine";
    if (!usable("cpu")) GTEST_SKIP() << "the cpu backend is not usable on this machine";
    const auto& cpu = microcircuitOn("cpu");
    const auto& ocl = microcircuitOn("opencl");
    for (const auto& [name, c] : cpu) {
        SCOPED_TRACE(name);
        ASSERT_TRUE(ocl.count(name));
        const PopulationStats& o = ocl.at(name);
        const double mean = 0.5 * (c.rateHz + o.rateHz);
        const double hzPerSpike = 1.0 / (double(c.size) * c.seconds);
        const double tolerance =
            0.15 * mean + 5.0 * std::sqrt(double(c.spikes + o.spikes)) * hzPerSpike;
        EXPECT_NEAR(o.rateHz, c.rateHz, tolerance);
    }
}
