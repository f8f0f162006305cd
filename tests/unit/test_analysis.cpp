// Snippets analysed once: Model::finalise scans every code field exactly once and keeps the
// results; later passes (here the array layout) read them through analysis::of / at and never
// scan again. The facts recorded for a few snippets, and reading before finalise, are checked.
#include "codegen/arrays.hpp"
#include "model/analysis.hpp"
#include "model/contexts.hpp"
#include "spikeforge/models.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace spikeforge;

namespace {

NeuronModel noisy() {
    NeuronModel n;
    n.name = "Noisy";
    n.vars = {{"V"}, {"U"}};
    n.simCode = "V += rand_uniform() * dt + Isyn;\nU = V;";
    n.thresholdConditionCode = "V > 1.0";
    n.resetCode = "V = 0.0;";
    return n;
}

NeuronModel plain() {
    NeuronModel n;
    n.name = "Plain";
    n.vars = {{"V"}};
    n.simCode = "V += Isyn * dt;";
    n.thresholdConditionCode = "V > 1.0";
    n.resetCode = "V = 0.0;";
    return n;
}

WeightUpdateModel delayed() {
    WeightUpdateModel w;
    w.name = "Delayed";
    w.vars = {{"g", "scalar", VarAccess::ReadOnly}};
    w.preSpikeSynCode = "addToPostDelay(g, 2);";
    return w;
}

// Two neuron groups (one drawing random numbers, one initialised randomly), a synapse group
// with dendritic delays and one without.
void build(Model& m) {
    m.addNeuronGroup("Src", 4, noisy(), {}, {{"V", 0.0}, {"U", 0.0}});
    m.addNeuronGroup("Dst", 3, plain(), {}, {{"V", init::Uniform(0.0, 1.0)}});
    auto& d =
        m.addSynapseGroup("Late", MatrixType::Dense, 0, "Src", "Dst",
                          {delayed(), {}, {{"g", 1.0}}, {}, {}}, {models::DeltaCurr(), {}, {}});
    d.setMaxDendriticDelaySteps(4);
    m.addSynapseGroup("Now", MatrixType::Dense, 0, "Src", "Dst",
                      {models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}},
                      {models::DeltaCurr(), {}, {}});
}

TEST(Analysis, FinaliseScansEachFieldOnceAndPassesNever) {
    Model m("analysed_once");
    build(m);
    const size_t fields = contexts::codeFieldCount(m);
    ASSERT_GT(fields, 10u);
    const uint64_t before = snippet::scanCount();
    m.finalise();
    EXPECT_EQ(snippet::scanCount() - before, fields);
    ASSERT_EQ(analysis::count(m), fields);

    // Reading every field (twice) and planning the arrays scans nothing.
    const uint64_t afterFinalise = snippet::scanCount();
    for (int pass = 0; pass < 2; pass++)
        for (size_t slot = 0; slot < fields; slot++) {
            const auto& name = analysis::nameAt(m, slot);
            EXPECT_EQ(&analysis::of(m, name.group, name.field), &analysis::at(m, slot));
        }
    const auto arrays = codegen::planArrays(m);
    EXPECT_FALSE(arrays.empty());
    EXPECT_EQ(snippet::scanCount(), afterFinalise);

    // Finalising again re-scans once more (the model may have changed), again once per field.
    m.finalise();
    EXPECT_EQ(snippet::scanCount() - afterFinalise, fields);
}

TEST(Analysis, SlotsFollowTheCodeFieldOrder) {
    Model m("analysis_slots");
    build(m);
    m.finalise();
    const auto listed = contexts::allCodeFields(m);
    ASSERT_EQ(listed.size(), analysis::count(m));
    for (size_t slot = 0; slot < listed.size(); slot++) {
        EXPECT_EQ(analysis::nameAt(m, slot).group, listed[slot].group);
        EXPECT_EQ(analysis::nameAt(m, slot).field, listed[slot].field);
        EXPECT_EQ(contexts::codeFieldSlot(m, listed[slot].group, listed[slot].field), slot);
    }
}

TEST(Analysis, FactsOfSnippets) {
    Model m("analysis_facts");
    build(m);
    m.finalise();
    const auto& sim = analysis::of(m, "Src", "simCode");
    EXPECT_TRUE(sim.usesRng);
    EXPECT_FALSE(sim.usesAddToPostDelay);
    EXPECT_EQ(sim.assignedNames, (std::set<std::string>{"V", "U"}));
    EXPECT_TRUE(sim.readNames.contains("V"));
    EXPECT_TRUE(sim.readNames.contains("Isyn"));
    EXPECT_FALSE(sim.readNames.contains("U")); // only assigned by `=`
    EXPECT_TRUE(sim.calledFunctions.contains("rand_uniform"));

    const auto& threshold = analysis::of(m, "Src", "thresholdConditionCode");
    EXPECT_TRUE(threshold.expression);
    EXPECT_TRUE(threshold.assignedNames.empty());
    EXPECT_FALSE(analysis::of(m, "Dst", "simCode").usesRng);
    EXPECT_TRUE(analysis::of(m, "Dst", "init.V").usesRng); // Uniform draws

    const auto& late = analysis::of(m, "Late", "preSpikeSynCode");
    EXPECT_TRUE(late.usesAddToPostDelay);
    EXPECT_TRUE(late.referencedNames.contains("g"));
    EXPECT_FALSE(analysis::of(m, "Now", "preSpikeSynCode").usesAddToPostDelay);
    EXPECT_TRUE(codegen::usesDendriticDelay(m, m.synapseGroup("Late")));
    EXPECT_FALSE(codegen::usesDendriticDelay(m, m.synapseGroup("Now")));

    // An empty code string has an empty analysis.
    const auto& none = analysis::of(m, "Now", "postSpikeSynCode");
    EXPECT_TRUE(none.referencedNames.empty());
    EXPECT_FALSE(none.usesRng);
}

TEST(Analysis, ReadingAnUnfinalisedModelIsAnInternalErrorNamingIt) {
    Model m("not_ready");
    build(m);
    EXPECT_THROW(analysis::of(m, "Src", "simCode"), InternalError);
    try {
        (void)analysis::at(m, 0);
        FAIL() << "analysis::at read an unfinalised model";
    } catch (const InternalError& e) {
        EXPECT_NE(std::string(e.what()).find("not_ready"), std::string::npos) << e.what();
    }
    m.finalise();
    EXPECT_NO_THROW(analysis::of(m, "Src", "simCode"));
    EXPECT_THROW(analysis::of(m, "Src", "noSuchField"), InternalError);
    EXPECT_THROW(analysis::at(m, analysis::count(m)), InternalError);

    // A change that needs finalise again makes the old results unreadable until it runs; a
    // holder that shared them keeps its copy.
    const auto kept = analysis::share(m);
    const size_t keptSlot = contexts::codeFieldSlot(m, "Src", "simCode");
    m.addNeuronGroup("Late2", 2, noisy(), {}, {{"V", 0.0}, {"U", 0.0}});
    EXPECT_THROW(analysis::of(m, "Src", "simCode"), InternalError);
    EXPECT_THROW((void)analysis::share(m), InternalError);
    ASSERT_NE(kept, nullptr);
    EXPECT_TRUE(kept->fields.at(keptSlot).usesRng);
    EXPECT_EQ(kept->names.at(keptSlot).group, "Src");
    m.finalise();
    EXPECT_TRUE(analysis::of(m, "Late2", "simCode").usesRng);
    EXPECT_EQ(analysis::count(m), kept->fields.size() + 3); // Late2's three code fields
}

TEST(Analysis, AFailedFinaliseLeavesNoResults) {
    Model m("failed_refinalise");
    build(m);
    m.finalise();
    ASSERT_TRUE(m.isFinalised());
    m.setDT(-1.0);
    EXPECT_THROW(m.finalise(), ModelError);
    EXPECT_FALSE(m.isFinalised());
    EXPECT_THROW(analysis::of(m, "Src", "simCode"), InternalError);
    m.setDT(0.1);
    m.finalise();
    EXPECT_TRUE(analysis::of(m, "Src", "simCode").usesRng);
}

} // namespace
