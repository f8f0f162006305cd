// Custom-update references to what the generator keeps for a group (docs/custom_updates.md): a
// synapse group's postsynaptic input `inSyn` (read and written) and a neuron group's spike times
// `st` (kept because the reference reads them). Every backend, batch 2.
#include "backend_fixture.hpp"

#include "spikeforge/models.hpp"

#include <string>
#include <vector>

using namespace spikeforge;
using A = CustomUpdateVarAccess;

namespace {

constexpr unsigned kBatch = 2, kPost = 3;

class CustomUpdateRefs : public sftest::BackendTest {};

TEST_P(CustomUpdateRefs, InSynAndSpikeTimesCanBeReferenced) {
    NeuronModel always;
    always.name = "Always";
    always.thresholdConditionCode = "true";
    NeuronModel idle;
    idle.name = "Idle";
    idle.vars = {{"x"}};
    // Keeps its input: inSyn grows by the weight each step a spike arrives.
    PostsynapticModel keep;
    keep.name = "Keep";
    keep.simCode = "injectCurrent(0.0);";
    Model m("cu_refs");
    m.setBatchSize(kBatch);
    m.setPrecision(Precision::Double);
    m.setDT(0.1);
    m.addNeuronGroup("Pre", 1, always, {}, {});
    m.addNeuronGroup("Post", kPost, idle, {}, {{"x", 0.0}});
    m.addSynapseGroup("S", MatrixType::Dense, 0, "Pre", "Post",
                      {models::StaticPulse(), {}, {{"g", 0.5}}, {}, {}}, {keep, {}, {}});
    CustomUpdateModel copy;
    copy.name = "Copy";
    copy.vars = {{"seen"}};
    copy.varRefs = {{"in", "scalar", A::ReadWrite}};
    copy.updateCode = "seen = in;\nin = 0.0;";
    m.addCustomUpdate("Drain", "Drain", copy, {}, {{"seen", -1.0}}, {{"in", {"S", "inSyn"}}});
    CustomUpdateModel times;
    times.name = "Times";
    times.vars = {{"last"}};
    times.varRefs = {{"spike", "scalar", A::ReadOnly}};
    times.updateCode = "last = spike;";
    m.addCustomUpdate("When", "When", times, {}, {{"last", 0.0}}, {{"spike", {"Pre", "st"}}});
    Simulation sim(m, prefs());
    sim.run(3); // Pre spikes in steps 0, 1, 2; S delivers the first two in steps 1 and 2.
    sim.customUpdate("Drain");
    sim.customUpdate("When");
    sim.pull("Drain", "seen");
    for (double v : sim.view<double>("Drain", "seen"))
        EXPECT_DOUBLE_EQ(v, 1.0);
    sim.pull("S", "inSyn");
    for (double v : sim.view<double>("S", "inSyn"))
        EXPECT_EQ(v, 0.0);
    sim.pull("When", "last");
    for (double v : sim.view<double>("When", "last"))
        EXPECT_NEAR(v, 0.2, 1e-12); // the spike of step 2
    sim.run(1);                     // one more spike arrives: inSyn restarts from the drained 0
    sim.pull("S", "inSyn");
    for (double v : sim.view<double>("S", "inSyn"))
        EXPECT_DOUBLE_EQ(v, 0.5);
}

} // namespace

SF_INSTANTIATE_BACKEND_TESTS(CustomUpdateRefs);
