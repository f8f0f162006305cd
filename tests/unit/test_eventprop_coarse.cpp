// EventProp at coarse steps (dt = 1 ms, as SHD is trained) and its safety nets: gradients of a
// recurrent layer against central differences of the engine's own loss (spikes are placed
// within their step, so the loss is smooth in the weights while no spike changes step), the
// log-sum-exp loss at extreme readouts, non-finite values stopping training, and the
// regulariser's batch scaling (docs/training.md, "Spikes within a step").
#include "spikeforge/errors.hpp"
#include "spikeforge/train/eventprop.hpp"
#include "spikeforge/train/fit.hpp"
#include "unit/eventprop_test_data.hpp"

#include <gtest/gtest.h>

#include "spikeforge/simulation.hpp"
#include <cmath>
#include <limits>
#include <set>
#include <vector>

using namespace spikeforge;
using namespace spikeforge::train;
using namespace spikeforge::train::testing;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// The steps of every recorded spike of `pop` in the last evaluate() (one example).
std::vector<std::pair<int, uint32_t>> spikeSteps(EventPropCompiler& c, const std::string& pop,
                                                 double dt) {
    std::vector<std::pair<int, uint32_t>> s;
    for (const SpikeEvent& e : c.spikes(pop).at(0))
        s.emplace_back(static_cast<int>(std::lround(e.time / dt)), e.neuron);
    return s;
}

// Central differences of the loss for every weight of `connection`; NaN where the perturbation
// moves a spike of `pop` to another step or adds or removes one (the loss jumps there).
std::vector<double> differencesKeepingSteps(EventPropCompiler& c, const std::string& connection,
                                            const std::string& pop,
                                            std::span<const uint32_t> example, double h,
                                            double dt) {
    const std::vector<double> w0 = c.weights(connection);
    c.evaluate(example);
    const auto base = spikeSteps(c, pop, dt);
    std::vector<double> fd(w0.size(), kNaN);
    for (size_t i = 0; i < w0.size(); i++) {
        std::vector<double> w = w0;
        w[i] = w0[i] + h;
        c.setWeights(connection, w);
        const double up = c.evaluate(example).loss;
        const bool upSame = spikeSteps(c, pop, dt) == base;
        w[i] = w0[i] - h;
        c.setWeights(connection, w);
        const double down = c.evaluate(example).loss;
        const bool downSame = spikeSteps(c, pop, dt) == base;
        if (upSame && downSame) fd[i] = (up - down) / (2.0 * h);
    }
    c.setWeights(connection, w0);
    return fd;
}

Network recurrentNetwork(Readout readout) {
    Network net;
    net.addSpikeInput("In", {4});
    net.addLif("Hid", 7, {20.0, 1.0, 64});
    net.addLeakyIntegrate("Out", 3, {20.0, readout});
    net.addConnection("InHid", "In", "Hid", {{3.0, 1.5}, 5.0});
    net.addConnection("HidHid", "Hid", "Hid", {{0.0, 1.0}, 5.0});
    net.addConnection("HidOut", "Hid", "Out", {{0.0, 1.0}, 5.0});
    return net;
}

// 4 inputs -> 5 LIF -> 3 exponentially weighted voltage readouts.
Network smallNetwork(const LifParams& lif = {20.0, 1.0, 64}) {
    Network net;
    net.addSpikeInput("In", {4});
    net.addLif("Hid", 5, lif);
    net.addLeakyIntegrate("Out", 3, {20.0, Readout::AvgVarExpWeight});
    net.addConnection("InHid", "In", "Hid", {{3.0, 1.0}, 5.0});
    net.addConnection("HidOut", "Hid", "Out", {{0.0, 1.0}, 5.0});
    return net;
}

EventPropOptions coarseOptions() {
    EventPropOptions opt;
    opt.dt = 1.0;
    opt.exampleTimesteps = 80;
    opt.batchSize = 1;
    opt.precision = Precision::Double;
    opt.seed = 3;
    opt.recordSpikes = {"Hid"};
    return opt;
}

// At dt = 1 ms a spike's place within its step moves the gradient by 7-24 % (a one-step shift
// of the backward jump would too): the engine's gradient must equal central differences of its
// own loss to 1e-5, for every weight whose perturbation keeps every spike in its step.
TEST(EventPropCoarse, RecurrentGradientsMatchFiniteDifferencesAtOneMs) {
    for (Readout readout : {Readout::AvgVarExpWeight, Readout::AvgVar}) {
        SCOPED_TRACE(readoutName(readout));
        EventPropCompiler c(recurrentNetwork(readout), coarseOptions());
        c.setDataset(randomExamples(4, 3, 3, 80.0, 5, 17));
        const std::vector<uint32_t> example{2};
        c.computeGradients(example);
        c.evaluate(example);
        ASSERT_GE(c.spikes("Hid").at(0).size(), 10u) << "the hidden layer must spike";
        size_t compared = 0, total = 0;
        for (const char* conn : {"InHid", "HidHid", "HidOut"}) {
            SCOPED_TRACE(conn);
            c.computeGradients(example);
            const std::vector<double> g = c.gradient(conn);
            const std::vector<double> fd =
                differencesKeepingSteps(c, conn, "Hid", example, 1e-6, 1.0);
            compared += expectCloseWhereDefined(g, fd, 1e-5, 0.01);
            total += g.size();
        }
        EXPECT_GE(compared, total * 3 / 4) << "most weights must be comparable";
    }
}

// A first-spike readout at a coarse step: its spike time is interpolated within the step, and
// the jump through hidden spikes places them within theirs.
TEST(EventPropCoarse, FirstSpikeGradientsMatchFiniteDifferences) {
    Network net;
    net.addSpikeInput("In", {4});
    net.addLif("Hid", 6, {20.0, 1.0, 64});
    net.addFirstSpikeReadout("Out", 3, {{20.0, 1.0, 4}, 2.0, 6.4, 3e-3, 0.0});
    net.addConnection("InHid", "In", "Hid", {{3.0, 1.0}, 5.0});
    net.addConnection("HidOut", "Hid", "Out", {{2.5, 0.8}, 5.0});
    EventPropOptions opt = coarseOptions();
    opt.dt = 0.5;
    opt.recordSpikes = {"Hid", "Out"};
    EventPropCompiler c(net, opt);
    c.setDataset(randomExamples(4, 3, 2, 40.0, 3, 5));
    const std::vector<uint32_t> example{1};
    c.evaluate(example);
    ASSERT_GE(c.spikes("Out").at(0).size(), 2u) << "outputs must spike for a time loss";
    for (const char* conn : {"InHid", "HidOut"}) {
        SCOPED_TRACE(conn);
        c.computeGradients(example);
        const std::vector<double> g = c.gradient(conn);
        const std::vector<double> fd = differencesKeepingSteps(c, conn, "Hid", example, 1e-6, 0.5);
        const size_t compared = expectCloseWhereDefined(g, fd, 1e-5, 0.01);
        EXPECT_GE(compared, g.size() / 2);
    }
}

// Readouts near +-3000: the loss is the exact log-sum-exp cross-entropy (a clamped log(p)
// saturates at 69.08) and its gradient matches central differences.
TEST(EventPropCoarse, LossIsLogSumExpAtExtremeReadouts) {
    Network net;
    net.addSpikeInput("In", {5});
    net.addLeakyIntegrate("Out", 3, {20.0, Readout::SumVar});
    net.addConnection("InOut", "In", "Out", {{0.0, 0.0}, 5.0});
    EventPropOptions opt;
    opt.dt = 1.0;
    opt.exampleTimesteps = 60;
    opt.batchSize = 1;
    opt.precision = Precision::Double;
    opt.recordVariables = {"Out.Sum"};
    EventPropCompiler c(net, opt);
    c.setDataset(randomExamples(5, 3, 2, 30.0, 3, 8));
    std::vector<double> w(15);
    for (size_t pre = 0; pre < 5; pre++) {
        w[pre * 3 + 0] = 40.0;
        w[pre * 3 + 1] = -40.0 + double(pre);
        w[pre * 3 + 2] = 1.0;
    }
    c.setWeights("InOut", w);
    const std::vector<uint32_t> example{1}; // label 1: the most negative readout
    const double loss = c.evaluate(example).loss;
    const std::vector<double>& last = c.variables("Out.Sum").at(0);
    const double r0 = last[last.size() - 3], r1 = last[last.size() - 2], r2 = last[last.size() - 1];
    ASSERT_GT(r0, 1000.0);
    ASSERT_LT(r1, -1000.0);
    const double m = std::max({r0, r1, r2});
    const double want = m + std::log(std::exp(r0 - m) + std::exp(r1 - m) + std::exp(r2 - m)) - r1;
    EXPECT_NEAR(loss, want, 1e-9 * want);
    c.computeGradients(example);
    expectClose(c.gradient("InOut"), finiteDifferences(c, "InOut", example, 1e-6), 1e-5);
}

// A weight set to NaN through the API: training stops with an error naming the connection, and
// no NaN reaches the other weights.
TEST(EventPropCoarse, PlantedNaNStopsTrainingAndNamesTheConnection) {
    EventPropOptions opt = coarseOptions();
    opt.recordSpikes = {};
    opt.batchSize = 2;
    EventPropCompiler c(smallNetwork(), opt);
    c.setDataset(randomExamples(4, 3, 6, 80.0, 5, 4));
    const std::vector<uint32_t> all{0, 1, 2, 3, 4, 5};
    c.trainEpoch(all); // finite: trains
    std::vector<double> w = c.weights("HidOut");
    w[4] = kNaN;
    c.setWeights("HidOut", w);
    try {
        c.trainEpoch(all);
        FAIL() << "a NaN weight must stop training";
    } catch (const ModelError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("connection 'HidOut'"), std::string::npos) << what;
        EXPECT_NE(what.find("NaN or Inf"), std::string::npos) << what;
        EXPECT_NE(what.find("first in batch 1 of this call"), std::string::npos) << what;
    }
    for (double x : c.weights("InHid"))
        EXPECT_TRUE(std::isfinite(x)) << "a non-finite gradient was applied";
    const std::vector<double> after = c.weights("HidOut");
    for (size_t i = 0; i < after.size(); i++)
        if (i != 4) {
            EXPECT_TRUE(std::isfinite(after[i])) << "weight " << i;
        }
    EXPECT_THROW(c.evaluate(all), ModelError) << "a NaN loss is an error, not a metric";
}

// The spike-count regulariser adds tauM c (mean count - target) / B at each backward spike: for
// B copies of one example its summed effect on the batch gradient does not depend on B.
TEST(EventPropCoarse, RegulariserScalesWithTheBatchSize) {
    auto gradient = [](uint32_t batch, double strength) {
        LifParams lif{20.0, 1.0, 64};
        lif.regStrength = strength;
        lif.regTarget = 1.0;
        EventPropOptions opt = coarseOptions();
        opt.recordSpikes = {};
        opt.batchSize = batch;
        EventPropCompiler c(smallNetwork(lif), opt);
        c.setDataset(randomExamples(4, 2, 1, 80.0, 5, 12));
        c.computeGradients(std::vector<uint32_t>(batch, 0u));
        return c.gradient("InHid");
    };
    auto regEffect = [&](uint32_t batch) {
        std::vector<double> with = gradient(batch, 1e-3);
        const std::vector<double> without = gradient(batch, 0.0);
        for (size_t i = 0; i < with.size(); i++)
            with[i] -= without[i];
        return with;
    };
    const std::vector<double> one = regEffect(1);
    const std::vector<double> four = regEffect(4);
    double largest = 0.0;
    for (double x : one)
        largest = std::max(largest, std::fabs(x));
    ASSERT_GT(largest, 0.0) << "the regulariser must act";
    for (size_t i = 0; i < one.size(); i++)
        EXPECT_NEAR(four[i], one[i], 1e-6 * largest) << "element " << i;
}

} // namespace

namespace {

// One training batch is computeGradients (the batch-reduced gradient) followed by one Adam step
// (bias-corrected, step 1) on that gradient; Adam before the reduction would see zeros. With a
// warm-up the step's rate is min(learning rate, warmupStart): the device counts the batches.
void expectOneBatchIsOneAdamStep(double warmupStart, double expectedRate) {
    EventPropOptions opt = coarseOptions();
    opt.recordSpikes = {};
    opt.batchSize = 3;
    opt.adam.learningRate = 1e-2;
    opt.adam.warmupStart = warmupStart;
    opt.adam.warmupFactor = 2.0;
    const EventDataset data = randomExamples(4, 3, 3, 80.0, 5, 9);
    const std::vector<uint32_t> batch{0, 1, 2};
    EventPropCompiler gradients(smallNetwork(), opt), trained(smallNetwork(), opt);
    gradients.setDataset(data);
    trained.setDataset(data);
    gradients.computeGradients(batch);
    trained.trainEpoch(batch);
    const AdamParams& a = opt.adam;
    for (const char* conn : {"InHid", "HidOut"}) {
        SCOPED_TRACE(conn);
        const std::vector<double> w0 = gradients.weights(conn), g = gradients.gradient(conn);
        const std::vector<double> w1 = trained.weights(conn);
        size_t moved = 0;
        for (size_t i = 0; i < w0.size(); i++) {
            const double m = (1.0 - a.beta1) * g[i] / (1.0 - a.beta1);
            const double v = (1.0 - a.beta2) * g[i] * g[i] / (1.0 - a.beta2);
            const double want = w0[i] - expectedRate * m / (std::sqrt(v) + a.epsilon);
            EXPECT_NEAR(w1[i], want, 1e-9) << "weight " << i;
            moved += w1[i] != w0[i];
        }
        EXPECT_GT(moved, 0u) << "the step must move weights";
    }
}

TEST(EventPropCoarse, OneBatchIsTheReducedGradientThenOneAdamStep) {
    expectOneBatchIsOneAdamStep(0.0, 1e-2);
}

TEST(EventPropCoarse, WarmupStartsAtItsRateOnTheDevice) {
    expectOneBatchIsOneAdamStep(1e-3, 1e-3); // min(1e-2, 1e-3 * 2^0)
}

// Weights after Adam steps applied on the host, one per batch at the given rates, to the
// gradients the engine computes (reference starts from the same weights as the trained one).
std::vector<std::vector<double>> hostAdam(EventPropCompiler& reference, const AdamParams& a,
                                          const std::vector<std::vector<uint32_t>>& batches,
                                          const std::vector<double>& rates) {
    const char* conns[] = {"InHid", "HidOut"};
    std::vector<std::vector<double>> w, m, v;
    for (const char* c : conns) {
        w.push_back(reference.weights(c));
        m.emplace_back(w.back().size(), 0.0);
        v.emplace_back(w.back().size(), 0.0);
    }
    for (size_t t = 0; t < batches.size(); t++) {
        for (size_t c = 0; c < 2; c++)
            reference.setWeights(conns[c], w[c]);
        reference.computeGradients(batches[t]);
        for (size_t c = 0; c < 2; c++) {
            const std::vector<double> g = reference.gradient(conns[c]);
            for (size_t i = 0; i < g.size(); i++) {
                m[c][i] = a.beta1 * m[c][i] + (1.0 - a.beta1) * g[i];
                v[c][i] = a.beta2 * v[c][i] + (1.0 - a.beta2) * g[i] * g[i];
                const double mHat = m[c][i] / (1.0 - std::pow(a.beta1, t + 1.0));
                const double vHat = v[c][i] / (1.0 - std::pow(a.beta2, t + 1.0));
                w[c][i] -= rates[t] * mHat / (std::sqrt(vHat) + a.epsilon);
            }
        }
    }
    return w;
}

void expectWeights(EventPropCompiler& trained, const std::vector<std::vector<double>>& want) {
    const char* conns[] = {"InHid", "HidOut"};
    for (size_t c = 0; c < 2; c++) {
        SCOPED_TRACE(conns[c]);
        const std::vector<double> got = trained.weights(conns[c]);
        ASSERT_EQ(got.size(), want[c].size());
        for (size_t i = 0; i < got.size(); i++)
            EXPECT_NEAR(got[i], want[c][i], 1e-9) << "weight " << i;
    }
}

// With the warm-up the rate doubles each batch (factor 2) until the learning rate: after three
// batches of one example in one call the weights equal three host Adam steps at 1e-3, 2e-3 and
// 3e-3 (the learning rate).
TEST(EventPropCoarse, WarmupGrowsPerBatchWithoutTheHost) {
    EventPropOptions opt = coarseOptions();
    opt.recordSpikes = {};
    opt.batchSize = 1;
    opt.adam.learningRate = 3e-3;
    opt.adam.warmupStart = 1e-3;
    opt.adam.warmupFactor = 2.0;
    const EventDataset data = randomExamples(4, 3, 3, 80.0, 5, 9);
    EventPropCompiler trained(smallNetwork(), opt), reference(smallNetwork(), opt);
    trained.setDataset(data);
    reference.setDataset(data);
    trained.trainEpoch(std::vector<uint32_t>{0, 1, 2}); // one call, three batches
    expectWeights(trained, hostAdam(reference, opt.adam, {{0}, {1}, {2}}, {1e-3, 2e-3, 3e-3}));
}

// fit() sets the rate of epoch e to learningRate * decay^e, once per epoch, as the device sees
// it: three epochs of one batch each equal host Adam steps at 4e-3, 2e-3 and 1e-3.
TEST(EventPropCoarse, FitAppliesTheLearningRateScheduleOncePerEpoch) {
    EventPropOptions opt = coarseOptions();
    opt.recordSpikes = {};
    opt.batchSize = 3;
    opt.adam.learningRate = 4e-3;
    const EventDataset data = randomExamples(4, 3, 3, 80.0, 5, 9);
    EventPropCompiler trained(smallNetwork(), opt), reference(smallNetwork(), opt);
    reference.setDataset(data);
    FitOptions f;
    f.epochs = 3;
    f.learningRate = 4e-3;
    f.learningRateDecay = 0.5;
    const auto reports = fit(trained, data, nullptr, f);
    ASSERT_EQ(reports.size(), 3u);
    EXPECT_EQ(reports[2].learningRate, 1e-3);
    // Each epoch's one batch holds all three examples (in a shuffled order: the same sum).
    expectWeights(trained, hostAdam(reference, opt.adam, {{0, 1, 2}, {0, 1, 2}, {0, 1, 2}},
                                    {4e-3, 2e-3, 1e-3}));
}

} // namespace

namespace {

// The delay line: copy d of the inputs emits every event d * delayStep later (recorded spikes
// of the input population in evaluate()).
TEST(EventPropRecipe, DelayLineCopiesEmitTheEventsLater) {
    Network net;
    net.addSpikeInput("In", {3, 2, 5.0}); // 3 channels, 2 delayed copies 5 ms apart
    net.addLeakyIntegrate("Out", 2, {20.0, Readout::AvgVar});
    net.addConnection("InOut", "In", "Out", {{0.0, 0.5}, 5.0});
    EventPropOptions opt = coarseOptions();
    opt.recordSpikes = {"In"};
    EventPropCompiler c(net, opt);
    EXPECT_EQ(net.population("In").size, 9u);
    c.setDataset(oneExample(3, 2, 80.0, 0, {{1.5f, 0}, {7.2f, 2}, {70.1f, 1}}));
    c.evaluate(std::vector<uint32_t>{0});
    std::vector<std::pair<long, uint32_t>> got;
    for (const SpikeEvent& e : c.spikes("In").at(0))
        got.emplace_back(std::lround(e.time), e.neuron);
    std::sort(got.begin(), got.end());
    // Step of each event (floor(t / dt)), plus 5 ms per copy; 70.1 + 10 is past the 80 ms trial.
    const std::vector<std::pair<long, uint32_t>> want{{1, 0},  {6, 3},  {7, 2},  {11, 6},
                                                      {12, 5}, {17, 8}, {70, 1}, {75, 4}};
    EXPECT_EQ(got, want);
    EXPECT_THROW(Network().addSpikeInput("X", {3, 2, 0.0}), ModelError) << "delayStep 0";
}

// The channel shift: drawn on the device per training example, the same for every input neuron
// of a batch element, within [-channelShift, channelShift], repeated for the same seed, never
// in evaluate().
TEST(EventPropRecipe, ChannelShiftIsDrawnPerTrainingExample) {
    EventPropOptions opt = coarseOptions();
    opt.recordSpikes = {};
    opt.batchSize = 8;
    opt.channelShift = 3;
    auto shifts = [&](uint64_t seed, bool train) {
        EventPropCompiler c(smallNetwork(), opt);
        c.setDataset(randomExamples(4, 3, 8, 80.0, 3, 2));
        c.setAugmentationSeed(seed);
        const std::vector<uint32_t> all{0, 1, 2, 3, 4, 5, 6, 7};
        if (train)
            c.trainEpoch(all);
        else
            c.evaluate(all);
        c.simulation().pull("In", "Shift");
        const auto v = c.simulation().view<int32_t>("In", "Shift"); // [batch][neuron]
        std::vector<int> perBatch;
        for (size_t b = 0; b < 8; b++) {
            for (size_t n = 1; n < 4; n++)
                EXPECT_EQ(v[b * 4 + n], v[b * 4]) << "batch " << b;
            perBatch.push_back(v[b * 4]);
        }
        return perBatch;
    };
    const std::vector<int> a = shifts(1, true), b = shifts(1, true), c = shifts(2, true);
    EXPECT_EQ(a, b) << "the same seed draws the same shifts";
    EXPECT_NE(a, c) << "another seed draws others";
    std::set<int> seen(a.begin(), a.end());
    seen.insert(c.begin(), c.end());
    for (int s : seen) {
        EXPECT_GE(s, -3);
        EXPECT_LE(s, 3);
    }
    EXPECT_GE(seen.size(), 3u) << "shifts vary";
    for (int s : shifts(1, false))
        EXPECT_EQ(s, 0) << "evaluate never shifts";
}

// The spike's place within its step (F) is the root of the step's exact trajectory,
// V(s) = exp(-s/tauM) Vprev + r(s) Isyn = vThresh, to double precision: computed here by
// bisection on the same discrete forward pass (reset to 0 at the crossing).
TEST(EventPropCoarse, CrossingWithinTheStepIsTheTrajectorysRoot) {
    int total = 0;
    for (const double weight : {4.0, 9.0, 40.0, 150.0}) {
        Network net;
        net.addSpikeInput("In", {1});
        net.addLif("Hid", 1, {20.0, 1.0, 64});
        net.addLeakyIntegrate("Out", 2);
        net.addConnection("InHid", "In", "Hid", {{weight, 0.0}, 5.0});
        net.addConnection("HidOut", "Hid", "Out", {{0.1, 0.0}, 5.0});
        EventPropOptions opt = coarseOptions();
        opt.exampleTimesteps = 40;
        opt.recordSpikes = {};
        opt.recordVariables = {"Hid.F"};
        EventPropCompiler c(net, opt);
        c.setDataset(oneExample(1, 2, 40.0, 0, {{0.5f, 0}, {9.5f, 0}}));
        c.evaluate(std::vector<uint32_t>{0});
        const std::vector<double>& recordedF = c.variables("Hid.F").at(0);
        ASSERT_EQ(recordedF.size(), 40u);
        std::vector<double> arrivals(40, 0.0);
        arrivals[1] = arrivals[10] = weight; // the input spikes of steps 0 and 9
        int crossings = 0;
        for (const ReferenceSpike& spike : referenceLifSpikes(arrivals)) {
            if (!spike.crossed) continue;
            crossings++;
            EXPECT_NEAR(recordedF[size_t(spike.step)], spike.f, 1e-12)
                << "weight " << weight << " step " << spike.step;
        }
        EXPECT_GE(crossings, 1) << "weight " << weight;
        total += crossings;
    }
    EXPECT_GE(total, 5);
}

// After a training epoch, the input weights of the LIF neurons that did not spike are raised.
TEST(EventPropRecipe, SilentNeuronsGetTheirInputWeightsBoosted) {
    Network net;
    net.addSpikeInput("In", {2});
    net.addLif("Hid", 3, {20.0, 1.0, 64});
    net.addLeakyIntegrate("Out", 2, {20.0, Readout::AvgVar});
    net.addConnection("InHid", "In", "Hid", {{0.0, 0.0}, 5.0});
    net.addConnection("HidOut", "Hid", "Out", {{0.0, 0.5}, 5.0});
    EventPropOptions opt = coarseOptions();
    opt.recordSpikes = {};
    opt.batchSize = 2;
    EventPropCompiler c(net, opt);
    c.setDataset(randomExamples(2, 2, 2, 80.0, 5, 3));
    // Only hidden neuron 1 is driven (strongly): neurons 0 and 2 stay silent.
    c.setWeights("InHid", std::vector<double>{0.0, 8.0, 0.0, 0.0, 8.0, 0.0});
    c.trainEpoch(std::vector<uint32_t>{0, 1});
    const std::vector<double> before = c.weights("InHid");
    EXPECT_EQ(c.boostSilentNeurons(0.25), 2u);
    const std::vector<double> after = c.weights("InHid");
    for (size_t i = 0; i < after.size(); i++)
        EXPECT_NEAR(after[i], before[i] + (i % 3 == 1 ? 0.0 : 0.25), 1e-12) << "weight " << i;
    EXPECT_EQ(c.boostSilentNeurons(0.25), 3u) << "counts start again: no batch since";
}

// The per-neuron counts of the training batches equal the spikes a forward pass records with
// the same weights, and fit() reports their mean per neuron and example.
TEST(EventPropRecipe, TrainingSpikeCountsMatchTheRecordedSpikes) {
    Network net;
    net.addSpikeInput("In", {3});
    net.addLif("Hid", 4, {20.0, 1.0, 64});
    net.addLeakyIntegrate("Out", 2, {20.0, Readout::AvgVar});
    net.addConnection("InHid", "In", "Hid", {{0.0, 0.0}, 5.0});
    net.addConnection("HidOut", "Hid", "Out", {{0.0, 0.5}, 5.0});
    EventPropOptions opt = coarseOptions();
    opt.batchSize = 3;
    EventPropCompiler c(net, opt);
    const EventDataset data = randomExamples(3, 2, 3, 80.0, 12, 5);
    c.setDataset(data);
    // Neuron 3 gets no input and stays silent; the others fire at different rates.
    c.setWeights("InHid",
                 std::vector<double>{3.0, 0.0, 1.5, 0.0, 0.0, 4.0, 1.0, 0.0, 2.0, 2.5, 0.0, 0.0});
    const std::vector<uint32_t> batch = {0, 1, 2};
    c.evaluate(batch);
    std::vector<double> recorded(4, 0.0);
    for (const auto& example : c.spikes("Hid"))
        for (const SpikeEvent& s : example)
            recorded[s.neuron] += 1.0;
    ASSERT_GT(recorded[0] + recorded[1] + recorded[2], 3.0) << "the test needs spikes";
    ASSERT_EQ(recorded[3], 0.0);
    EXPECT_TRUE(c.takeTrainingSpikeCounts().at("Hid") == std::vector<double>(4, 0.0))
        << "evaluate() is not training";
    c.trainEpoch(batch); // one batch: its forward pass runs on the weights above
    EXPECT_EQ(c.takeTrainingSpikeCounts().at("Hid"), recorded);
    EXPECT_EQ(c.takeTrainingSpikeCounts().at("Hid"), std::vector<double>(4, 0.0))
        << "the counters restart";

    EventPropCompiler f(net, opt);
    f.setWeights("InHid", c.weights("InHid"));
    FitOptions fo;
    fo.learningRate = 1e-12; // the epoch's weights stay those of the evaluation
    const auto reports = fit(f, data, nullptr, fo);
    ASSERT_EQ(reports.size(), 1u);
    double sum = 0.0;
    c.evaluate(batch);
    for (const auto& example : c.spikes("Hid"))
        sum += double(example.size());
    ASSERT_EQ(reports[0].activity.size(), 1u);
    EXPECT_EQ(reports[0].activity[0].population, "Hid");
    EXPECT_NEAR(reports[0].activity[0].spikesPerNeuron, sum / (4.0 * 3.0), 1e-12);
    EXPECT_EQ(reports[0].activity[0].silent, 1u);
}

} // namespace
