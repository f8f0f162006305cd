// EventProp gradients against finite differences of the loss the same engine computes
// (issue #10, "Gradients"), and the batch reduction against single-example gradients.
#include "spikeforge/errors.hpp"
#include "spikeforge/train/eventprop.hpp"
#include "unit/eventprop_reference.hpp"
#include "unit/eventprop_test_data.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace spikeforge;
using namespace spikeforge::train;
using namespace spikeforge::train::testing;

namespace {

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

// The continuous-time reference of an In -> Hid (LIF) -> Out (AvgVar) network built by the
// tests below, with the engine's current weights and the dataset's only example.
eventprop_reference::Network referenceOf(EventPropCompiler& c, const EventDataset& data,
                                         const LifParams& lif, double tauMOut, double tauS,
                                         bool recurrent, const EventPropOptions& opt) {
    eventprop_reference::Network r;
    r.numInputs = data.numChannels();
    r.wIn = c.weights("InHid");
    r.wOut = c.weights("HidOut");
    if (recurrent) r.wRec = c.weights("HidHid");
    r.numHidden = r.wIn.size() / r.numInputs;
    r.numOutputs = r.wOut.size() / r.numHidden;
    r.tauMHidden = lif.tauMem;
    r.tauMOutput = tauMOut;
    r.tauS = tauS;
    r.vThresh = lif.vThresh;
    r.duration = opt.exampleTimesteps * opt.dt;
    r.dt = opt.dt;
    for (size_t i = 0; i < data.times(0).size(); i++)
        r.inputSpikes.emplace_back(data.times(0)[i], data.channels(0)[i]);
    r.label = data.label(0);
    return r;
}

// (b) One LIF neuron with an exponential synapse and fixed input spikes, read out by a leaky
// integrator: the gradient through the spike times (the EventProp jump) at dt = 0.001 ms
// against central differences of the exact continuous-time loss, within 1 %.
TEST(EventPropGradient, SingleLifNeuronMatchesExactReferenceAtFineDt) {
    const LifParams lif{10.0, 1.0, 16};
    Network net;
    net.addSpikeInput("In", {3});
    net.addLif("Hid", 1, lif);
    net.addLeakyIntegrate("Out", 2, {10.0, Readout::AvgVar});
    net.addConnection("InHid", "In", "Hid", {{0.0, 0.0}, 5.0});
    net.addConnection("HidOut", "Hid", "Out", {{0.0, 0.0}, 5.0});
    EventPropOptions opt;
    opt.dt = 0.001;
    opt.exampleTimesteps = 30000; // 30 ms
    opt.batchSize = 1;
    opt.precision = Precision::Double;
    EventPropCompiler c(net, opt);
    const EventDataset data =
        oneExample(3, 2, 30.0, 1, {{1.2f, 0}, {2.1f, 1}, {3.4f, 2}, {9.5f, 0}});
    c.setDataset(data);
    c.setWeights("InHid", std::vector<double>{3.2, 2.4, 2.0});
    c.setWeights("HidOut", std::vector<double>{0.8, -0.5});
    const std::vector<uint32_t> example{0};
    const double loss = c.computeGradients(example).loss;

    const auto ref = referenceOf(c, data, lif, 10.0, 5.0, false, opt);
    const auto sim = eventprop_reference::simulate(ref);
    ASSERT_GE(sim.spikeCounts[0], 2u) << "the neuron must spike for the jump to matter";
    EXPECT_NEAR(loss, sim.loss, 1e-3 * sim.loss) << "engine and reference compute one loss";
    using R = eventprop_reference::Network;
    EXPECT_EQ(expectCloseWhereDefined(c.gradient("InHid"),
                                      eventprop_reference::gradient(ref, &R::wIn, 1e-6), 0.01),
              3u);
    EXPECT_EQ(expectCloseWhereDefined(c.gradient("HidOut"),
                                      eventprop_reference::gradient(ref, &R::wOut, 1e-6), 0.01),
              2u);
}

// (c) A recurrent LIF layer between input and readout at dt = 0.01 ms against the exact
// continuous-time reference within 5 %, for the weights whose perturbation changes no spike
// count.
TEST(EventPropGradient, RecurrentNetworkMatchesExactReference) {
    const LifParams lif{20.0, 1.0, 32};
    Network net;
    net.addSpikeInput("In", {4});
    net.addLif("Hid", 5, lif);
    net.addLeakyIntegrate("Out", 2, {20.0, Readout::AvgVar});
    net.addConnection("InHid", "In", "Hid", {{1.2, 0.6}, 5.0});
    net.addConnection("HidHid", "Hid", "Hid", {{0.0, 0.4}, 5.0});
    net.addConnection("HidOut", "Hid", "Out", {{0.0, 0.8}, 5.0});
    EventPropOptions opt;
    opt.dt = 0.01;
    opt.exampleTimesteps = 4000; // 40 ms
    opt.batchSize = 1;
    opt.precision = Precision::Double;
    opt.seed = 5;
    EventPropCompiler c(net, opt);
    const EventDataset data = randomExamples(4, 2, 1, 40.0, 3, 21);
    c.setDataset(data);
    const std::vector<uint32_t> example{0};
    const double loss = c.computeGradients(example).loss;

    const auto ref = referenceOf(c, data, lif, 20.0, 5.0, true, opt);
    const auto sim = eventprop_reference::simulate(ref);
    size_t spikes = 0;
    for (size_t n : sim.spikeCounts)
        spikes += n;
    ASSERT_GE(spikes, 5u) << "the hidden layer must spike";
    EXPECT_NEAR(loss, sim.loss, 0.01 * sim.loss);
    using R = eventprop_reference::Network;
    size_t compared = 0, total = 0;
    for (auto [conn, member] : {std::pair{"InHid", &R::wIn}, std::pair{"HidHid", &R::wRec},
                                std::pair{"HidOut", &R::wOut}}) {
        SCOPED_TRACE(conn);
        const auto g = c.gradient(conn);
        compared +=
            expectCloseWhereDefined(g, eventprop_reference::gradient(ref, member, 1e-6), 0.05);
        total += g.size();
    }
    EXPECT_GE(compared, total * 9 / 10) << "almost every weight must be comparable";
}

} // namespace

namespace {

// MaxVar: the gradient flows only through the step of the maximum, so central differences small
// enough not to move the maximum's step agree to rounding.
TEST(EventPropGradient, MaxVarReadoutMatchesFiniteDifferences) {
    Network net;
    net.addSpikeInput("In", {4});
    net.addLeakyIntegrate("Out", 3, {10.0, Readout::MaxVar});
    net.addConnection("InOut", "In", "Out", {{0.3, 0.5}, 5.0});
    EventPropOptions opt;
    opt.exampleTimesteps = 50;
    opt.dt = 1.0;
    opt.batchSize = 1;
    opt.precision = Precision::Double;
    EventPropCompiler c(net, opt);
    c.setDataset(randomExamples(4, 3, 1, 50.0, 2, 9));
    const std::vector<uint32_t> example{0};
    c.computeGradients(example);
    expectClose(c.gradient("InOut"), finiteDifferences(c, "InOut", example, 1e-6), 1e-4);
}

// A neuron that spikes more often than its buffer holds is reported with the population and the
// number of spikes that did not fit, never silently dropped.
TEST(EventPropOverflow, ReportsPopulationAndCount) {
    Network net;
    net.addSpikeInput("In", {1});
    net.addLif("Busy", 1, {20.0, 1.0, 2});
    net.addLeakyIntegrate("Out", 2);
    net.addConnection("InBusy", "In", "Busy", {{100.0, 0.0}, 5.0});
    net.addConnection("BusyOut", "Busy", "Out", {{0.1, 0.0}, 5.0});
    EventPropOptions opt;
    opt.exampleTimesteps = 40;
    opt.batchSize = 1;
    EventPropCompiler c(net, opt);
    // One input spike at 0.5 ms drives the neuron far above threshold: it spikes every step
    // while the current lasts, far more than twice.
    c.setDataset(oneExample(1, 2, 40.0, 0, {{0.5f, 0}}));
    try {
        c.evaluate(std::vector<uint32_t>{0});
        FAIL() << "overflow not reported";
    } catch (const ModelError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("population 'Busy'"), std::string::npos) << what;
        EXPECT_NE(what.find("spikes did not fit"), std::string::npos) << what;
        EXPECT_NE(what.find("(2 per neuron"), std::string::npos) << what;
        const size_t at = what.find("': ");
        ASSERT_NE(at, std::string::npos) << what;
        // The same discrete forward pass, computed in the test (referenceLifSpikes); every
        // spike beyond the first two.
        std::vector<double> arrivals(40, 0.0);
        arrivals[1] = 100.0; // the input spike of step 0 arrives
        const size_t spikes = referenceLifSpikes(arrivals).size();
        ASSERT_GT(spikes, 2u);
        EXPECT_EQ(size_t(std::stoul(what.substr(at + 3))), spikes - 2) << what;
    }
    // Reported once: the count starts again from zero.
    c.setWeights("InBusy", std::vector<double>{0.0});
    EXPECT_NO_THROW(c.evaluate(std::vector<uint32_t>{0}));
}

} // namespace

namespace {

// Spike-count regularisation above the target pushes the input weights' gradients up (so the
// optimiser lowers the weights and the rate), and not at all with strength 0.
TEST(EventPropRegularisation, PushesGradientsTowardsTheTargetCount) {
    auto gradients = [](double strength) {
        Network net;
        net.addSpikeInput("In", {3});
        net.addLif("Hid", 4, {20.0, 1.0, 64, strength, 0.0});
        net.addLeakyIntegrate("Out", 2);
        net.addConnection("InHid", "In", "Hid", {{2.0, 0.2}, 5.0});
        net.addConnection("HidOut", "Hid", "Out", {{0.0, 0.5}, 5.0});
        EventPropOptions opt;
        opt.exampleTimesteps = 60;
        opt.batchSize = 2;
        opt.precision = Precision::Double;
        EventPropCompiler c(net, opt);
        c.setDataset(randomExamples(3, 2, 2, 60.0, 4, 5));
        c.computeGradients(std::vector<uint32_t>{0, 1});
        return c.gradient("InHid");
    };
    const auto plain = gradients(0.0), regularised = gradients(1e-3);
    ASSERT_EQ(plain.size(), regularised.size());
    for (size_t i = 0; i < plain.size(); i++)
        EXPECT_GT(regularised[i], plain[i]) << "weight " << i;
}

} // namespace

namespace {

// (b) The gradient of one LIF neuron's first spike time: a one-neuron first-spike readout whose
// loss is alpha * (exp(t / tau1) - 1) (the softmax of one output is 1), against central
// differences of the exact continuous-time first spike time at dt = 0.001 ms, within 1 %.
TEST(EventPropGradient, FirstSpikeTimeMatchesExactReferenceAtFineDt) {
    FirstSpikeReadoutParams out;
    out.lif = {10.0, 1.0, 8};
    out.tau1 = 6.4;
    out.alpha = 0.1;
    Network net;
    net.addSpikeInput("In", {3});
    net.addFirstSpikeReadout("Out", 1, out);
    net.addConnection("InOut", "In", "Out", {{0.0, 0.0}, 5.0});
    EventPropOptions opt;
    opt.dt = 0.001;
    opt.exampleTimesteps = 20000; // 20 ms
    opt.batchSize = 1;
    opt.precision = Precision::Double;
    EventPropCompiler c(net, opt);
    const EventDataset data = oneExample(3, 1, 20.0, 0, {{1.2f, 0}, {2.1f, 1}, {3.4f, 2}});
    c.setDataset(data);
    const std::vector<double> w{2.0, 1.5, 1.7};
    c.setWeights("InOut", w);
    const std::vector<uint32_t> example{0};
    const double loss = c.computeGradients(example).loss;
    const auto g = c.gradient("InOut");

    // Reference: the same neuron as the "hidden" neuron of the continuous-time model.
    eventprop_reference::Network ref;
    ref.numInputs = 3;
    ref.numHidden = 1;
    ref.tauMHidden = out.lif.tauMem;
    ref.tauS = 5.0;
    ref.duration = 20.0;
    ref.dt = opt.dt;
    ref.wIn = w;
    for (size_t i = 0; i < data.times(0).size(); i++)
        ref.inputSpikes.emplace_back(data.times(0)[i], data.channels(0)[i]);
    auto lossOf = [&](const std::vector<double>& weights) {
        eventprop_reference::Network r = ref;
        r.wIn = weights;
        const double t = eventprop_reference::simulate(r).firstSpike[0];
        return out.alpha * (std::exp(t / out.tau1) - 1.0);
    };
    const double t0 = eventprop_reference::simulate(ref).firstSpike[0];
    ASSERT_FALSE(std::isnan(t0)) << "the neuron must spike";
    EXPECT_NEAR(loss, lossOf(w), 1e-3 * lossOf(w)) << "first spike at " << t0 << " ms";
    for (size_t i = 0; i < w.size(); i++) {
        const double h = 1e-6;
        auto up = w, down = w;
        up[i] += h;
        down[i] -= h;
        const double fd = (lossOf(up) - lossOf(down)) / (2.0 * h);
        EXPECT_NEAR(g[i], fd, 0.01 * std::fabs(fd)) << "weight " << i;
    }
}

} // namespace

namespace {

// An example counts as correct only when its label's output is the one largest: with every
// readout equal (no input weight) nothing is correct, whatever the label.
TEST(EventPropMetrics, TiesAreNotCorrect) {
    Network net;
    net.addSpikeInput("In", {2});
    net.addLeakyIntegrate("Out", 3);
    net.addConnection("InOut", "In", "Out", {{0.0, 0.0}, 5.0});
    EventPropOptions opt;
    opt.exampleTimesteps = 20;
    opt.batchSize = 3;
    EventPropCompiler c(net, opt);
    c.setDataset(randomExamples(2, 3, 3, 20.0, 2, 1));
    const Metrics tied = c.evaluate(std::vector<uint32_t>{0, 1, 2});
    EXPECT_EQ(tied.correct, 0u);
    EXPECT_NEAR(tied.meanLoss(), std::log(3.0), 1e-5);
    // One output favoured for all: exactly the examples of its class are correct.
    c.setWeights("InOut", std::vector<double>{0.0, 1.0, 0.0, 0.0, 1.0, 0.0});
    EXPECT_EQ(c.evaluate(std::vector<uint32_t>{0, 1, 2}).correct, 1u) << "labels are 0, 1, 2";
}

} // namespace

namespace {

// The runs the Sparse and BlockSparse gradients are compared in: 60 steps, batch 2, double.
EventPropOptions sparseComparisonOptions() {
    EventPropOptions opt;
    opt.exampleTimesteps = 60;
    opt.batchSize = 2;
    opt.precision = Precision::Double;
    return opt;
}

// `got` (a connection with missing synapses, weights `w`: 0 where there is none) against `dense`
// (the same weights in a Dense connection): equal at every synapse, 0 where there is none, and
// not all 0.
void expectGradientsEqualAtSynapses(const std::vector<double>& w, const std::vector<double>& got,
                                    const std::vector<double>& dense) {
    size_t nonzero = 0;
    for (size_t i = 0; i < w.size(); i++) {
        if (w[i] == 0.0) {
            EXPECT_EQ(got[i], 0.0) << "no synapse, no gradient";
            continue;
        }
        EXPECT_NEAR(got[i], dense[i], 1e-9 * std::max(1.0, std::fabs(dense[i]))) << "synapse " << i;
        nonzero += got[i] != 0.0;
    }
    EXPECT_GT(nonzero, 0u);
}

// A Sparse connection trains only its synapses: its gradient equals the gradient of the same
// network with a Dense connection whose missing synapses have weight 0, at every synapse that
// exists; setWeights refuses a weight where there is none.
TEST(EventPropSparse, GradientsEqualDenseAtExistingSynapses) {
    auto build = [](double probability) {
        Network net;
        net.addSpikeInput("In", {6});
        net.addLif("Hid", 10, {20.0, 1.0, 32});
        net.addLeakyIntegrate("Out", 2);
        net.addConnection("InHid", "In", "Hid", {{1.5, 0.5}, 5.0, probability});
        net.addConnection("HidOut", "Hid", "Out", {{0.0, 0.5}, 5.0});
        return net;
    };
    const EventPropOptions opt = sparseComparisonOptions();
    const EventDataset data = randomExamples(6, 2, 2, 60.0, 3, 17);
    EventPropCompiler sparse(build(0.5), opt), dense(build(1.0), opt);
    sparse.setDataset(data);
    dense.setDataset(data);
    const auto w = sparse.weights("InHid");
    size_t present = 0;
    for (double x : w)
        present += x != 0.0;
    ASSERT_GT(present, 10u);
    ASSERT_LT(present, w.size() - 10) << "about half the pairs are connected";
    dense.setWeights("InHid", w);
    dense.setWeights("HidOut", sparse.weights("HidOut"));
    const std::vector<uint32_t> batch{0, 1};
    sparse.computeGradients(batch);
    dense.computeGradients(batch);
    expectGradientsEqualAtSynapses(w, sparse.gradient("InHid"), dense.gradient("InHid"));
    auto bad = w;
    const size_t missing = std::find(w.begin(), w.end(), 0.0) - w.begin();
    bad[missing] = 1.0;
    EXPECT_THROW(sparse.setWeights("InHid", bad), ModelError);
}

// The same for a BlockSparse connection, feed-forward and recurrent (b = 8, half the tiles): its
// gradient equals the Dense network's at every synapse of its tiles, and is 0 elsewhere.
TEST(EventPropBlockSparse, GradientsEqualDenseAtExistingSynapses) {
    auto build = [](bool blocks) {
        ConnectionParams in{{1.5, 0.5}, 5.0}, rec{{0.0, 0.3}, 5.0};
        if (blocks) {
            in.blocks = BlockSparseInit{8, BlockLayout::Random, 0.5};
            rec.blocks = BlockSparseInit{8, BlockLayout::WattsStrogatz, 0.5, 0.2};
        }
        Network net;
        net.addSpikeInput("In", {20});
        net.addLif("Hid", 48, {20.0, 1.0, 32}); // 6 block-columns: 3 tiles per block-row
        net.addLeakyIntegrate("Out", 2);
        net.addConnection("InHid", "In", "Hid", in);
        net.addConnection("HidHid", "Hid", "Hid", rec);
        net.addConnection("HidOut", "Hid", "Out", {{0.0, 0.5}, 5.0});
        return net;
    };
    const EventPropOptions opt = sparseComparisonOptions();
    const EventDataset data = randomExamples(20, 2, 2, 60.0, 3, 17);
    EventPropCompiler blocks(build(true), opt), dense(build(false), opt);
    blocks.setDataset(data);
    dense.setDataset(data);
    for (const char* conn : {"InHid", "HidHid", "HidOut"})
        dense.setWeights(conn, blocks.weights(conn));
    const std::vector<uint32_t> batch{0, 1};
    blocks.computeGradients(batch);
    dense.computeGradients(batch);
    for (const char* conn : {"InHid", "HidHid"}) {
        SCOPED_TRACE(conn);
        const auto w = blocks.weights(conn);
        expectGradientsEqualAtSynapses(w, blocks.gradient(conn), dense.gradient(conn));
        const size_t present = w.size() - size_t(std::count(w.begin(), w.end(), 0.0));
        EXPECT_GT(present, w.size() / 4);
        EXPECT_LT(present, w.size() - w.size() / 4) << "about half the blocks hold a tile";
    }
    ConnectionParams bad{{1.5, 0.5}, 5.0, 0.5};
    bad.blocks = BlockSparseInit{};
    Network net;
    net.addSpikeInput("In", {20});
    net.addLif("Hid", 24);
    EXPECT_THROW(net.addConnection("InHid", "In", "Hid", bad), ModelError);
}

} // namespace

namespace {

// Delta synapses into a readout: (a) straight from the input, exact against central differences
// of the engine's loss; (b) from a spiking LIF layer, against the exact continuous-time
// reference at dt = 0.001 ms within 1 % (the adjoint term of a jump in V, not in I).
TEST(EventPropDelta, ReadoutOnlyMatchesFiniteDifferences) {
    Network net;
    net.addSpikeInput("In", {4});
    net.addLeakyIntegrate("Out", 3, {10.0, Readout::AvgVar});
    ConnectionParams p{{0.0, 0.5}, 5.0};
    p.synapse = Synapse::Delta;
    net.addConnection("InOut", "In", "Out", p);
    EventPropOptions opt;
    opt.exampleTimesteps = 50;
    opt.batchSize = 1;
    opt.precision = Precision::Double;
    EventPropCompiler c(net, opt);
    c.setDataset(randomExamples(4, 3, 1, 50.0, 3, 23));
    const std::vector<uint32_t> example{0};
    c.computeGradients(example);
    expectClose(c.gradient("InOut"), finiteDifferences(c, "InOut", example, 1e-6), 1e-4);
}

TEST(EventPropDelta, SpikingLayerMatchesExactReferenceAtFineDt) {
    const LifParams lif{10.0, 1.0, 16};
    Network net;
    net.addSpikeInput("In", {3});
    net.addLif("Hid", 2, lif);
    net.addLeakyIntegrate("Out", 2, {10.0, Readout::AvgVar});
    net.addConnection("InHid", "In", "Hid", {{0.0, 0.0}, 5.0});
    ConnectionParams delta{{0.0, 0.0}, 5.0};
    delta.synapse = Synapse::Delta;
    net.addConnection("HidOut", "Hid", "Out", delta);
    EventPropOptions opt;
    opt.dt = 0.001;
    opt.exampleTimesteps = 30000;
    opt.batchSize = 1;
    opt.precision = Precision::Double;
    EventPropCompiler c(net, opt);
    const EventDataset data =
        oneExample(3, 2, 30.0, 0, {{1.2f, 0}, {2.1f, 1}, {3.4f, 2}, {9.5f, 0}});
    c.setDataset(data);
    c.setWeights("InHid", std::vector<double>{3.2, 2.0, 2.4, 3.0, 2.0, 1.6});
    c.setWeights("HidOut", std::vector<double>{0.3, -0.2, -0.1, 0.25});
    const std::vector<uint32_t> example{0};
    const double loss = c.computeGradients(example).loss;
    auto ref = referenceOf(c, data, lif, 10.0, 5.0, false, opt);
    ref.deltaOutput = true;
    const auto sim = eventprop_reference::simulate(ref);
    ASSERT_GE(sim.spikeCounts[0] + sim.spikeCounts[1], 2u);
    EXPECT_NEAR(loss, sim.loss, 1e-3 * sim.loss);
    using R = eventprop_reference::Network;
    EXPECT_EQ(expectCloseWhereDefined(c.gradient("InHid"),
                                      eventprop_reference::gradient(ref, &R::wIn, 1e-6), 0.01),
              6u);
    EXPECT_EQ(expectCloseWhereDefined(c.gradient("HidOut"),
                                      eventprop_reference::gradient(ref, &R::wOut, 1e-6), 0.01),
              4u);
}

TEST(EventPropDelta, RefusedIntoSpikingNeurons) {
    Network net;
    net.addSpikeInput("In", {2});
    net.addLif("Hid", 2);
    ConnectionParams delta;
    delta.synapse = Synapse::Delta;
    EXPECT_THROW(net.addConnection("InHid", "In", "Hid", delta), ModelError);
}

} // namespace

namespace {

// A label output that never spikes is pushed up through its largest voltage: its loss
// silentPush * (vThresh - max V) is smooth in the weights, and its gradient is exact.
TEST(EventPropGradient, SilentLabelPushMatchesFiniteDifferences) {
    FirstSpikeReadoutParams out;
    out.lif = {10.0, 1.0, 4};
    out.silentPush = 2.0;
    Network net;
    net.addSpikeInput("In", {3});
    net.addFirstSpikeReadout("Out", 2, out);
    net.addConnection("InOut", "In", "Out", {{0.0, 0.0}, 5.0});
    EventPropOptions opt;
    opt.exampleTimesteps = 40;
    opt.batchSize = 1;
    opt.precision = Precision::Double;
    EventPropCompiler c(net, opt);
    c.setDataset(oneExample(3, 2, 40.0, 1, {{1.5f, 0}, {4.5f, 1}, {8.5f, 2}}));
    c.setWeights("InOut", std::vector<double>{0.5, 0.4, 0.3, 0.6, 0.7, 0.2});
    const std::vector<uint32_t> example{0};
    const Metrics m = c.computeGradients(example);
    EXPECT_GT(m.loss, 0.0) << "the label stays below threshold";
    const auto g = c.gradient("InOut");
    expectClose(g, finiteDifferences(c, "InOut", example, 1e-6), 1e-4);
    for (size_t i = 0; i < 3; i++)
        EXPECT_LT(g[i * 2 + 1], 0.0) << "raising the label's input weights lowers the loss";
}

} // namespace

namespace {

// Mean squared error on the Var readout: (1/2T) sum over steps and outputs of (V - onehot)^2,
// its gradient exact against central differences of the engine's own loss; the loss value
// against the same sum computed here from recorded voltages is in test_inference_compiler.cpp's
// spirit: here the loss of zero weights is known in closed form (V = 0: 1/2 per example).
TEST(EventPropGradient, MeanSquaredErrorOnVarMatchesFiniteDifferences) {
    Network net;
    net.addSpikeInput("In", {4});
    net.addLeakyIntegrate("Out", 3, {10.0, Readout::Var});
    net.addConnection("InOut", "In", "Out", {{0.2, 0.5}, 5.0});
    EventPropOptions opt;
    opt.exampleTimesteps = 50;
    opt.batchSize = 2;
    opt.precision = Precision::Double;
    opt.loss = Loss::MeanSquaredError;
    EventPropCompiler c(net, opt);
    c.setDataset(randomExamples(4, 3, 2, 50.0, 3, 29));
    const std::vector<uint32_t> batch{0, 1};
    c.computeGradients(batch);
    expectClose(c.gradient("InOut"), finiteDifferences(c, "InOut", batch, 1e-6), 1e-4);
    c.setWeights("InOut", std::vector<double>(12, 0.0));
    EXPECT_NEAR(c.evaluate(batch).loss, 2 * 0.5, 1e-12) << "(0 - 1)^2 T / 2T per example";
}

TEST(EventPropGradient, LossAndReadoutMustMatch) {
    auto build = [](Readout r, Loss loss) {
        Network net;
        net.addSpikeInput("In", {2});
        net.addLeakyIntegrate("Out", 2, {10.0, r});
        net.addConnection("InOut", "In", "Out");
        EventPropOptions opt;
        opt.exampleTimesteps = 10;
        opt.loss = loss;
        EventPropCompiler c(net, opt);
    };
    EXPECT_THROW(build(Readout::Var, Loss::SparseCategoricalCrossEntropy), ModelError);
    EXPECT_THROW(build(Readout::AvgVar, Loss::MeanSquaredError), ModelError);
    EXPECT_NO_THROW(build(Readout::Var, Loss::MeanSquaredError));
}

} // namespace

namespace {

// The models count 2T steps in 32-bit signed integers: a larger T is refused, not wrapped.
TEST(EventPropOptionsCheck, ExampleTimestepsBounded) {
    Network net;
    net.addSpikeInput("In", {2});
    net.addLeakyIntegrate("Out", 2);
    net.addConnection("InOut", "In", "Out");
    EventPropOptions opt;
    opt.exampleTimesteps = kMaxExampleTimesteps + 1;
    try {
        EventPropCompiler c(net, opt);
        FAIL() << "a T past the bound was accepted";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("exampleTimesteps must be between 1 and"),
                  std::string::npos)
            << e.what();
    }
    opt.exampleTimesteps = 0;
    EXPECT_THROW(EventPropCompiler(net, opt), ModelError);
}

} // namespace
