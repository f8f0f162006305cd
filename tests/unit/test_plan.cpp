// The lowering's passes through the plan they produce: merging and value folding, struct
// layout, literals, the kernel list. Nothing here compiles or runs generated code, and nothing
// searches generated text: the assertions read the plan's structure.
#include "codegen/lowerer.hpp"
#include "model/analysis.hpp"
#include "spikeforge/models.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace spikeforge;
using namespace spikeforge::codegen;

namespace {

NeuronModel leaky() {
    NeuronModel n;
    n.name = "Leaky";
    n.params = {"tau"};
    n.vars = {{"V"}};
    n.simCode = "V += (-V / tau) * dt;";
    n.thresholdConditionCode = "V > 1.0";
    n.resetCode = "V = 0.0;";
    return n;
}

const Kernel& kernel(const Plan& p, const std::string& entry) {
    for (const auto& k : p.kernels)
        if (k.entry == entry) return k;
    throw std::runtime_error("no kernel " + entry);
}

const MergedGroupTable& onlyTable(const Plan& p, const Kernel& k) {
    EXPECT_EQ(k.tables.size(), 1u) << k.entry;
    return p.mergedGroups.at(k.tables.at(0));
}

bool hasField(const MergedGroupTable& t, const std::string& name) {
    return std::any_of(t.fields.begin(), t.fields.end(),
                       [&](const FieldDecl& f) { return f.name == name; });
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

Plan twoGroups(double tauA, double tauB, unsigned sizeB = 10) {
    Model m("two");
    m.addNeuronGroup("A", 10, leaky(), {{"tau", tauA}}, {{"V", 0.0}});
    m.addNeuronGroup("B", sizeB, leaky(), {{"tau", tauB}}, {{"V", 0.0}});
    m.finalise();
    return lowerModel(m);
}

TEST(PlanMerge, IdenticalGroupsShareOneTableAndEqualValuesFold) {
    const Plan p = twoGroups(20.0, 20.0);
    const auto& t = onlyTable(p, kernel(p, "sf_neuron_update"));
    EXPECT_EQ(t.groupNames, (std::vector<std::string>{"A", "B"}));
    EXPECT_FALSE(hasField(t, "p_tau"));      // same value: a literal in the body
    EXPECT_FALSE(hasField(t, "numNeurons")); // same size: folded too
    EXPECT_TRUE(hasField(t, "v_V"));         // arrays are always fields
    ASSERT_EQ(t.bindings.size(), 2u);
    for (size_t g = 0; g < 2; g++)
        for (size_t f = 0; f < t.fields.size(); f++) {
            if (t.fields[f].name == "v_V") {
                EXPECT_EQ(t.bindings[g][f].array, t.groupNames[g] + ".V");
            }
        }
}

TEST(PlanMerge, DifferingValuesBecomeFields) {
    const Plan p = twoGroups(20.0, 30.0, 12);
    const auto& t = onlyTable(p, kernel(p, "sf_neuron_update"));
    ASSERT_EQ(t.groupNames.size(), 2u);
    for (const char* name : {"p_tau", "numNeurons"}) {
        const auto it = std::find_if(t.fields.begin(), t.fields.end(),
                                     [&](const FieldDecl& f) { return f.name == name; });
        ASSERT_NE(it, t.fields.end()) << name;
        const size_t f = size_t(it - t.fields.begin());
        EXPECT_EQ(t.bindings[0][f].kind, FieldBinding::Kind::Number);
        EXPECT_NE(t.bindings[0][f].number, t.bindings[1][f].number) << name;
    }
    const auto& k = kernel(p, "sf_neuron_update");
    EXPECT_EQ(k.groups.at(0).elements, (std::vector<size_t>{10, 12}));
}

TEST(PlanMerge, BodiesHoldNoPlaceholdersAndTheFirstGroupsLabels) {
    const Plan p = twoGroups(20.0, 30.0);
    for (const auto& k : p.kernels)
        for (auto g : k.groups)
            for (const std::string* f : fragmentsOf(g.body))
                EXPECT_EQ(f->find("$("), std::string::npos) << k.entry << ": " << *f;
    const auto& body = std::get<NeuronUpdateBody>(kernel(p, "sf_neuron_update").groups.at(0).body);
    EXPECT_NE(body.perNeuron.find("\"A.simCode\""), std::string::npos);
    EXPECT_EQ(body.perNeuron.find("\"B.simCode\""), std::string::npos);
}

TEST(PlanMerge, DifferentCodeDoesNotMerge) {
    Model m("two");
    auto other = leaky();
    other.simCode = "V += (-V / tau) * dt * 2.0;";
    m.addNeuronGroup("A", 10, leaky(), {{"tau", 20.0}}, {{"V", 0.0}});
    m.addNeuronGroup("B", 10, other, {{"tau", 20.0}}, {{"V", 0.0}});
    m.finalise();
    const Plan p = lowerModel(m);
    EXPECT_EQ(kernel(p, "sf_neuron_update").tables.size(), 2u);
}

TEST(PlanLayout, FieldsAreAlignedToTheirSize) {
    const auto l = layoutOf({{"p", "float*"}, {"x", "float"}, {"b", "uint8_t"}, {"d", "double"}});
    EXPECT_EQ(l.offsets, (std::vector<size_t>{0, 8, 12, 16}));
    EXPECT_EQ(l.size, 24u);
    EXPECT_EQ(layoutOf({}).size, 1u);
    EXPECT_EQ(layoutOf({{"a", "uint16_t"}, {"b", "uint32_t"}}).offsets,
              (std::vector<size_t>{0, 4}));
}

TEST(PlanLiteral, TypesKeepTheirSuffixesAndPrecision) {
    EXPECT_EQ(literal(1.0, "float"), "(1.0f)");
    EXPECT_EQ(literal(0.5, "double"), "(0.5)");
    EXPECT_EQ(literal(2.0, "double"), "(2.0)");
    EXPECT_EQ(literal(0.1, "double"), "(0.10000000000000001)");
    EXPECT_EQ(literal(3.0, "uint32_t"), "(3u)");
    EXPECT_EQ(literal(5.0, "uint64_t"), "(5ull)");
    EXPECT_EQ(literal(-2.0, "int32_t"), "(-2)");
    EXPECT_EQ(literal(INFINITY, "float"), "INFINITY");
    EXPECT_EQ(literal(-INFINITY, "double"), "(-INFINITY)");
    EXPECT_EQ(literal(1e-20, "float"), "(1e-20f)"); // an exponent needs no ".0"
}

TEST(PlanKernels, EntryPointsPhasesTablesAndWork) {
    Model m("net");
    m.setBatchSize(3);
    m.addNeuronGroup("Pre", 40, leaky(), {{"tau", 20.0}}, {{"V", 0.0}});
    m.addNeuronGroup("Post", 25, leaky(), {{"tau", 10.0}}, {{"V", 0.0}});
    m.addSynapseGroup("Syn", MatrixType::Dense, 0, "Pre", "Post",
                      {models::StaticPulse(), {}, {{"g", 0.5}}, {}, {}},
                      {models::DeltaCurr(), {}, {}});
    m.finalise();
    const Plan p = lowerModel(m);
    ASSERT_EQ(p.kernels.size(), 3u);
    EXPECT_EQ(p.kernels[0].entry, "sf_initialize");
    EXPECT_EQ(p.kernels[0].phase, KernelPhase::Initialise);
    EXPECT_EQ(p.kernels[1].entry, "sf_presynaptic_update");
    EXPECT_EQ(p.kernels[1].phase, KernelPhase::PresynapticUpdate);
    EXPECT_EQ(p.kernels[2].entry, "sf_neuron_update");
    // Every table belongs to exactly one kernel.
    std::vector<size_t> all;
    for (const auto& k : p.kernels) {
        EXPECT_EQ(k.batchSize, 3u);
        ASSERT_EQ(k.tables.size(), k.groups.size());
        for (size_t i = 0; i < k.tables.size(); i++)
            EXPECT_EQ(k.tables[i], k.groups[i].table);
        all.insert(all.end(), k.tables.begin(), k.tables.end());
    }
    std::sort(all.begin(), all.end());
    ASSERT_EQ(all.size(), p.mergedGroups.size());
    for (size_t i = 0; i < all.size(); i++)
        EXPECT_EQ(all[i], i);
    const auto& syn = kernel(p, "sf_presynaptic_update");
    ASSERT_EQ(syn.groups.size(), 1u);
    EXPECT_EQ(syn.groups[0].elements, (std::vector<size_t>{40 * 25}));
    EXPECT_EQ(syn.workSize, 40u * 25u * 3u);
    EXPECT_TRUE(contains(syn.writes, "Syn.inSyn"));
    EXPECT_TRUE(contains(syn.reads, "Pre.spk"));
    EXPECT_FALSE(contains(syn.writes, "Pre.spk"));
    EXPECT_FALSE(contains(syn.writes, "Syn.g")); // StaticPulse only reads its weight
    const auto& neu = kernel(p, "sf_neuron_update");
    EXPECT_EQ(neu.workSize, 40u * 3u); // the larger group
    EXPECT_TRUE(contains(neu.writes, "Post.V"));
    EXPECT_TRUE(contains(neu.writes, "Syn.inSyn")); // the input is consumed
    EXPECT_TRUE(contains(neu.writes, "Pre.spk"));
    EXPECT_TRUE(contains(kernel(p, "sf_initialize").writes, "Syn.g"));
    // The target sums its input, the source does not: two bodies.
    EXPECT_EQ(neu.groups.size(), 2u);
}

TEST(PlanKernels, CustomUpdateGroupsGetTheirOwnEntryAndCompatibleUpdatesFuse) {
    Model m("fused");
    m.addNeuronGroup("Pop", 50, leaky(), {{"tau", 20.0}}, {{"V", 0.0}});
    CustomUpdateModel twice;
    twice.name = "Twice";
    twice.vars = {{"y", "scalar", CustomUpdateVarAccess::ReadWrite}};
    twice.varRefs = {{"x", "scalar", CustomUpdateVarAccess::ReadOnly}};
    twice.updateCode = "y = 2.0 * x;";
    CustomUpdateModel sum;
    sum.name = "Sum";
    sum.varRefs = {{"x", "scalar", CustomUpdateVarAccess::ReadOnly}};
    sum.vars = {{"s", "scalar", CustomUpdateVarAccess::ReduceNeuronSum}};
    sum.updateCode = "s = x;";
    m.addCustomUpdate("First", "Step", twice, {}, {{"y", 0.0}}, {{"x", {"Pop", "V"}}});
    m.addCustomUpdate("Second", "Step", twice, {}, {{"y", 0.0}}, {{"x", {"First", "y"}}});
    m.addCustomUpdate("Total", "Reduce", sum, {}, {{"s", 0.0}}, {{"x", {"Pop", "V"}}});
    m.finalise();
    const Plan p = lowerModel(m);
    const auto& step = kernel(p, "sf_custom_update_Step");
    EXPECT_EQ(step.phase, KernelPhase::CustomUpdate);
    EXPECT_EQ(step.updateGroup, "Step");
    const auto& t = onlyTable(p, step); // one pass runs both updates
    EXPECT_TRUE(hasField(t, "c0_r_y"));
    EXPECT_TRUE(hasField(t, "c1_r_y"));
    const auto& body = std::get<CustomUpdateBody>(step.groups.at(0).body);
    EXPECT_EQ(body.kind, CustomUpdateKind::Elementwise);
    const auto& reduce =
        std::get<CustomUpdateBody>(kernel(p, "sf_custom_update_Reduce").groups.at(0).body);
    EXPECT_EQ(reduce.kind, CustomUpdateKind::NeuronReduction);
    ASSERT_EQ(reduce.reductions.size(), 1u);
    EXPECT_EQ(reduce.reductions[0].op, ReduceOp::Sum);
}

// Reads and writes are recorded per use, not per binding: each assertion below names an array
// the kernel binds but does not read (or does not write), so a superset would fail it.
TEST(PlanKernels, ReadsAndWritesAreExact) {
    Model m("rw");
    m.addNeuronGroup("Pre", 20, leaky(), {{"tau", 20.0}}, {{"V", 0.0}});
    m.addNeuronGroup("Post", 10, leaky(), {{"tau", 10.0}}, {{"V", 0.0}});
    m.addSynapseGroup("Static", MatrixType::Dense, 0, "Pre", "Post",
                      {models::StaticPulse(), {}, {{"g", 0.5}}, {}, {}},
                      {models::DeltaCurr(), {}, {}});
    ParamValues stdp;
    for (const auto& name : models::STDPNearest().params)
        stdp[name] = 1.0;
    m.addSynapseGroup("Learn", MatrixType::Sparse, 0, "Pre", "Post",
                      {models::STDPNearest(), stdp, {{"g", 0.5}}, {}, {}},
                      {models::DeltaCurr(), {}, {}}, init::FixedProbability(0.2));
    CustomUpdateModel copy;
    copy.name = "Copy";
    copy.vars = {{"y", "scalar", CustomUpdateVarAccess::ReadWrite}};
    copy.varRefs = {{"x", "scalar", CustomUpdateVarAccess::ReadOnly}};
    copy.updateCode = "y = x;";
    m.addCustomUpdate("Mirror", "Copy", copy, {}, {{"y", 0.0}}, {{"x", {"Post", "V"}}});
    CustomUpdateModel sum;
    sum.name = "Sum";
    sum.varRefs = {{"x", "scalar", CustomUpdateVarAccess::ReadOnly}};
    sum.vars = {{"s", "scalar", CustomUpdateVarAccess::ReduceNeuronSum}};
    sum.updateCode = "s = x;";
    m.addCustomUpdate("Total", "Sum", sum, {}, {{"s", 0.0}}, {{"x", {"Pre", "V"}}});
    m.finalise();
    const Plan p = lowerModel(m);
    auto reads = [](const Kernel& k, const char* a) { return contains(k.reads, a); };
    auto writes = [](const Kernel& k, const char* a) { return contains(k.writes, a); };

    const auto& syn = kernel(p, "sf_presynaptic_update");
    const auto& learn = kernel(p, "sf_postsynaptic_update");
    EXPECT_TRUE(reads(syn, "Static.g")); // StaticPulse reads its weight...
    EXPECT_FALSE(writes(syn, "Static.g"));
    EXPECT_TRUE(reads(syn, "Learn.g")); // ...STDP also writes it
    EXPECT_TRUE(writes(syn, "Learn.g"));
    EXPECT_TRUE(reads(learn, "Learn.g") && writes(learn, "Learn.g"));
    EXPECT_FALSE(reads(learn, "Static.g")); // StaticPulse has no postsynaptic learning
    EXPECT_TRUE(reads(syn, "Pre.spk"));     // spikes are read, never written, by propagation
    EXPECT_TRUE(reads(syn, "Pre.spkCnt"));
    EXPECT_FALSE(writes(syn, "Pre.spk"));
    EXPECT_TRUE(reads(syn, "Learn.ind"));
    EXPECT_TRUE(reads(learn, "Learn.colSyn")); // the column loop of postsynaptic learning
    EXPECT_FALSE(writes(syn, "Learn.ind"));
    EXPECT_FALSE(writes(learn, "Learn.ind"));
    EXPECT_TRUE(reads(syn, "Pre.st")); // st_pre, read-only in synapse code
    EXPECT_FALSE(writes(syn, "Pre.st"));
    EXPECT_TRUE(reads(syn, "Static.inSyn") && writes(syn, "Static.inSyn")); // addToPost adds

    const auto& neu = kernel(p, "sf_neuron_update");
    EXPECT_TRUE(reads(neu, "Static.inSyn")); // the input is consumed and cleared
    EXPECT_TRUE(writes(neu, "Static.inSyn"));
    EXPECT_TRUE(reads(neu, "Post.V") && writes(neu, "Post.V"));
    EXPECT_TRUE(writes(neu, "Pre.spk")); // the spike queue is stored, never loaded
    EXPECT_FALSE(reads(neu, "Pre.spk"));
    EXPECT_TRUE(writes(neu, "Pre.spkCnt"));
    EXPECT_FALSE(reads(neu, "Pre.spkCnt"));

    const auto& mirror = kernel(p, "sf_custom_update_Copy");
    EXPECT_TRUE(reads(mirror, "Post.V")); // a neuron variable only read by a custom update
    EXPECT_FALSE(writes(mirror, "Post.V"));
    const auto& total = kernel(p, "sf_custom_update_Sum");
    EXPECT_TRUE(writes(total, "Total.s")); // a reduction target starts from 0: never read
    EXPECT_FALSE(reads(total, "Total.s"));

    const auto& init = kernel(p, "sf_initialize");
    EXPECT_TRUE(writes(init, "Static.g")); // initialised, not read
    EXPECT_FALSE(reads(init, "Static.g"));
    EXPECT_TRUE(writes(init, "Learn.colSyn"));
    EXPECT_TRUE(reads(init, "Learn.ind"));   // the column index is built from the rows
    EXPECT_TRUE(writes(init, kErrorsArray)); // row overflow is latched, never read back
    EXPECT_FALSE(reads(init, kErrorsArray));
}

// Each synapse group's error word is the one error array plus a number: groups with different
// words still share a body, the word is a struct field, and snippet slots follow the groups.
TEST(PlanErrors, GroupsWithDifferentErrorWordsStillMerge) {
    Model m("words");
    m.addNeuronGroup("Pre", 20, leaky(), {{"tau", 20.0}}, {{"V", 0.0}});
    m.addNeuronGroup("Post", 10, leaky(), {{"tau", 10.0}}, {{"V", 0.0}});
    for (const char* name : {"A", "B"})
        m.addSynapseGroup(name, MatrixType::Sparse, 0, "Pre", "Post",
                          {models::StaticPulse(), {}, {{"g", 0.5}}, {}, {}},
                          {models::DeltaCurr(), {}, {}}, init::FixedProbability(0.2));
    m.finalise();
    const Plan p = lowerModel(m);
    const auto& init = kernel(p, "sf_initialize");
    const MergedGroupTable* table = nullptr;
    for (size_t t : init.tables)
        if (p.mergedGroups[t].groupNames == std::vector<std::string>{"A", "B"})
            table = &p.mergedGroups[t];
    ASSERT_NE(table, nullptr) << "A and B share one initialisation body";
    size_t word = table->fields.size();
    for (size_t f = 0; f < table->fields.size(); f++)
        if (table->fields[f].name == "sfErrWord") word = f;
    ASSERT_LT(word, table->fields.size()) << "the error word is a struct field";
    EXPECT_EQ(table->bindings[0][word].number, double(synapseErrorWord(0)));
    EXPECT_EQ(table->bindings[1][word].number, double(synapseErrorWord(1)));
    size_t errorWords = 0;
    for (const auto& a : p.arrays) {
        EXPECT_NE(a.name, "A.error"); // no per-group arrays
        EXPECT_NE(a.name, "B.error");
        if (a.name == kErrorsArray) errorWords = a.count;
    }
    EXPECT_EQ(errorWords, snippetErrorWord(2, analysis::count(m)));
}

// Fragments are a neutral C subset: whatever one backend needs beyond it is a hook.
TEST(PlanBodies, HoldNoBackendText) {
    Model m("rich");
    m.setBatchSize(2);
    m.addNeuronGroup("Pre", 30, models::Poisson(), {{"rate", 10.0}}, {{"timeStepToSpike", 0.0}})
        .setSpikeRecording(true);
    m.addNeuronGroup("Post", 20, leaky(), {{"tau", 20.0}}, {{"V", 0.0}});
    ParamValues stdp;
    for (const auto& p : models::STDPNearest().params)
        stdp[p] = 1.0;
    m.addSynapseGroup("Learn", MatrixType::Sparse, 0, "Pre", "Post",
                      {models::STDPNearest(), stdp, {{"g", 0.5}}, {}, {}},
                      {models::ExpCurr(), {{"tau", 5.0}}, {}}, init::FixedProbability(0.2));
    m.addSynapseGroup("Delayed", MatrixType::Dense, 0, "Pre", "Post",
                      {models::StaticPulseDendriticDelay(), {}, {{"g", 0.5}, {"d", 1.0}}, {}, {}},
                      {models::DeltaCurr(), {}, {}})
        .setMaxDendriticDelaySteps(4);
    CustomUpdateModel reduce;
    reduce.name = "Reduce";
    reduce.varRefs = {{"x", "scalar", CustomUpdateVarAccess::ReadOnly}};
    reduce.vars = {{"total", "scalar", CustomUpdateVarAccess::ReduceBatchSum}};
    reduce.updateCode = "total = x;";
    m.addCustomUpdateWU("Sum", "Grad", reduce, {}, {{"total", 0.0}}, {{"x", {"Learn", "g"}}});
    m.finalise();
    Plan p = lowerModel(m);
    size_t bodies = 0;
    for (auto& k : p.kernels)
        for (auto& g : k.groups) {
            bodies++;
            for (const std::string* f : fragmentsOf(g.body))
                for (const char* banned : {"#pragma", "omp", "__restrict", "__atomic", "__builtin",
                                           "std::", "extern", "memcpy", "$("})
                    EXPECT_EQ(f->find(banned), std::string::npos) << banned << " in " << *f;
        }
    EXPECT_GE(bodies, 7u); // init, propagation x2, learning, neuron update, custom update
}

} // namespace
