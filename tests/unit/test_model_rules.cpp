// Model rules checked by Model::finalise for every backend, without generating any code: a rule
// that once lived in the CPU code generator must fire here, with the same message.
#include "spikeforge/model.hpp"

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
