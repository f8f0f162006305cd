// The built-in Poisson neuron against the Poisson process it discretises: spike count, the mean
// and coefficient of variation of the inter-spike intervals, independence of successive intervals
// and of neurons, the first spike time, and silence at rate 0. Three groups of kNeurons neurons
// (20 Hz, 100 Hz, 0 Hz) run for kSteps steps of 0.1 ms.
//
// Expected values are those of a Poisson process of the given rate observed in the window
// [0, T) (T = kSteps · dt):
//  - the spike count is Poisson(N · rate · T);
//  - the complete intervals seen inside a window of length T have density ∝ (T - L) e^{-L/μ}
//    (μ = 1/rate): an interval of length L fits T - L of the window. Hence
//      E[L] = μ (T - 2μ) / (T - μ),  E[L²] = μ² (2T - 6μ) / (T - μ),
//    about a 1% correction to the mean at 20 Hz, which is why it is not ignored;
//  - successive intervals of a neuron are independent (correlation 0);
//  - neurons are independent: the number of spikes in one step, summed over the group, is a sum
//    of N independent indicators with probability p = rate · dt, so its variance / mean is 1 - p.
// Tolerances are kZ = 5 standard errors: SE(count) = sqrt(count), SE(mean ISI) ≈ μ / sqrt(n),
// SE(CV) ≈ 1 / sqrt(n) for n exponential intervals (delta method: Var(s²/m²) = 4/n), SE(sample
// correlation) ≈ 1 / sqrt(n), and for the population count per step (mean λ = N p over S steps)
// SE(variance / mean) ≈ sqrt((2 + 1/λ) / S) (Poisson fourth moment). At 20 Hz that is 1.6% for the
// rate, mean ISI and CV; at 100 Hz 0.7%, tight enough to catch an interval one time step too long
// (1% at 100 Hz).
// Discretisation: spike times are multiples of dt. Spike times in steps are ceil(T_k) - 1 for the
// event times T_k of the continuous process (in steps), so counts and the summed intervals
// (which telescope) are exact; the interval variance changes by O(dt²), 2e-5 relative at 100 Hz.
// A Bernoulli-per-step discretisation would have CV sqrt(1 - rate · dt) instead of 1, so the CV
// tolerance also allows rate · dt / 2 (0.5% at 100 Hz).
#include "backend_fixture.hpp"
#include "spikeforge/models.hpp"

#include <cmath>
#include <limits>
#include <utility>
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
    std::vector<double> isis, firstSpike;              // [ms]
    std::vector<std::pair<double, double>> successive; // (interval, next interval), one neuron
    std::vector<double> perStep = std::vector<double>(kSteps, 0.0); // spikes in each step
};

// Intervals between successive spikes of each neuron, first spike times, spikes per step.
Train collect(const std::vector<SpikeEvent>& spikes) {
    Train t;
    std::vector<double> last(kNeurons, -1.0), lastIsi(kNeurons, -1.0);
    t.firstSpike.assign(kNeurons, std::numeric_limits<double>::quiet_NaN());
    for (const auto& s : spikes) { // sorted by time
        if (s.neuron >= kNeurons || s.batch != 0) continue;
        t.count++;
        const auto step = static_cast<uint64_t>(std::llround(s.time / kDt));
        if (step < kSteps) t.perStep[step]++;
        if (last[s.neuron] < 0) {
            t.firstSpike[s.neuron] = s.time;
        } else {
            const double isi = s.time - last[s.neuron];
            t.isis.push_back(isi);
            if (lastIsi[s.neuron] >= 0) t.successive.emplace_back(lastIsi[s.neuron], isi);
            lastIsi[s.neuron] = isi;
        }
        last[s.neuron] = s.time;
    }
    return t;
}

double meanOf(const std::vector<double>& x) {
    double s = 0;
    for (double v : x)
        s += v;
    return s / double(x.size());
}

double varianceOf(const std::vector<double>& x) {
    const double m = meanOf(x);
    double s = 0;
    for (double v : x)
        s += (v - m) * (v - m);
    return s / double(x.size() - 1);
}

void expectPoissonTrain(const std::vector<SpikeEvent>& spikes, double rate /*Hz*/) {
    const double T = kSteps * kDt;        // [ms]
    const double mu = 1000.0 / rate;      // mean interval [ms]
    const double p = rate * kDt / 1000.0; // spike probability per step
    const auto train = collect(spikes);

    // Count and rate.
    const double expectedCount = kNeurons * rate * T / 1000.0;
    EXPECT_NEAR(double(train.count), expectedCount, kZ * std::sqrt(expectedCount))
        << "measured rate " << train.count / (kNeurons * T / 1000.0) << " Hz";

    // Intervals: mean and coefficient of variation against the windowed expectations.
    ASSERT_GT(train.isis.size(), 1000u);
    const double n = double(train.isis.size());
    const double mean = meanOf(train.isis);
    const double cv = std::sqrt(varianceOf(train.isis)) / mean;
    const double eL = mu * (T - 2 * mu) / (T - mu);
    const double eL2 = mu * mu * (2 * T - 6 * mu) / (T - mu);
    const double eCv = std::sqrt(eL2 - eL * eL) / eL;
    EXPECT_NEAR(mean, eL, kZ * mu / std::sqrt(n)) << "mean inter-spike interval [ms]";
    EXPECT_NEAR(cv, eCv, kZ / std::sqrt(n) + p / 2) << "ISI CV";

    // Successive intervals of one neuron are uncorrelated (a renewal process).
    {
        const double m = double(train.successive.size());
        double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
        for (const auto& [a, b] : train.successive) {
            sa += a;
            sb += b;
            saa += a * a;
            sbb += b * b;
            sab += a * b;
        }
        const double r = (sab / m - sa * sb / (m * m)) /
                         std::sqrt((saa / m - sa * sa / (m * m)) * (sbb / m - sb * sb / (m * m)));
        EXPECT_NEAR(r, 0.0, kZ / std::sqrt(m)) << "correlation of successive intervals";
    }

    // Neurons are independent: population spikes per step have variance / mean = 1 - p.
    {
        const double lambda = kNeurons * p;
        const double fano = varianceOf(train.perStep) / meanOf(train.perStep);
        EXPECT_NEAR(fano, 1 - p, kZ * std::sqrt((2 + 1 / lambda) / double(kSteps)))
            << "variance / mean of the population spike count per step";
    }

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
    for (const auto& [name, rate] :
         {std::pair{"Rate20", 20.0}, {"Rate100", 100.0}, {"Rate0", 0.0}}) {
        m.addNeuronGroup(name, kNeurons, models::Poisson(), {{"rate", rate}},
                         {{"timeStepToSpike", 0.0}})
            .setSpikeRecording(true);
    }
    Simulation sim(m, sftest::releaseBuild(prefs()));
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
