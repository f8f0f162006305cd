// Per-neuron arrays (NeuronModel::arrays): storage [batch][neuron][slots] that neuron code writes
// and reads by index, kept across steps, bounds-checked, restored by resetState, validated.
#include "backend_fixture.hpp"

#include "spikeforge/models.hpp"

#include <vector>

namespace {

using namespace spikeforge;
using sftest::BackendTest;
using sftest::errorOf;
using sftest::expectContains;

constexpr double kDt = 0.25;   // [ms] exact in binary, so every time below is exact
constexpr unsigned kSlots = 3; // ring of the last three step times
constexpr unsigned kBatch = 2;
constexpr unsigned kNeurons = 70; // more than one 64-wide work-group, not a multiple of it

// Each step writes t + 100·id + 1000·batch into slot (count mod 3) of its ring and counts;
// `prev` reads back the slot written two steps before (t − 2dt + …), so reads see earlier writes.
NeuronModel ringModel(const std::string& index = "n % 3u") {
    NeuronModel m;
    m.name = "Ring";
    m.vars = {{"n", "uint32_t"}, {"prev"}};
    m.arrays = {{"ring", "scalar", kSlots}};
    m.simCode = "if (n >= 2u) prev = ring[(n - 2u) % 3u];\n"
                "ring[" +
                index +
                "] = t + 100.0 * id + 1000.0 * batch;\n"
                "n += 1u;";
    return m;
}

void build(Model& m, const NeuronModel& model) {
    m.setDT(kDt);
    m.setPrecision(Precision::Double);
    m.setBatchSize(kBatch);
    m.addNeuronGroup("Pop", kNeurons, model, {}, {{"n", 0.0}, {"prev", -1.0}});
}

using NeuronArrayTest = BackendTest;

TEST_P(NeuronArrayTest, RingsHoldEachNeuronsLastWritesAndReadBack) {
    Model m("neuron_arrays");
    build(m, ringModel());
    auto p = prefs();
    p.keepInitialState = true;
    Simulation sim(m, p);
    constexpr unsigned kSteps = 5; // steps 0..4 write slots 0,1,2,0,1
    sim.run(kSteps);
    sim.pull("Pop", "ring");
    sim.pull("Pop", "prev");
    const auto ring = sim.view<double>("Pop", "ring");
    const auto prev = sim.view<double>("Pop", "prev");
    ASSERT_EQ(ring.size(), size_t(kBatch) * kNeurons * kSlots);
    for (unsigned b = 0; b < kBatch; b++)
        for (unsigned i = 0; i < kNeurons; i++) {
            const double base = 100.0 * i + 1000.0 * b;
            const double* row = &ring[(size_t(b) * kNeurons + i) * kSlots];
            // slot k last written at the latest step s < 5 with s mod 3 = k
            EXPECT_EQ(row[0], 3 * kDt + base) << b << "," << i;
            EXPECT_EQ(row[1], 4 * kDt + base) << b << "," << i;
            EXPECT_EQ(row[2], 2 * kDt + base) << b << "," << i;
            EXPECT_EQ(prev[size_t(b) * kNeurons + i], 2 * kDt + base) << b << "," << i;
        }

    sim.resetState({"Pop.ring"});
    sim.pull("Pop", "ring");
    for (double v : sim.view<double>("Pop", "ring"))
        ASSERT_EQ(v, 0.0) << "resetState did not restore the ring";
}

TEST_P(NeuronArrayTest, ScratchArraysAreNotTrialState) {
    NeuronModel model = ringModel();
    model.arrays[0].trialState = false;
    Model m("neuron_arrays_scratch");
    build(m, model);
    auto p = prefs();
    p.keepInitialState = true;
    Simulation sim(m, p);
    sim.run(5);
    sim.resetState(); // every trial-state array: n and prev go back, the ring stays
    sim.pull("Pop", "ring");
    sim.pull("Pop", "n");
    const auto ring = sim.view<double>("Pop", "ring");
    EXPECT_EQ(ring[0], 3 * kDt) << "resetState restored a scratch array";
    for (uint32_t n : sim.view<uint32_t>("Pop", "n"))
        ASSERT_EQ(n, 0u) << "the variables are still trial state";
    expectContains(errorOf<ModelError>([&] { sim.resetState({"Pop.ring"}); }),
                   {"Pop.ring", "not trial state"});
}

TEST_P(NeuronArrayTest, AnIndexOutOfRangeIsReportedWithTheGroupAndField) {
    Model m("neuron_arrays_range");
    build(m, ringModel("n")); // n = 3 is past the 3 slots
    Simulation sim(m, prefs());
    sim.run(3); // slots 0, 1, 2: fine
    expectContains(errorOf<ModelError>([&] { sim.run(1); }),
                   {"Pop.simCode", "out of range", "'ring'", "step 3"});
}

TEST(NeuronArrays, DeclarationsAreValidated) {
    {
        Model m("no_slots");
        NeuronModel r = ringModel();
        r.arrays[0].slots = 0;
        build(m, r);
        expectContains(errorOf<ModelError>([&] { m.finalise(); }), {"'ring'", "0 slots"});
    }
    {
        Model m("clash");
        NeuronModel r = ringModel();
        r.arrays.push_back({"prev", "scalar", 2});
        build(m, r);
        expectContains(errorOf<ModelError>([&] { m.finalise(); }), {"'prev'", "clashes"});
    }
    {
        Model m("threshold_writes");
        NeuronModel r = ringModel();
        r.thresholdConditionCode = "(ring[0] = 1.0) > 0.0";
        build(m, r);
        expectContains(errorOf<ModelError>([&] { m.finalise(); }), {"thresholdConditionCode"});
    }
}

SF_INSTANTIATE_BACKEND_TESTS(NeuronArrayTest);

} // namespace
