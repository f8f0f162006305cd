// InferenceCompiler: the forward half of the EventProp model gives EventPropCompiler's loss and
// accuracy, takes trained weights from an EventProp state, and records spikes per example.
#include "spikeforge/errors.hpp"
#include "spikeforge/train/eventprop.hpp"
#include "spikeforge/train/inference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <vector>

using namespace spikeforge;
using namespace spikeforge::train;

namespace {

Network smallNetwork() {
    Network net;
    net.addSpikeInput("In", {5});
    net.addLif("Hid", 30, {20.0, 1.0, 32});
    net.addLeakyIntegrate("Out", 3, {20.0, Readout::AvgVar});
    net.addConnection("InHid", "In", "Hid", {{1.5, 0.78}, 5.0});
    net.addConnection("HidOut", "Hid", "Out", {{0.0, 0.3}, 5.0});
    return net;
}

TEST(InferenceCompiler, MatchesEventPropAfterTrainingAndLoadingItsWeights) {
    const EventDataset data = makeYinYang(96, 7);
    std::vector<uint32_t> all(data.size());
    std::iota(all.begin(), all.end(), 0u);
    EventPropOptions opt;
    opt.dt = 0.5;
    opt.exampleTimesteps = 120;
    opt.batchSize = 16;
    opt.adam.learningRate = 5e-3;
    EventPropCompiler trainer(smallNetwork(), opt);
    trainer.setDataset(data);
    trainer.trainEpoch(all);
    const Metrics trained = trainer.evaluate(all);

    InferenceOptions io;
    io.dt = opt.dt;
    io.exampleTimesteps = opt.exampleTimesteps;
    io.batchSize = 8; // another batch size: the results do not depend on it
    io.seed = 99;     // other initial weights, replaced below
    InferenceCompiler inference(smallNetwork(), io);
    inference.setDataset(data);
    inference.loadWeights(trainer.saveState());
    EXPECT_EQ(inference.weights("InHid"), trainer.weights("InHid"));
    const Metrics m = inference.evaluate(all);
    EXPECT_EQ(m.examples, trained.examples);
    EXPECT_EQ(m.correct, trained.correct);
    EXPECT_NEAR(m.loss, trained.loss, 1e-4 * trained.loss);
}

// Recorded input spikes are the dataset's events binned to steps (one spike per channel and
// step), per example, whatever batch slot the example ran in.
TEST(InferenceCompiler, RecordsSpikesPerExample) {
    const EventDataset data = makeYinYang(5, 3);
    InferenceOptions io;
    io.dt = 0.5;
    io.exampleTimesteps = 120;
    io.batchSize = 2;
    io.recordSpikes = {"In", "Hid"};
    InferenceCompiler c(smallNetwork(), io);
    c.setDataset(data);
    const std::vector<uint32_t> order{4, 0, 2};
    c.evaluate(order);
    const auto& in = c.spikes("In");
    ASSERT_EQ(in.size(), order.size());
    for (size_t k = 0; k < order.size(); k++) {
        std::set<std::pair<long, uint32_t>> want, got;
        const auto times = data.times(order[k]);
        const auto channels = data.channels(order[k]);
        for (size_t i = 0; i < times.size(); i++)
            if (std::floor(times[i] / io.dt) < io.exampleTimesteps)
                want.insert({long(std::floor(times[i] / io.dt)), channels[i]});
        for (const SpikeEvent& e : in[k])
            got.insert({std::lround(e.time / io.dt), e.neuron});
        EXPECT_EQ(got, want) << "example " << order[k];
        EXPECT_EQ(in[k].size(), want.size()) << "one spike per channel and step";
    }
    size_t hidden = 0;
    for (const auto& s : c.spikes("Hid"))
        hidden += s.size();
    EXPECT_GT(hidden, 0u);
    EXPECT_THROW(c.spikes("Out"), ModelError);
}

// Recorded readout voltages: the AvgVar readout is their mean over the steps, so the loss
// computed here from them (cross-entropy of the softmax at the label) is the engine's.
TEST(InferenceCompiler, RecordsVariablesPerStep) {
    const EventDataset data = makeYinYang(3, 11);
    InferenceOptions io;
    io.dt = 0.5;
    io.exampleTimesteps = 120;
    io.batchSize = 2;
    io.precision = Precision::Double;
    io.recordVariables = {"Out.V"};
    InferenceCompiler c(smallNetwork(), io);
    c.setDataset(data);
    const std::vector<uint32_t> order{2, 1, 0};
    const Metrics m = c.evaluate(order);
    const auto& v = c.variables("Out.V");
    ASSERT_EQ(v.size(), 3u);
    double loss = 0.0;
    for (size_t k = 0; k < order.size(); k++) {
        ASSERT_EQ(v[k].size(), 120u * 3u);
        std::vector<double> r(3, 0.0);
        for (size_t step = 0; step < 120; step++)
            for (size_t o = 0; o < 3; o++)
                r[o] += v[k][step * 3 + o] / 120.0;
        const double mx = std::max({r[0], r[1], r[2]});
        double sum = 0.0;
        for (double x : r)
            sum += std::exp(x - mx);
        loss += -(r[data.label(order[k])] - mx - std::log(sum));
    }
    EXPECT_NEAR(m.loss, loss, 1e-9 * loss);
    EXPECT_THROW(c.variables("Out.Nope"), ModelError);
    io.recordVariables = {"Out.Nope"};
    EXPECT_THROW(InferenceCompiler(smallNetwork(), io), ModelError);
    io.recordVariables = {"OutV"};
    EXPECT_THROW(InferenceCompiler(smallNetwork(), io), ModelError);
}

// EventPropCompiler's evaluate() records the same way (fit's validation included).
TEST(InferenceCompiler, EventPropEvaluateRecordsTheSameSpikes) {
    const EventDataset data = makeYinYang(4, 9);
    InferenceOptions io;
    io.dt = 0.5;
    io.exampleTimesteps = 120;
    io.batchSize = 4;
    io.recordSpikes = {"Hid"};
    InferenceCompiler inference(smallNetwork(), io);
    EventPropOptions eo;
    eo.dt = io.dt;
    eo.exampleTimesteps = io.exampleTimesteps;
    eo.batchSize = 2;
    eo.seed = io.seed;
    eo.recordSpikes = {"Hid"};
    EventPropCompiler trainer(smallNetwork(), eo);
    inference.setDataset(data);
    trainer.setDataset(data);
    const std::vector<uint32_t> order{3, 1, 2, 0};
    inference.evaluate(order);
    trainer.evaluate(order);
    ASSERT_EQ(trainer.spikes("Hid").size(), order.size());
    size_t total = 0;
    for (size_t k = 0; k < order.size(); k++) {
        auto key = [](const SpikeEvent& e) { return std::pair{e.time, e.neuron}; };
        std::vector<std::pair<double, uint32_t>> a, b;
        for (const auto& e : trainer.spikes("Hid")[k])
            a.push_back(key(e));
        for (const auto& e : inference.spikes("Hid")[k])
            b.push_back(key(e));
        EXPECT_EQ(a, b) << "example " << order[k];
        total += a.size();
    }
    EXPECT_GT(total, 0u);
    EXPECT_THROW(trainer.variables("Out.V"), ModelError);
}

TEST(InferenceCompiler, RefusesUnknownRecordingAndForeignWeights) {
    InferenceOptions io;
    io.exampleTimesteps = 10;
    io.recordSpikes = {"Nope"};
    EXPECT_THROW(InferenceCompiler(smallNetwork(), io), ModelError);
    io.recordSpikes = {};
    InferenceCompiler c(smallNetwork(), io);
    EXPECT_THROW(c.loadWeights({}), ModelError);
    std::vector<EventPropCompiler::StateArray> wrong{{"InHid.g", std::vector<uint8_t>(3)},
                                                     {"HidOut.g", std::vector<uint8_t>(3)}};
    EXPECT_THROW(c.loadWeights(wrong), ModelError);
}

} // namespace
