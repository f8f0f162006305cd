// EventProp on every GPU-style backend there is: the same gradients and the same short training
// run as on cpu (issue #10, "the same run on cpu and opencl agrees within tolerance").
#include "spikeforge/errors.hpp"
#include "spikeforge/train/eventprop.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

using namespace spikeforge;
using namespace spikeforge::train;

namespace {

bool usable(const std::string& backend, std::string& why) {
    for (const auto& b : availableBackends())
        if (b.name == backend) {
            why = b.reason;
            return b.usable;
        }
    why = "not compiled into this build";
    return false;
}

Network yinYangNetwork() {
    Network net;
    net.addSpikeInput("In", {5});
    net.addLif("Hid", 40, {20.0, 1.0, 32});
    net.addLeakyIntegrate("Out", 3, {20.0, Readout::AvgVar});
    net.addConnection("InHid", "In", "Hid", {{1.5, 0.78}, 5.0});
    net.addConnection("HidOut", "Hid", "Out", {{0.0, 0.3}, 5.0});
    return net;
}

EventPropOptions yinYangOptions() {
    EventPropOptions opt;
    opt.dt = 0.5;
    opt.exampleTimesteps = 120; // 60 ms
    opt.batchSize = 16;
    opt.adam.learningRate = 5e-3;
    return opt;
}

// Largest |a - b| relative to the largest |b|.
double relativeDifference(const std::vector<double>& a, const std::vector<double>& b) {
    double diff = 0.0, scale = 0.0;
    for (size_t i = 0; i < a.size(); i++) {
        diff = std::max(diff, std::fabs(a[i] - b[i]));
        scale = std::max(scale, std::fabs(b[i]));
    }
    return scale > 0.0 ? diff / scale : diff;
}

class EventPropBackend : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        std::string why;
        if (!usable(GetParam(), why)) GTEST_SKIP() << GetParam() << " is not usable here: " << why;
    }
    BackendPreferences prefs() const {
        BackendPreferences p;
        p.backend = GetParam();
        return p;
    }
};

// One batch's gradients: spikes are integer events, so both backends see the same spikes; the
// float sums may be added in another order (atomics), hence the tolerance.
TEST_P(EventPropBackend, GradientsMatchCpu) {
    const EventDataset data = makeYinYang(16, 3);
    std::vector<uint32_t> batch(16);
    std::iota(batch.begin(), batch.end(), 0u);
    EventPropCompiler cpu(yinYangNetwork(), yinYangOptions());
    EventPropCompiler other(yinYangNetwork(), yinYangOptions(), prefs());
    cpu.setDataset(data);
    other.setDataset(data);
    // Same seed, same random stream; the normal transform's log/cos may differ in the last bit.
    ASSERT_LT(relativeDifference(other.weights("InHid"), cpu.weights("InHid")), 1e-6);
    const Metrics mc = cpu.computeGradients(batch), mo = other.computeGradients(batch);
    EXPECT_NEAR(mo.loss, mc.loss, 1e-4 * mc.loss);
    EXPECT_EQ(mo.correct, mc.correct);
    for (const char* conn : {"InHid", "HidOut"})
        EXPECT_LT(relativeDifference(other.gradient(conn), cpu.gradient(conn)), 1e-4) << conn;
}

// Two epochs of training on a small Yin-Yang set end with nearly the same weights and accuracy.
TEST_P(EventPropBackend, ShortTrainingMatchesCpu) {
    const EventDataset data = makeYinYang(192, 5);
    std::vector<uint32_t> order(data.size());
    std::iota(order.begin(), order.end(), 0u);
    EventPropCompiler cpu(yinYangNetwork(), yinYangOptions());
    EventPropCompiler other(yinYangNetwork(), yinYangOptions(), prefs());
    cpu.setDataset(data);
    other.setDataset(data);
    for (int epoch = 0; epoch < 2; epoch++) {
        cpu.trainEpoch(order);
        other.trainEpoch(order);
    }
    for (const char* conn : {"InHid", "HidOut"})
        EXPECT_LT(relativeDifference(other.weights(conn), cpu.weights(conn)), 1e-2) << conn;
    const Metrics ec = cpu.evaluate(order), eo = other.evaluate(order);
    EXPECT_NEAR(double(eo.correct), double(ec.correct), 0.03 * double(data.size()));
}

INSTANTIATE_TEST_SUITE_P(Gpu, EventPropBackend, ::testing::Values("opencl", "cuda"),
                         [](const auto& info) { return info.param; });

} // namespace
