// Model rules checked by Model::finalise for every backend, without generating any code: a rule
// that once lived in the CPU code generator must fire here, with the same message.
#include "spikeforge/model.hpp"
#include "spikeforge/models.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace spikeforge;
using A = CustomUpdateVarAccess;

namespace {

NeuronModel counts() {
    NeuronModel n;
    n.name = "Counts";
    n.vars = {{"x"}, {"k", "int"}};
    return n;
}

std::string finaliseError(Model& m) {
    try {
        m.finalise();
    } catch (const ModelError& e) {
        return e.what();
    }
    return "";
}

TEST(ModelRules, ReductionTargetsMustBeFloatingPointAtFinalise) {
    CustomUpdateModel own;
    own.name = "IntSum";
    own.vars = {{"total", "unsigned int", A::ReduceBatchSum}};
    own.varRefs = {{"x", "scalar", A::ReadOnly}};
    own.updateCode = "total = (unsigned int)x;";
    Model m("int_reduction");
    m.setBatchSize(2);
    m.addNeuronGroup("Pop", 3, counts(), {}, {{"x", 0.0}, {"k", 0.0}});
    m.addCustomUpdate("Sum", "Reduce", own, {}, {{"total", 0.0}}, {{"x", {"Pop", "x"}}});
    EXPECT_EQ(finaliseError(m), "custom update 'Sum': reduction target 'total' must be floating "
                                "point, not uint32_t");
    EXPECT_FALSE(m.isFinalised());
}

TEST(ModelRules, ReductionReferencesMustBeFloatingPointAtFinalise) {
    CustomUpdateModel ref;
    ref.name = "IntMax";
    ref.vars = {};
    ref.varRefs = {{"x", "scalar", A::ReadOnly}, {"best", "int", A::ReduceNeuronMax}};
    ref.updateCode = "best = (int)x;";
    NeuronModel holder;
    holder.name = "Holder";
    holder.vars = {{"best", "int", VarAccess::ReadOnlySharedNeuron}};
    Model m("int_reference");
    m.addNeuronGroup("Pop", 3, counts(), {}, {{"x", 0.0}, {"k", 0.0}});
    m.addNeuronGroup("Out", 1, holder, {}, {{"best", 0.0}});
    m.addCustomUpdate("Max", "Reduce", ref, {}, {},
                      {{"x", {"Pop", "x"}}, {"best", {"Out", "best"}}});
    EXPECT_EQ(finaliseError(m), "custom update 'Max': reduction target 'best' must be floating "
                                "point, not int32_t");
}

TEST(ModelRules, FloatingReductionTargetsAreAccepted) {
    for (const char* type : {"scalar", "float", "double"}) {
        CustomUpdateModel own;
        own.name = "Sum";
        own.vars = {{"total", type, A::ReduceBatchSum}};
        own.varRefs = {{"x", "scalar", A::ReadOnly}};
        own.updateCode = "total = x;";
        Model m("float_reduction");
        m.setBatchSize(2);
        m.addNeuronGroup("Pop", 3, counts(), {}, {{"x", 0.0}, {"k", 0.0}});
        m.addCustomUpdate("Sum", "Reduce", own, {}, {{"total", 0.0}}, {{"x", {"Pop", "x"}}});
        EXPECT_EQ(finaliseError(m), "") << type;
        EXPECT_TRUE(m.isFinalised()) << type;
    }
}

} // namespace

namespace {

// A group's variables and EGPs are arrays "<group>.<name>": two under one name would share
// storage, so finalise refuses them.
TEST(ModelRules, StoredNamesOfOneSynapseGroupAreDistinct) {
    PostsynapticModel ps;
    ps.name = "Leaky";
    ps.vars = {{"g"}};
    ps.simCode = "injectCurrent(inSyn * g);\ninSyn = 0.0;";
    Model m("shared_array");
    m.addNeuronGroup("Pre", 2, counts(), {}, {{"x", 0.0}, {"k", 0.0}});
    m.addNeuronGroup("Post", 3, counts(), {}, {{"x", 0.0}, {"k", 0.0}});
    m.addSynapseGroup("S", MatrixType::Dense, 0, "Pre", "Post",
                      {models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}}, {ps, {}, {{"g", 1.0}}});
    const std::string msg = finaliseError(m);
    EXPECT_NE(msg.find("group 'S'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("postsynaptic variable 'g' of model 'Leaky'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("weight update variable 'g' of model 'StaticPulse'"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("'S.g'"), std::string::npos) << msg;
}

TEST(ModelRules, StoredNamesDifferFromTheGeneratorsArrays) {
    NeuronModel n = counts();
    n.vars.push_back({"spk"});
    Model m("generated_array");
    m.addNeuronGroup("Pop", 2, n, {}, {{"x", 0.0}, {"k", 0.0}, {"spk", 0.0}});
    const std::string msg = finaliseError(m);
    EXPECT_NE(msg.find("group 'Pop': variable 'spk'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'Pop.spk'"), std::string::npos) << msg;

    WeightUpdateModel w = models::StaticPulse();
    w.vars.push_back({"ind", "scalar", VarAccess::ReadOnly});
    Model s("generated_synapse_array");
    s.addNeuronGroup("Pre", 2, counts(), {}, {{"x", 0.0}, {"k", 0.0}});
    s.addSynapseGroup("S", MatrixType::Dense, 0, "Pre", "Pre",
                      {w, {}, {{"g", 1.0}, {"ind", 0.0}}, {}, {}}, {models::DeltaCurr(), {}, {}});
    const std::string sMsg = finaliseError(s);
    EXPECT_NE(sMsg.find("weight update variable 'ind'"), std::string::npos) << sMsg;
    EXPECT_NE(sMsg.find("'S.ind'"), std::string::npos) << sMsg;
}

} // namespace
