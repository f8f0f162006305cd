// The built-in Poisson neuron against the Poisson process it discretises: spike count, the mean
// and coefficient of variation of the inter-spike intervals, the first spike time, and silence at
// rate 0. Three groups of kNeurons neurons (20 Hz, 100 Hz, 0 Hz) run for kSteps steps of 0.1 ms.
//
// Expected values are those of a Poisson process of the given rate observed in the window
// [0, T) (T = kSteps · dt):
//  - the spike count is Poisson(N · rate · T);
//  - the complete intervals seen inside a window of length T have density ∝ (T - L) e^{-L/μ}
//    (μ = 1/rate): an interval of length L fits T - L of the window. Hence
//      E[L] = μ (T - 2μ) / (T - μ),  E[L²] = μ² (2T - 6μ) / (T - μ),
//    about a 1% correction to the mean at 20 Hz, which is why it is not ignored.
// Tolerances are kZ = 5 standard errors: SE(count) = sqrt(count), SE(mean ISI) ≈ μ / sqrt(n),
// SE(CV) ≈ 1 / sqrt(n) for n exponential intervals (delta method: Var(s²/m²) = 4/n). At 20 Hz that
// is 1.6% for the rate, mean ISI and CV; at 100 Hz 0.7%, tight enough to catch an interval one
// time step too long (1% at 100 Hz).
// Discretisation: spike times are multiples of dt. Spike times in steps are ceil(T_k) - 1 for the
// event times T_k of the continuous process (in steps), so counts and the summed intervals
// (which telescope) are exact; the interval variance changes by O(dt²), 2e-5 relative at 100 Hz.
// A Bernoulli-per-step discretisation would have CV sqrt(1 - rate · dt) instead of 1, so the CV
// tolerance also allows rate · dt / 2 (0.5% at 100 Hz).
#include "backend_fixture.hpp"
#include "spikeforge/models.hpp"

#include <cmath>
#include <limits>
#include <vector>

using namespace spikeforge;

namespace {

class PoissonTest : public sftest::BackendTest {};

constexpr double kZ = 5.0;
constexpr double kDt = 0.1; // [ms]
constexpr unsigned kNeurons = 1000;
constexpr uint64_t kSteps = 50000; // 5 s

struct Train {
    size_t count = 0;
    std::vector<double> isis, firstSpike; // [ms]
};

// Per neuron: intervals between successive spikes and the first spike time.
Train collect(const std::vector<SpikeEvent>& spikes) {
    Train t;
    std::vector<double> last(kNeurons, -1.0);
    t.firstSpike.assign(kNeurons, std::numeric_limits<double>::quiet_NaN());
    for (const auto& s : spikes) {
        if (s.neuron >= kNeurons || s.batch != 0) continue;
        t.count++;
        if (last[s.neuron] >= 0) t.isis.push_back(s.time - last[s.neuron]);
        else t.firstSpike[s.neuron] = s.time;
        last[s.neuron] = s.time;
    }
    return t;
}

void expectPoissonTrain(const std::vector<SpikeEvent>& spikes, double rate /*Hz*/) {
    const double T = kSteps * kDt; // [ms]
    const double mu = 1000.0 / rate; // mean interval [ms]
    const auto train = collect(spikes);

    // Count and rate.
    const double expectedCount = kNeurons * rate * T / 1000.0;
    EXPECT_NEAR(double(train.count), expectedCount, kZ * std::sqrt(expectedCount))
        << "measured rate " << train.count / (kNeurons * T / 1000.0) << " Hz";

    // Intervals: mean and coefficient of variation against the windowed expectations.
    ASSERT_GT(train.isis.size(), 1000u);
    const double n = double(train.isis.size());
    double sum = 0, sumSq = 0;
    for (double l : train.isis) sum += l;
    const double mean = sum / n;
    for (double l : train.isis) sumSq += (l - mean) * (l - mean);
    const double cv = std::sqrt(sumSq / (n - 1)) / mean;
    const double eL = mu * (T - 2 * mu) / (T - mu);
    const double eL2 = mu * mu * (2 * T - 6 * mu) / (T - mu);
    const double eCv = std::sqrt(eL2 - eL * eL) / eL;
    EXPECT_NEAR(mean, eL, kZ * mu / std::sqrt(n)) << "mean inter-spike interval [ms]";
    EXPECT_NEAR(cv, eCv, kZ / std::sqrt(n) + rate * kDt / 1000.0 / 2) << "ISI CV";

    // No synchronised start: the first spike of each neuron is exponential with mean μ (less
    // half a step for the rounding down to a step), SE μ / sqrt(N).
    double firstSum = 0;
    for (double f : train.firstSpike) {
        ASSERT_FALSE(std::isnan(f)) << "a neuron never spiked";
        firstSum += f;
    }
    EXPECT_NEAR(firstSum / kNeurons, mu - kDt / 2, kZ * mu / std::sqrt(double(kNeurons)))
        << "mean first spike time [ms]";
}

TEST_P(PoissonTest, SpikeTrainsArePoissonAndRateZeroIsSilent) {
    Model m("poisson");
    m.setDT(kDt);
    for (const auto& [name, rate] : {std::pair{"Rate20", 20.0}, {"Rate100", 100.0}, {"Rate0", 0.0}}) {
        m.addNeuronGroup(name, kNeurons, models::Poisson(), {{"rate", rate}},
                         {{"timeStepToSpike", 0.0}})
            .setSpikeRecording(true);
    }
    Simulation sim(m, prefs());
    sim.setRecordingWindow(kSteps);
    sim.run(kSteps);
    sim.pullRecording();
    {
        SCOPED_TRACE("20 Hz");
        expectPoissonTrain(sim.spikes("Rate20"), 20.0);
    }
    {
        SCOPED_TRACE("100 Hz");
        expectPoissonTrain(sim.spikes("Rate100"), 100.0);
    }
    EXPECT_TRUE(sim.spikes("Rate0").empty()) << sim.spikes("Rate0").size() << " spikes at 0 Hz";
}

SF_INSTANTIATE_BACKEND_TESTS(PoissonTest);

} // namespace
