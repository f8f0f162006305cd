// LIF neuron against its closed-form solution: under a constant current the membrane relaxes
// exponentially to V∞ = Vrest + I·R, and the first threshold crossing is at
// t* = τm·ln((V∞ − V0)/(V∞ − Vth)).
#include "backend_fixture.hpp"
#include "spikeforge/models.hpp"

#include <cmath>

using namespace spikeforge;

namespace {

class LIFTest : public sftest::BackendTest {};

constexpr double kTauM = 20.0, kC = 1.0, kVrest = -70.0, kVth = -50.0, kAmp = 1.5; // ms nF mV nA
constexpr double kRefrac = 2.0, kDt = 0.1;

void buildLIF(Model& m, double vthresh) {
    m.setDT(kDt);
    auto& ng = m.addNeuronGroup("Cell", 1, models::LIF(),
                                {{"C", kC},
                                 {"TauM", kTauM},
                                 {"Vrest", kVrest},
                                 {"Vreset", kVrest},
                                 {"Vthresh", vthresh},
                                 {"Ioffset", 0.0},
                                 {"TauRefrac", kRefrac}},
                                {{"V", kVrest}, {"RefracTime", 0.0}});
    ng.setSpikeRecording(true);
    m.addCurrentSource("Drive", models::DC(), "Cell", {{"amp", kAmp}}, {});
}

TEST_P(LIFTest, MembraneFollowsClosedFormUnderConstantCurrent) {
    Model m("lif_trace");
    m.setPrecision(Precision::Double);
    buildLIF(m, 1000.0); // threshold out of reach: pure relaxation
    Simulation sim(m, prefs());
    const double vInf = kVrest + kAmp * kTauM / kC;
    double maxErr = 0.0;
    for (int n = 1; n <= 1000; n++) {
        sim.step();
        sim.pull("Cell", "V");
        const double expected = vInf + (kVrest - vInf) * std::exp(-n * kDt / kTauM);
        maxErr = std::max(maxErr, std::abs(sim.view<double>("Cell", "V")[0] - expected));
    }
    // Exact exponential integration: only rounding error accumulates.
    EXPECT_LT(maxErr, 1e-9);
}

TEST_P(LIFTest, SpikeTimesMatchFirstPassageTime) {
    Model m("lif_spikes");
    buildLIF(m, kVth);
    Simulation sim(m, prefs());
    sim.setRecordingWindow(1000);
    sim.run(1000);
    sim.pullRecording();
    const auto spikes = sim.spikes("Cell");
    const double vInf = kVrest + kAmp * kTauM / kC;
    const double tStar = kTauM * std::log((vInf - kVrest) / (vInf - kVth)); // 21.97 ms
    ASSERT_GE(spikes.size(), 3u);
    // A spike is stamped with the time at the start of the step in which V crossed threshold,
    // so it lies in [t* − dt, t*).
    EXPECT_GE(spikes[0].time, tStar - kDt - 1e-4);
    EXPECT_LT(spikes[0].time, tStar + 1e-4);
    // After reset the cell is clamped for TauRefrac, then relaxes from Vreset again.
    for (size_t k = 1; k < spikes.size(); k++) {
        const double isi = spikes[k].time - spikes[k - 1].time;
        EXPECT_NEAR(isi, tStar + kRefrac, 2 * kDt) << "interval " << k;
    }
    // Float precision: the expected count over 100 ms.
    EXPECT_EQ(spikes.size(),
              static_cast<size_t>(std::floor((100.0 + kRefrac) / (tStar + kRefrac))));
}

// A dynamic parameter changes between steps without a rebuild: switching Ioffset mid-run moves
// the fixed point, and the trace follows the closed form from the state at the switch.
TEST_P(LIFTest, DynamicParameterChangesBetweenSteps) {
    Model m("lif_dynamic");
    m.setPrecision(Precision::Double);
    m.setBatchSize(2);
    auto& ng = m.addNeuronGroup("Cell", 3, models::LIF(),
                                {{"C", kC},
                                 {"TauM", kTauM},
                                 {"Vrest", kVrest},
                                 {"Vreset", kVrest},
                                 {"Vthresh", 1000.0},
                                 {"Ioffset", 0.5},
                                 {"TauRefrac", kRefrac}},
                                {{"V", kVrest}, {"RefracTime", 0.0}});
    ng.setParamDynamic("Ioffset");
    Simulation sim(m, prefs());
    const BuildInfo first = sim.buildInfo();
    auto vAfter = [&](double v0, double current, int steps) {
        const double vInf = kVrest + current * kTauM / kC;
        return vInf + (v0 - vInf) * std::exp(-steps * kDt / kTauM);
    };
    sim.run(100);
    const double vSwitch = vAfter(kVrest, 0.5, 100);
    sim.setDynamicParam("Cell", "Ioffset", -0.25);
    sim.run(150);
    sim.pull("Cell", "V");
    for (double v : sim.view<double>("Cell", "V"))
        EXPECT_NEAR(v, vAfter(vSwitch, -0.25, 150), 1e-9);
    EXPECT_EQ(sim.buildInfo().compileSeconds, first.compileSeconds); // no rebuild
}

SF_INSTANTIATE_BACKEND_TESTS(LIFTest);

} // namespace
