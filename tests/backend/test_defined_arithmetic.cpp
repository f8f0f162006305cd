// Snippet operations that C leaves undefined are defined on every backend (docs/snippets.md,
// "Operations C leaves undefined"): integer division and modulo by a run-time zero, and the
// minimum divided by -1, give 0 and are reported with the group, field, line and column (never
// SIGFPE, never garbage); conversions of floating values to integers saturate (NaN to 0); shift
// counts are masked by the width. Neuron, synapse and custom-update code alike.
#include "backend_fixture.hpp"

#include "spikeforge/models.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using namespace spikeforge;
using sftest::errorOf;
using sftest::expectContains;

namespace {

constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();

// q = a op b over the neurons' own (a, b).
NeuronModel divider(const std::string& op) {
    NeuronModel nm;
    nm.name = op == "/" ? "Div" : "Rem";
    nm.vars = {VarDecl{"a", "int32_t"}, VarDecl{"b", "int32_t"}, VarDecl{"q", "int32_t"}};
    nm.simCode = "q = a " + op + " b;";
    return nm;
}

// The same in 64 bits (variables are at most 32 bits wide; locals may be 64): a * 2^32 / b,
// returning the high word.
NeuronModel wideDivider() {
    NeuronModel nm = divider("/");
    nm.name = "Div64";
    nm.simCode = "int64_t big = (int64_t)a * 4294967296;\nint64_t r = big / (int64_t)b;\n"
                 "q = (int32_t)(r >> 32);";
    return nm;
}

class DefinedArithmetic : public sftest::BackendTest {
protected:
    BackendPreferences everyStep() const {
        BackendPreferences p = prefs(1);
        p.errorCheckInterval = 1;
        return p;
    }

    template <typename T>
    static void set(Simulation& sim, const std::string& group, const std::string& var,
                    const std::vector<T>& values) {
        auto v = sim.view<T>(group, var);
        for (size_t i = 0; i < values.size(); i++)
            v[i] = values[i];
        sim.push(group, var);
    }

    template <typename T>
    static std::vector<T> get(Simulation& sim, const std::string& group, const std::string& var) {
        sim.pull(group, var);
        auto v = sim.view<T>(group, var);
        return std::vector<T>(v.begin(), v.end());
    }
};

// Each group's field reports the one check that failed in it (a slot holds one ordinal), so each
// kind of failure has its own group; Div and Min share their code, so one kernel serves both.
TEST_P(DefinedArithmetic, IntegerDivisionByZeroAndOverflowGiveZeroAndAreReported) {
    Model m("defined_division");
    const VarInitMap zeros = {{"a", 0.0}, {"b", 1.0}, {"q", 9.0}};
    m.addNeuronGroup("Div", 4, divider("/"), {}, zeros);
    m.addNeuronGroup("Rem", 4, divider("%"), {}, zeros);
    m.addNeuronGroup("Min", 2, divider("/"), {}, zeros);
    m.addNeuronGroup("Wide", 3, wideDivider(), {}, zeros);
    Simulation sim(m, everyStep());
    set<int32_t>(sim, "Div", "a", {7, -7, 100, 5});
    set<int32_t>(sim, "Div", "b", {2, 2, 0, -1});
    set<int32_t>(sim, "Rem", "a", {7, -7, 100, kMin32});
    set<int32_t>(sim, "Rem", "b", {2, 2, 0, -1});
    set<int32_t>(sim, "Min", "a", {kMin32, kMin32});
    set<int32_t>(sim, "Min", "b", {-1, 2});
    set<int32_t>(sim, "Wide", "a", {kMin32, kMin32, -9});
    set<int32_t>(sim, "Wide", "b", {-1, 2, 4});
    const std::string err = errorOf<ModelError>([&] { sim.step(); });
    expectContains(err, {"Div.simCode line 1, column 7: integer division by zero in step 0 (the "
                         "result was replaced by 0)",
                         "Rem.simCode line 1, column 7: integer modulo by zero in step 0",
                         "Min.simCode line 1, column 7: integer division of the minimum 'int32_t' "
                         "by -1 in step 0 (it overflows; the result was replaced by 0)",
                         "Wide.simCode line 2, column 17: integer division of the minimum "
                         "'int64_t' by -1"});
    // The minimum % -1 is 0, which is exact: not an error.
    EXPECT_EQ(err.find("Rem.simCode line 1, column 7: integer modulo of the minimum"),
              std::string::npos);
    EXPECT_EQ(get<int32_t>(sim, "Div", "q"), (std::vector<int32_t>{3, -3, 0, -5}));
    EXPECT_EQ(get<int32_t>(sim, "Rem", "q"), (std::vector<int32_t>{1, -1, 0, 0}));
    EXPECT_EQ(get<int32_t>(sim, "Min", "q"), (std::vector<int32_t>{0, kMin32 / 2}));
    // -2^63 / 2 = -2^62, whose high word is -2^30; -9 * 2^32 / 4 truncates to -2.25 * 2^32,
    // whose high word (an arithmetic shift) is -3.
    EXPECT_EQ(get<int32_t>(sim, "Wide", "q"), (std::vector<int32_t>{0, -(1 << 30), -3}));
    // Reported once; a step without a bad divisor reports nothing.
    set<int32_t>(sim, "Div", "b", {2, 2, 3, -1});
    set<int32_t>(sim, "Rem", "b", {2, 2, 3, 1});
    set<int32_t>(sim, "Min", "b", {1, 2});
    set<int32_t>(sim, "Wide", "b", {1, 1, 4});
    EXPECT_NO_THROW(sim.step());
    EXPECT_EQ(get<int32_t>(sim, "Div", "q"), (std::vector<int32_t>{3, -3, 33, -5}));
}

// Synapse code and custom-update code report through the same mechanism, with their own field.
TEST_P(DefinedArithmetic, SynapseAndCustomUpdateCodeReportTheirOwnField) {
    Model m("defined_division_synapse");
    NeuronModel always;
    always.name = "Always";
    always.thresholdConditionCode = "true";
    m.addNeuronGroup("Pre", 1, always, {}, {});
    m.addNeuronGroup("Post", 3, divider("/"), {}, {{"a", 10.0}, {"b", 1.0}, {"q", 0.0}});
    WeightUpdateModel wu;
    wu.name = "DivSyn";
    wu.vars = {VarDecl{"d", "int32_t"}, VarDecl{"q", "int32_t"}};
    wu.preSpikeSynCode = "q = 12 / d;";
    m.addSynapseGroup("Syn", MatrixType::Dense, 0, "Pre", "Post",
                      {wu, {}, {{"d", 0.0}, {"q", 7.0}}, {}, {}}, {models::DeltaCurr(), {}, {}});
    CustomUpdateModel cu;
    cu.name = "Halve";
    cu.vars = {CustomUpdateVarDecl{"k", "int32_t"}};
    cu.varRefs = {{"x", "int32_t", CustomUpdateVarAccess::ReadWrite}};
    cu.updateCode = "x = x % k;";
    m.addCustomUpdate("CU", "Mod", cu, {}, {{"k", 0.0}}, {{"x", {"Post", "a"}}});
    Simulation sim(m, everyStep());
    set<int32_t>(sim, "Syn", "d", {3, 0, -4});
    // Pre spikes in step 0; its spike reaches the synapses in step 1.
    EXPECT_NO_THROW(sim.step());
    std::string err = errorOf<ModelError>([&] { sim.step(); });
    expectContains(err, {"Syn.", "line 1, column 8: integer division by zero in step 1"});
    EXPECT_EQ(get<int32_t>(sim, "Syn", "q"), (std::vector<int32_t>{4, 0, -3}));
    set<int32_t>(sim, "CU", "k", {3, 0, 4});
    sim.customUpdate("Mod");
    err = errorOf<ModelError>([&] { sim.checkErrors(); });
    expectContains(err, {"CU.updateCode line 1, column 7: integer modulo by zero"});
    EXPECT_EQ(get<int32_t>(sim, "Post", "a"), (std::vector<int32_t>{1, 0, 2}));
}

// The documented conversion: NaN to 0, otherwise truncation toward zero clamped to the range.
template <typename T> T saturated(double x) {
    if (std::isnan(x)) return 0;
    const double t = std::trunc(x);
    if (t <= static_cast<double>(std::numeric_limits<T>::min()))
        return std::numeric_limits<T>::min();
    // 2^k: the first value above the maximum (the maximum itself may not be a double).
    if (t >= std::ldexp(1.0, std::numeric_limits<T>::digits)) return std::numeric_limits<T>::max();
    return static_cast<T>(t);
}

TEST_P(DefinedArithmetic, FloatToIntegerConversionsSaturateAndNaNIsZero) {
    const std::vector<float> xs = {NAN,    INFINITY, -INFINITY, 3.0e9f,  -3.0e9f, 2.75f,
                                   -2.75f, 300.0f,   -0.5f,     1.0e19f, 2.0e19f, -1.0e19f};
    NeuronModel nm;
    nm.name = "Convert";
    // 64-bit results travel as two 32-bit words (variables are at most 32 bits wide).
    nm.vars = {VarDecl{"x"},
               VarDecl{"i", "int32_t"},
               VarDecl{"u", "uint32_t"},
               VarDecl{"lhi", "int32_t"},
               VarDecl{"llo", "uint32_t"},
               VarDecl{"whi", "uint32_t"},
               VarDecl{"wlo", "uint32_t"},
               VarDecl{"c", "int32_t"}};
    // Implicit (i = x), explicit casts, a narrow type and a compound assignment.
    nm.simCode = "i = x;\nu = (uint32_t)x;\nint64_t l = (int64_t)x;\nuint64_t w = x;\n"
                 "lhi = (int32_t)(l >> 32);\nllo = (uint32_t)l;\nwhi = (uint32_t)(w >> 32);\n"
                 "wlo = (uint32_t)w;\nint8_t n = x;\nc = n;\nint j = 0;\nj += x;\n"
                 "i = i + 0 * j;";
    Model m("defined_conversion");
    VarInitMap init;
    for (const auto& v : nm.vars)
        init[v.name] = 0.0;
    m.addNeuronGroup("C", static_cast<unsigned>(xs.size()), nm, {}, init);
    Simulation sim(m, prefs(1));
    set<float>(sim, "C", "x", xs);
    sim.step();
    const auto i = get<int32_t>(sim, "C", "i");
    const auto u = get<uint32_t>(sim, "C", "u");
    const auto lhi = get<int32_t>(sim, "C", "lhi");
    const auto llo = get<uint32_t>(sim, "C", "llo");
    const auto whi = get<uint32_t>(sim, "C", "whi");
    const auto wlo = get<uint32_t>(sim, "C", "wlo");
    const auto c = get<int32_t>(sim, "C", "c");
    for (size_t k = 0; k < xs.size(); k++) {
        const double x = xs[k];
        const auto l = static_cast<int64_t>(
            (static_cast<uint64_t>(static_cast<uint32_t>(lhi[k])) << 32) | llo[k]);
        const uint64_t w = (static_cast<uint64_t>(whi[k]) << 32) | wlo[k];
        EXPECT_EQ(i[k], saturated<int32_t>(x)) << "x = " << x;
        EXPECT_EQ(u[k], saturated<uint32_t>(x)) << "x = " << x;
        EXPECT_EQ(l, saturated<int64_t>(x)) << "x = " << x;
        EXPECT_EQ(w, saturated<uint64_t>(x)) << "x = " << x;
        EXPECT_EQ(c[k], saturated<int8_t>(x)) << "x = " << x;
    }
}

// Shift counts are taken modulo the width of the shifted (promoted) type.
TEST_P(DefinedArithmetic, ShiftCountsAreMaskedByTheWidth) {
    NeuronModel nm;
    nm.name = "Shift";
    nm.vars = {VarDecl{"x", "int32_t"},     VarDecl{"n", "int32_t"},    VarDecl{"left", "int32_t"},
               VarDecl{"right", "int32_t"}, VarDecl{"whi", "uint32_t"}, VarDecl{"wlo", "uint32_t"}};
    nm.simCode = "left = x << n;\nright = x >> n;\nuint64_t w = (uint64_t)x << n;\n"
                 "whi = (uint32_t)(w >> 32);\nwlo = (uint32_t)w;";
    Model m("defined_shift");
    m.addNeuronGroup(
        "S", 4, nm, {},
        {{"x", 0.0}, {"n", 0.0}, {"left", 0.0}, {"right", 0.0}, {"whi", 0.0}, {"wlo", 0.0}});
    Simulation sim(m, prefs(1));
    set<int32_t>(sim, "S", "x", {1, 5, -8, 3});
    set<int32_t>(sim, "S", "n", {33, 32, 1, -1});
    sim.step();
    // n & 31: 1, 0, 1, 31; n & 63: 33, 32, 1, 63.
    EXPECT_EQ(get<int32_t>(sim, "S", "left"),
              (std::vector<int32_t>{2, 5, -16, static_cast<int32_t>(0x80000000u)}));
    EXPECT_EQ(get<int32_t>(sim, "S", "right"), (std::vector<int32_t>{0, 5, -4, 0}));
    const std::vector<uint64_t> wide = {uint64_t(1) << 33, uint64_t(5) << 32,
                                        static_cast<uint64_t>(-16), uint64_t(3) << 63};
    const auto whi = get<uint32_t>(sim, "S", "whi"), wlo = get<uint32_t>(sim, "S", "wlo");
    for (size_t k = 0; k < wide.size(); k++)
        EXPECT_EQ((static_cast<uint64_t>(whi[k]) << 32) | wlo[k], wide[k]) << k;
}

} // namespace

SF_INSTANTIATE_BACKEND_TESTS(DefinedArithmetic);
