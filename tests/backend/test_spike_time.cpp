// Last spike times (`st`) are stored only where code reads them or the user asks for them
// (NeuronGroup::setSpikeTimeRequired, GeNN's spike-time-required), and where stored they hold
// each neuron's latest spike time. Neuron loops are marked independent only when no neuron's
// code writes memory another neuron's code touches (an EGP).
#include "backend_fixture.hpp"
#include "codegen/arrays.hpp"
#include "codegen/lower.hpp"
#include "codegen/lowerer.hpp"
#include "spikeforge/models.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>

using namespace spikeforge;
using sftest::expectContains;

namespace {

constexpr double kDt = 0.5; // [ms]

// Neuron i spikes every i % 5 + 2 steps (its counter x reaches the period).
NeuronModel periodic() {
    NeuronModel n;
    n.name = "Periodic";
    n.vars = {{"x"}};
    n.simCode = "x += 1.0;";
    n.thresholdConditionCode = "x >= id % 5 + 2";
    n.resetCode = "x = 0.0;";
    return n;
}

// The same, and it copies its own last spike time into `last` (neuron code reads st).
NeuronModel periodicReader() {
    NeuronModel n = periodic();
    n.name = "PeriodicReader";
    n.vars = {{"x"}, {"last"}};
    n.simCode = "x += 1.0;\nlast = st;";
    return n;
}

WeightUpdateModel reads(const std::string& name, const std::string& code) {
    WeightUpdateModel w;
    w.name = name;
    w.vars = {{"g"}};
    w.preSpikeSynCode = code;
    return w;
}

void addPeriodic(Model& m, const std::string& name, unsigned n,
                 const NeuronModel& model = periodic()) {
    VarInitMap inits{{"x", 0.0}};
    if (model.vars.size() > 1) inits["last"] = 0.0;
    m.addNeuronGroup(name, n, model, {}, inits);
}

std::set<std::string> arrayNames(const Model& m) {
    std::set<std::string> out;
    for (const auto& a : codegen::planArrays(m))
        out.insert(a.name);
    return out;
}

TEST(SpikeTimeStorage, OnlyWhereCodeReadsItOrTheUserAsks) {
    Model m("spike_time_readers");
    addPeriodic(m, "Plain", 10);
    addPeriodic(m, "Reader", 10, periodicReader());
    addPeriodic(m, "Src", 10);
    addPeriodic(m, "Tgt", 10);
    addPeriodic(m, "PostSrc", 10);
    addPeriodic(m, "PostTgt", 10);
    addPeriodic(m, "Kept", 10);
    m.neuronGroup("Kept").setSpikeTimeRequired(true);
    m.addSynapseGroup("ReadsPre", MatrixType::Dense, 0, "Src", "Tgt",
                      {reads("ReadsPre", "g = st_pre;"), {}, {{"g", 0.0}}, {}, {}},
                      {models::DeltaCurr(), {}, {}});
    m.addSynapseGroup("ReadsPost", MatrixType::Dense, 0, "PostSrc", "PostTgt",
                      {reads("ReadsPost", "g = st_post;"), {}, {{"g", 0.0}}, {}, {}},
                      {models::DeltaCurr(), {}, {}});
    m.finalise();
    const auto names = arrayNames(m);
    const std::map<std::string, bool> want{{"Plain", false}, {"Reader", true},   {"Src", true},
                                           {"Tgt", false},   {"PostSrc", false}, {"PostTgt", true},
                                           {"Kept", true}};
    for (const auto& [group, stored] : want) {
        EXPECT_EQ(names.count(group + ".st"), stored ? 1u : 0u) << group;
        EXPECT_EQ(m.neuronGroup(group).spikeTimeRequired(), stored) << group;
    }
    // The request can be withdrawn; finalise works it out again.
    m.neuronGroup("Kept").setSpikeTimeRequired(false);
    m.finalise();
    EXPECT_EQ(arrayNames(m).count("Kept.st"), 0u);
    EXPECT_EQ(arrayNames(m).count("Reader.st"), 1u);
}

TEST(SpikeTimeStorage, NeuronsAreIndependentUnlessTheirCodeWritesAnEGP) {
    auto independent = [](const NeuronModel& model) {
        Model m("independence");
        m.addNeuronGroup("G", 40, model, {}, {{"x", 0.0}});
        m.finalise();
        const codegen::Plan p = codegen::lowerModel(m);
        for (const auto& k : p.kernels)
            if (k.entry == "sf_neuron_update")
                return std::get<codegen::NeuronUpdateBody>(k.groups.at(0).body).independentNeurons;
        ADD_FAILURE() << "no neuron update kernel";
        return false;
    };
    EXPECT_TRUE(independent(periodic()));
    NeuronModel readingOnly = periodic();
    readingOnly.name = "ReadingOnly";
    readingOnly.egps = {{"gain", "scalar"}};
    readingOnly.simCode = "x += gain[0];";
    EXPECT_TRUE(independent(readingOnly));
    // The snippet language keeps EGPs read-only in neuron code today; the lowering still marks
    // code that assigns one (memory every neuron shares) so that a loop is never declared
    // independent when it is not.
    Model m("independence_writes");
    m.addNeuronGroup("G", 40, readingOnly, {}, {{"x", 0.0}});
    m.finalise();
    codegen::Lowerer e(m);
    snippet::Scanned writes;
    writes.referencedNames = {"gain"};
    EXPECT_FALSE((e.bindEGPs(writes, readingOnly, "G", "e_"), e.writesEGP));
    writes.assignedNames = {"gain"};
    EXPECT_TRUE((e.bindEGPs(writes, readingOnly, "G", "e_"), e.writesEGP));
}

class SpikeTimeTest : public sftest::BackendTest {};

// With spike times kept, st holds each neuron's latest spike time, in every batch element; the
// neuron code reading st sees the same values.
TEST_P(SpikeTimeTest, HoldsEachNeuronsLatestSpike) {
    for (unsigned batch : {1u, 3u}) {
        Model m("spike_time_values");
        m.setDT(kDt);
        m.setBatchSize(batch);
        addPeriodic(m, "Kept", 37);
        addPeriodic(m, "Reader", 37, periodicReader());
        m.neuronGroup("Kept").setSpikeTimeRequired(true);
        m.neuronGroup("Kept").setSpikeRecording(true);
        Simulation sim(m, prefs(1));
        sim.setRecordingWindow(23);
        sim.run(23);
        sim.pullRecording();
        std::vector<double> latest(37, -1.0);
        for (const auto& e : sim.spikes("Kept"))
            if (e.batch == 0) latest[e.neuron] = std::max(latest[e.neuron], e.time);
        sim.pull("Kept", "st");
        sim.pull("Reader", "st");
        sim.pull("Reader", "last");
        const auto kept = sim.view<float>("Kept", "st");
        const auto read = sim.view<float>("Reader", "st");
        const auto last = sim.view<float>("Reader", "last");
        for (unsigned b = 0; b < batch; b++)
            for (unsigned i = 0; i < 37; i++) {
                ASSERT_GE(latest[i], 0.0) << i; // every neuron spiked
                EXPECT_EQ(kept[b * 37 + i], float(latest[i])) << "batch " << b << " neuron " << i;
                EXPECT_EQ(read[b * 37 + i], float(latest[i])) << "batch " << b << " neuron " << i;
                // `last` copied st before this step's spike: the latest spike, or the one before
                // it when the neuron spiked in the last step.
                const double period = double(i % 5 + 2) * kDt;
                const bool spikedLast = latest[i] == 22 * kDt;
                EXPECT_EQ(last[b * 37 + i], float(spikedLast ? latest[i] - period : latest[i]))
                    << "batch " << b << " neuron " << i;
            }
    }
}

TEST_P(SpikeTimeTest, AGroupWithoutThemSaysHowToKeepThem) {
    Model m("spike_time_missing");
    addPeriodic(m, "Plain", 10);
    Simulation sim(m, prefs(1));
    sim.run(3);
    expectContains(sftest::errorOf<ModelError>([&] { sim.pull("Plain", "st"); }),
                   {"Plain", "spike times", "setSpikeTimeRequired"});
}

SF_INSTANTIATE_BACKEND_TESTS(SpikeTimeTest);

} // namespace
