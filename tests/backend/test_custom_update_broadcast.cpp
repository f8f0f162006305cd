// Broadcast custom-update references (GeNN's BROADCAST: write-only, every copy of the element)
// and references to spike counts and to a dendritic-delay buffer (docs/custom_updates.md). An
// update whose only references are Broadcast is not batched and resets every batch element's
// copy — only where the code assigned it; a Broadcast reference to a dendritic-delay buffer
// empties every slot, one to a variable read with a delay writes every delay slot; a spike-count
// reference reads the last step's count of each batch element (through the spike queue's slots,
// with an axonal delay); every misuse is a ModelError naming the update and the reference. Every
// backend, batch 3.
#include "backend_fixture.hpp"
#include "probe_models.hpp"

#include "spikeforge/models.hpp"

#include <string>
#include <vector>

using namespace spikeforge;
using sftest::expectError;
using A = CustomUpdateVarAccess;
using sftest::accumulate;

namespace {

constexpr unsigned kBatch = 3, kPost = 4;

NeuronModel always() {
    NeuronModel m;
    m.name = "Always";
    m.thresholdConditionCode = "true";
    return m;
}

// Keeps its input: inSyn grows each step a spike arrives.
PostsynapticModel keep() {
    PostsynapticModel m;
    m.name = "Keep";
    m.simCode = "injectCurrent(0.0);";
    return m;
}

// Zeroes the referenced element where `condition` holds.
CustomUpdateModel zeroWhere(const std::string& condition) {
    CustomUpdateModel m;
    m.name = "ZeroWhere";
    m.varRefs = {{"x", "scalar", A::Broadcast}};
    m.updateCode = "if (" + condition + ") {\n    x = 0.0;\n}";
    return m;
}

class CustomUpdateBroadcast : public sftest::BackendTest {};

// inSyn differs per batch element (weights per batch element); a non-batched update with only a
// Broadcast reference zeroes the even targets in every batch element and leaves the odd ones.
TEST_P(CustomUpdateBroadcast, ZeroesEveryBatchCopyWhereAssigned) {
    Model m("broadcast_insyn");
    m.setBatchSize(kBatch);
    m.setPrecision(Precision::Double);
    m.addNeuronGroup("Pre", 1, always(), {}, {});
    m.addNeuronGroup("Post", kPost, accumulate(), {}, {{"acc", 0.0}});
    WeightUpdateModel pulse;
    pulse.name = "BatchPulse";
    pulse.vars = {{"g"}}; // ReadWrite: one copy per batch element
    pulse.preSpikeSynCode = "addToPost(g + batch);";
    m.addSynapseGroup("S", MatrixType::Dense, 0, "Pre", "Post", {pulse, {}, {{"g", 1.0}}, {}, {}},
                      {keep(), {}, {}});
    const CustomUpdate& reset = m.addCustomUpdate("Reset", "Reset", zeroWhere("id % 2 == 0"), {},
                                                  {}, {{"x", {"S", "inSyn"}}});
    Simulation sim(m, prefs());
    EXPECT_FALSE(reset.isBatched()) << "only a Broadcast reference: not batched";
    sim.run(3); // spikes of steps 0 and 1 arrive: inSyn = 2 (1 + batch)
    sim.customUpdate("Reset");
    sim.pull("S", "inSyn");
    const auto in = sim.view<double>("S", "inSyn");
    for (unsigned b = 0; b < kBatch; b++)
        for (unsigned j = 0; j < kPost; j++)
            EXPECT_EQ(in[b * kPost + j], j % 2 == 0 ? 0.0 : 2.0 * (1.0 + b))
                << "batch " << b << " target " << j;
}

// A dendritic-delay buffer holds input for later steps; a Broadcast reset empties every slot, so
// nothing that was in flight arrives afterwards.
TEST_P(CustomUpdateBroadcast, EmptiesEverySlotOfADendriticDelayBuffer) {
    Model m("broadcast_dendritic");
    m.setBatchSize(kBatch);
    m.setPrecision(Precision::Double);
    m.addNeuronGroup("Pre", 1, always(), {}, {});
    m.addNeuronGroup("Post", kPost, accumulate(), {}, {{"acc", 0.0}});
    WeightUpdateModel late;
    late.name = "Late";
    late.vars = {{"g", "scalar", VarAccess::ReadOnly}};
    late.preSpikeSynCode = "addToPostDelay(g, 4);";
    auto& sg = m.addSynapseGroup("S", MatrixType::Dense, 0, "Pre", "Post",
                                 {late, {}, {{"g", 1.0}}, {}, {}}, {models::DeltaCurr(), {}, {}});
    sg.setMaxDendriticDelaySteps(6);
    m.addCustomUpdate("Reset", "Reset", zeroWhere("true"), {}, {}, {{"x", {"S", "denDelay"}}});
    Simulation sim(m, prefs());
    // Spikes of steps 0.. are added in steps 1.. and delivered 4 steps later: steps 5, 6, ...
    sim.run(6); // delivered in step 5: one spike's input
    sim.pull("Post", "acc");
    for (double v : sim.view<double>("Post", "acc"))
        ASSERT_EQ(v, 1.0);
    sim.customUpdate("Reset"); // the four spikes in flight are dropped
    sim.run(4);                // steps 6..9: only what steps 6..9 add, due from step 10 on
    sim.pull("Post", "acc");
    for (double v : sim.view<double>("Post", "acc"))
        EXPECT_EQ(v, 1.0);
    sim.run(1); // step 10 delivers step 6's input
    sim.pull("Post", "acc");
    for (double v : sim.view<double>("Post", "acc"))
        EXPECT_EQ(v, 2.0);
}

// A neuron variable that synapse code reads with an axonal delay keeps its past values, one per
// delay slot and batch element; a Broadcast write replaces every one of them (GeNN writes every
// delay slot), so the spikes in flight deliver the new value at once, and so do later ones.
TEST_P(CustomUpdateBroadcast, WritesEveryDelaySlotOfADelayedNeuronVariable) {
    Model m("broadcast_delayed_var");
    m.setBatchSize(kBatch);
    m.setPrecision(Precision::Double);
    NeuronModel keeper = always();
    keeper.name = "Keeper";
    keeper.vars = {{"V"}}; // ReadWrite: one copy per batch element; the update leaves it
    m.addNeuronGroup("Pre", 2, keeper, {}, {{"V", 1.0}});
    m.addNeuronGroup("Post", kPost, accumulate(), {}, {{"acc", 0.0}});
    WeightUpdateModel delayed;
    delayed.name = "DelayedV";
    delayed.preSpikeSynCode = "addToPost(V_pre);";
    m.addSynapseGroup("S", MatrixType::Dense, 3, "Pre", "Post", {delayed, {}, {}, {}, {}},
                      {models::DeltaCurr(), {}, {}});
    CustomUpdateModel set;
    set.name = "SetV";
    set.varRefs = {{"x", "scalar", A::Broadcast}};
    set.updateCode = "x = 5.0 + id;";
    m.addCustomUpdate("Set", "Set", set, {}, {}, {{"x", {"Pre", "V"}}});
    Simulation sim(m, prefs());
    ASSERT_GT(m.neuronGroup("Pre").numDelaySlots(), 3u);
    sim.run(6); // every step from step 4 on delivers a spike of each source: V_pre = 1 + 1
    sim.pull("Post", "acc");
    const auto acc = sim.view<double>("Post", "acc");
    const std::vector<double> before(acc.begin(), acc.end());
    sim.customUpdate("Set");
    for (unsigned step = 1; step <= 3; step++) {
        sim.run(1); // the spike delivered was emitted three steps before the update
        sim.pull("Post", "acc");
        for (size_t k = 0; k < acc.size(); k++)
            EXPECT_EQ(acc[k], before[k] + step * (5.0 + 6.0))
                << "step " << step << " after the update, batch " << k / kPost;
    }
}

// Spikes where (id + batch + n) % 4 == 0, n the step count after the update: the count of the
// last step, per batch element, through a queue of 5 slots (an axonal delay of 3).
TEST_P(CustomUpdateBroadcast, SpikeCountsReadTheLastStepPerBatchElement) {
    constexpr unsigned kN = 10;
    NeuronModel clock;
    clock.name = "Clock";
    clock.vars = {{"n", "uint32_t"}};
    clock.simCode = "n += 1u;";
    clock.thresholdConditionCode = "(id + batch + n) % 4u == 0u";
    Model m("spike_count_ref");
    m.setBatchSize(kBatch);
    m.addNeuronGroup("Clock", kN, clock, {}, {{"n", 0.0}});
    m.addNeuronGroup("Post", kPost, accumulate(), {}, {{"acc", 0.0}});
    m.addSynapseGroup("S", MatrixType::Dense, 3, "Clock", "Post",
                      {models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}},
                      {models::DeltaCurr(), {}, {}});
    CustomUpdateModel count;
    count.name = "Count";
    count.vars = {{"c", "uint32_t"}};
    count.varRefs = {{"n", "uint32_t", A::ReadOnly}, {"k", "uint32_t", A::ReadOnly}};
    count.updateCode = "c = k * 1000u + n;";
    m.addCustomUpdate("Counts", "Counts", count, {}, {{"c", 0.0}},
                      {{"n", {"Clock", "n"}}, {"k", {"Clock", "spikeCount"}}});
    Simulation sim(m, prefs());
    ASSERT_GT(m.neuronGroup("Clock").numDelaySlots(), 2u);
    EXPECT_EQ(sim.batchCopies("Counts", "c"), kBatch) << "a batched update's own variable";
    for (unsigned steps : {5u, 6u, 9u}) {
        sim.run(steps - static_cast<unsigned>(sim.timestep()));
        sim.customUpdate("Counts");
        sim.pull("Counts", "c");
        const auto c = sim.view<uint32_t>("Counts", "c");
        for (unsigned b = 0; b < kBatch; b++) {
            unsigned expected = 0;
            for (unsigned id = 0; id < kN; id++)
                expected += (id + b + steps) % 4 == 0;
            for (unsigned id = 0; id < kN; id++)
                EXPECT_EQ(c[b * kN + id], expected * 1000u + steps)
                    << "after " << steps << " steps, batch " << b << ", neuron " << id;
        }
    }
}

// A per-synapse variable with a batch dimension (Sparse rows with padding): a non-batched
// update broadcasts the value each synapse gets to every batch element's copy.
TEST_P(CustomUpdateBroadcast, SetsEveryBatchCopyOfPerSynapseVariables) {
    Model m("broadcast_weights");
    m.setBatchSize(kBatch);
    m.setPrecision(Precision::Double);
    m.addNeuronGroup("Pre", 5, always(), {}, {});
    m.addNeuronGroup("Post", 7, accumulate(), {}, {{"acc", 0.0}});
    WeightUpdateModel plastic;
    plastic.name = "Plastic";
    plastic.vars = {{"g"}}; // ReadWrite: one copy per batch element
    plastic.preSpikeSynCode = "addToPost(g);\ng += 1.0 + batch;";
    m.addSynapseGroup("S", MatrixType::Sparse, 0, "Pre", "Post",
                      {plastic, {}, {{"g", 0.0}}, {}, {}}, {models::DeltaCurr(), {}, {}},
                      init::FixedProbability(0.5));
    CustomUpdateModel set;
    set.name = "SetFromPair";
    set.varRefs = {{"w", "scalar", A::Broadcast}};
    set.updateCode = "w = id_pre * 10.0 + id_post;";
    m.addCustomUpdate("Set", "Set", set, {}, {}, {{"w", {"S", "g"}}});
    Simulation sim(m, prefs());
    sim.run(3); // the copies drift apart: batch b adds (1 + b) per spike
    sim.customUpdate("Set");
    const auto synapses = sim.synapses("S");
    ASSERT_FALSE(synapses.empty());
    for (unsigned b = 0; b < kBatch; b++) {
        const auto g = sim.synapseValues("S", "g", b);
        for (size_t k = 0; k < synapses.size(); k++)
            EXPECT_EQ(g[k], synapses[k].pre * 10.0 + synapses[k].post) << "batch " << b;
    }
}

} // namespace

SF_INSTANTIATE_BACKEND_TESTS(CustomUpdateBroadcast);

namespace {

// A model with a batched Post.acc, an inSyn and a dendritic buffer to reference.
void base(Model& m) {
    m.setBatchSize(kBatch);
    m.addNeuronGroup("Pre", 1, always(), {}, {});
    m.addNeuronGroup("Post", kPost, accumulate(), {}, {{"acc", 0.0}});
    m.addSynapseGroup("S", MatrixType::Dense, 0, "Pre", "Post",
                      {models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}},
                      {models::DeltaCurr(), {}, {}});
}

TEST(CustomUpdateBroadcastErrors, BroadcastIsWriteOnlyPlainAssignment) {
    for (const std::string code : {"y = x;", "x += 1.0;", "x++;"}) {
        Model m("broadcast_read");
        base(m);
        CustomUpdateModel cu = zeroWhere("true");
        cu.vars = {{"y"}};
        cu.updateCode = code;
        m.addCustomUpdate("R", "R", cu, {}, {{"y", 0.0}}, {{"x", {"S", "inSyn"}}});
        expectError<ModelError>([&] { m.finalise(); },
                                {"R.updateCode line 1, column", "'x' is write-only"});
    }
}

TEST(CustomUpdateBroadcastErrors, MisusesNameTheUpdateAndTheReference) {
    { // a batched update (its other reference is batched) cannot broadcast
        Model m("broadcast_batched");
        base(m);
        CustomUpdateModel cu = zeroWhere("true");
        cu.varRefs.push_back({"a", "scalar", A::ReadWrite});
        cu.updateCode = "x = a;\na = 0.0;";
        m.addCustomUpdate("R", "R", cu, {}, {}, {{"x", {"S", "inSyn"}}, {"a", {"Post", "acc"}}});
        expectError<ModelError>([&] { m.finalise(); },
                                {"custom update 'R'", "reference 'x'", "Broadcast", "batched"});
    }
    { // an own variable cannot be Broadcast
        Model m("broadcast_own");
        base(m);
        CustomUpdateModel cu = zeroWhere("true");
        cu.vars = {{"v", "scalar", A::Broadcast}};
        cu.updateCode = "v = 1.0;\nx = 0.0;";
        m.addCustomUpdate("R", "R", cu, {}, {{"v", 0.0}}, {{"x", {"S", "inSyn"}}});
        expectError<ModelError>([&] { m.finalise(); },
                                {"custom update 'R'", "variable 'v'", "Broadcast"});
    }
    { // a spike count is read-only
        Model m("spike_count_write");
        base(m);
        CustomUpdateModel cu;
        cu.name = "W";
        cu.varRefs = {{"k", "uint32_t", A::ReadWrite}, {"a", "scalar", A::ReadWrite}};
        cu.updateCode = "k = 0u;\na = 0.0;";
        m.addCustomUpdate("R", "R", cu, {}, {},
                          {{"k", {"Post", "spikeCount"}}, {"a", {"Post", "acc"}}});
        expectError<ModelError>([&] { m.finalise(); },
                                {"custom update 'R'", "reference 'k'", "spike count", "read-only"});
    }
    { // a dendritic buffer only as Broadcast, and only where addToPostDelay makes one
        Model m("dendritic_read");
        base(m);
        CustomUpdateModel cu;
        cu.name = "D";
        cu.vars = {{"y"}};
        cu.varRefs = {{"d", "scalar", A::ReadOnly}};
        cu.updateCode = "y = d;";
        m.addCustomUpdate("R", "R", cu, {}, {{"y", 0.0}}, {{"d", {"S", "denDelay"}}});
        expectError<ModelError>([&] { m.finalise(); },
                                {"custom update 'R'", "reference 'd'", "only Broadcast"});
        Model n("dendritic_none");
        base(n);
        n.addCustomUpdate("R", "R", zeroWhere("true"), {}, {}, {{"x", {"S", "denDelay"}}});
        expectError<ModelError>([&] { n.finalise(); },
                                {"custom update 'R'", "reference 'x'", "synapse group 'S'",
                                 "no dendritic-delay buffer"});
    }
}

} // namespace
