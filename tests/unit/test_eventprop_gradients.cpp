// EventProp gradients against finite differences of the loss the same engine computes
// (issue #10, "Gradients"), and the batch reduction against single-example gradients.
#include "spikeforge/errors.hpp"
#include "spikeforge/train/eventprop.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace spikeforge;
using namespace spikeforge::train;

namespace {

// Random examples: each channel spikes a few times at random times inside [0, duration).
EventDataset randomExamples(uint32_t channels, uint32_t classes, size_t count, double duration,
                            uint32_t spikesPerChannel, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> time(0.0, duration);
    EventDatasetBuilder b(channels, classes, duration);
    for (size_t e = 0; e < count; e++) {
        std::vector<std::pair<float, uint32_t>> events;
        for (uint32_t c = 0; c < channels; c++)
            for (uint32_t k = 0; k < spikesPerChannel; k++)
                events.emplace_back(static_cast<float>(time(rng)), c);
        std::sort(events.begin(), events.end());
        std::vector<float> t;
        std::vector<uint32_t> ch;
        for (const auto& [ti, ci] : events) {
            t.push_back(ti);
            ch.push_back(ci);
        }
        b.add(static_cast<uint32_t>(e % classes), t, ch);
    }
    return std::move(b).build();
}

// Central differences of the summed loss over `examples` for every weight of `connection`.
std::vector<double> finiteDifferences(EventPropCompiler& c, const std::string& connection,
                                      std::span<const uint32_t> examples, double h) {
    const std::vector<double> w0 = c.weights(connection);
    std::vector<double> fd(w0.size());
    for (size_t i = 0; i < w0.size(); i++) {
        std::vector<double> w = w0;
        w[i] = w0[i] + h;
        c.setWeights(connection, w);
        const double up = c.evaluate(examples).loss;
        w[i] = w0[i] - h;
        c.setWeights(connection, w);
        const double down = c.evaluate(examples).loss;
        fd[i] = (up - down) / (2.0 * h);
    }
    c.setWeights(connection, w0);
    return fd;
}

// Every element within `rel` of the reference, relative to the larger of its own size and a
// hundredth of the largest reference element (so elements near zero are not judged on noise).
void expectClose(const std::vector<double>& got, const std::vector<double>& want, double rel) {
    ASSERT_EQ(got.size(), want.size());
    double largest = 0.0;
    for (double x : want)
        largest = std::max(largest, std::fabs(x));
    ASSERT_GT(largest, 0.0) << "a reference gradient of zero tests nothing";
    for (size_t i = 0; i < got.size(); i++)
        EXPECT_NEAR(got[i], want[i], rel * std::max(std::fabs(want[i]), 0.01 * largest))
            << "element " << i;
}

// (a) Input spikes straight into a leaky-integrate readout: the loss is smooth in the weights,
// and the discrete backward pass is the exact transpose of the forward one, so the gradient
// equals central differences to rounding in double precision.
TEST(EventPropGradient, ReadoutOnlyMatchesFiniteDifferences) {
    for (Readout readout : {Readout::SumVar, Readout::AvgVar, Readout::AvgVarExpWeight}) {
        SCOPED_TRACE(readoutName(readout));
        Network net;
        net.addSpikeInput("In", {5});
        net.addLeakyIntegrate("Out", 3, {20.0, readout});
        net.addConnection("InOut", "In", "Out", {{0.0, 0.5}, 5.0});
        EventPropOptions opt;
        opt.exampleTimesteps = 60;
        opt.dt = 1.0;
        opt.batchSize = 1;
        opt.precision = Precision::Double;
        opt.seed = 7;
        EventPropCompiler c(net, opt);
        c.setDataset(randomExamples(5, 3, 2, 60.0, 3, 11));
        const std::vector<uint32_t> example{1};
        const Metrics m = c.computeGradients(example);
        EXPECT_EQ(m.examples, 1u);
        const std::vector<double> g = c.gradient("InOut");
        expectClose(g, finiteDifferences(c, "InOut", example, 1e-5), 1e-4);
    }
}

// The gradient of a batch of four is the sum of the four single-example gradients.
TEST(EventPropGradient, BatchGradientIsSumOfExampleGradients) {
    Network net;
    net.addSpikeInput("In", {6});
    net.addLif("Hid", 8, {20.0, 1.0, 64});
    net.addLeakyIntegrate("Out", 2, {20.0, Readout::AvgVar});
    net.addConnection("InHid", "In", "Hid", {{1.5, 0.5}, 5.0});
    net.addConnection("HidOut", "Hid", "Out", {{0.0, 0.5}, 5.0});
    EventPropOptions opt;
    opt.exampleTimesteps = 50;
    opt.dt = 1.0;
    opt.precision = Precision::Double;
    const EventDataset data = randomExamples(6, 2, 4, 50.0, 4, 3);
    const std::vector<uint32_t> all{0, 1, 2, 3};

    opt.batchSize = 4;
    EventPropCompiler batched(net, opt);
    batched.setDataset(data);
    batched.computeGradients(all);
    opt.batchSize = 1;
    EventPropCompiler single(net, opt);
    single.setDataset(data);
    ASSERT_EQ(batched.weights("InHid"), single.weights("InHid")) << "same seed, same weights";
    for (const char* conn : {"InHid", "HidOut"}) {
        SCOPED_TRACE(conn);
        std::vector<double> sum(batched.gradient(conn).size(), 0.0);
        for (uint32_t e : all) {
            single.computeGradients(std::vector<uint32_t>{e});
            const auto g = single.gradient(conn);
            for (size_t i = 0; i < sum.size(); i++)
                sum[i] += g[i];
        }
        expectClose(batched.gradient(conn), sum, 1e-9);
    }
}

} // namespace
