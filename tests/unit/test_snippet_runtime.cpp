// Run-time bounds checks of snippet indices, through a Simulation on the CPU backend: an index
// outside a local array or an extra global parameter is reported as a ModelError naming the
// group, the field and the array, and never reads or writes out of bounds.
#include "spikeforge/simulation.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using namespace spikeforge;

namespace {

// A neuron whose simCode indexes a local array and an EGP with a counter that grows each step.
NeuronModel countingNeuron(const std::string& simCode) {
    NeuronModel nm;
    nm.name = "Counting";
    nm.vars = {VarDecl{"V"}, VarDecl{"k", "unsigned int"}};
    nm.egps = {EGPDecl{"table", "scalar"}};
    nm.simCode = simCode;
    return nm;
}

BackendPreferences cpu() {
    BackendPreferences p;
    p.backend = "cpu";
    p.threads = 1;
    // These tests check the step an error happened in, one step() at a time: read the
    // device-side errors after every step (the default reads them at sync points only).
    p.errorCheckInterval = 1;
    return p;
}

std::string runError(Simulation& sim, uint64_t steps) {
    try {
        for (uint64_t i = 0; i < steps; i++)
            sim.step();
    } catch (const ModelError& e) {
        return e.what();
    }
    return "";
}

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
    if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "\"" << text << "\" does not contain \"" << part << "\"";
}

} // namespace

TEST(SnippetRuntime, LocalArrayIndexOutOfRangeIsReported) {
    Model m("local_index");
    // Writes h[k] then reads it back: steps 0..3 are in range, step 4 is not.
    m.addNeuronGroup("Cell", 3, countingNeuron("scalar h[4];\nh[k] = 2.0;\nV += h[k];\nk++;"), {},
                     {{"V", 0.0}, {"k", 0.0}});
    Simulation sim(m, cpu());
    EXPECT_EQ(runError(sim, 4), "");
    sim.pull("Cell", "V");
    EXPECT_FLOAT_EQ(sim.view<float>("Cell", "V")[0], 8.0f);
    const std::string err = runError(sim, 1);
    EXPECT_TRUE(
        contains(err, "Cell.simCode line 3, column 8: index out of range for 'h' in step 4"))
        << err;
    // The flag is cleared once reported; the next out-of-range step reports again.
    EXPECT_TRUE(contains(runError(sim, 1), "in step 5"));
}

TEST(SnippetRuntime, RunReportsTheStepRange) {
    Model m("local_index_run");
    m.addNeuronGroup("Cell", 2, countingNeuron("int h[2];\nh[k / 3u] = 1;\nk++;"), {},
                     {{"V", 0.0}, {"k", 0.0}});
    BackendPreferences p = cpu();
    p.errorCheckInterval = 0; // run() reads the errors once, at its end
    Simulation sim(m, p);
    try {
        sim.run(10);
        ADD_FAILURE() << "no error";
    } catch (const ModelError& e) {
        EXPECT_TRUE(contains(
            e.what(), "Cell.simCode line 2, column 3: index out of range for 'h' in steps 0 to 9"))
            << e.what();
    }
}

TEST(SnippetRuntime, ExtraGlobalParameterIndexOutOfRangeIsReported) {
    Model m("egp_index");
    m.addNeuronGroup("Cell", 2, countingNeuron("V = table[k];\nk++;"), {},
                     {{"V", 0.0}, {"k", 0.0}});
    Simulation sim(m, cpu());
    const std::vector<double> table = {1.0, 2.0, 3.0};
    sim.setEGP("Cell", "table", table);
    EXPECT_EQ(runError(sim, 3), "");
    sim.pull("Cell", "V");
    EXPECT_FLOAT_EQ(sim.view<float>("Cell", "V")[1], 3.0f);
    EXPECT_TRUE(contains(runError(sim, 1),
                         "Cell.simCode line 1, column 11: index out of range for 'table'"));
    // Growing the EGP refreshes the bound the generated code checks against.
    const std::vector<double> longer = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0};
    sim.setEGP("Cell", "table", longer);
    EXPECT_EQ(runError(sim, 2), "");
    sim.pull("Cell", "V");
    EXPECT_FLOAT_EQ(sim.view<float>("Cell", "V")[0], 6.0f);
}

TEST(SnippetRuntime, EmptyExtraGlobalParameterIsReportedNotDereferenced) {
    Model m("egp_empty");
    m.addNeuronGroup("Cell", 2, countingNeuron("V = table[0];"), {}, {{"V", 0.0}, {"k", 0.0}});
    Simulation sim(m, cpu());
    EXPECT_TRUE(
        contains(runError(sim, 1),
                 "Cell.simCode line 1, column 11: index out of range for 'table' in step 0"));
}

TEST(SnippetRuntime, InRangeIndicesRunUnchanged) {
    Model m("in_range");
    m.addNeuronGroup("Cell", 4,
                     countingNeuron("scalar h[3] = {1.0, 2.0, 4.0};\nV += h[k % 3u];\nk++;"), {},
                     {{"V", 0.0}, {"k", 0.0}});
    Simulation sim(m, cpu());
    EXPECT_NO_THROW(sim.run(6));
    sim.pull("Cell", "V");
    EXPECT_FLOAT_EQ(sim.view<float>("Cell", "V")[3], 14.0f);
}

namespace {

// Every statement form, local arrays, casts, 64-bit shifts and maths functions. The printed code
// must group and convert exactly as this C++ does.
const char* const kProgram =
    "scalar acc = 0.0;\n"
    "int hist[5] = {1, 2};\n"
    "for (int i = 0; i < 10; i++) {\n"
    "    if (i % 3 == 0) continue;\n"
    "    switch (i & 3) {\n"
    "    case 0: acc += 1.0; break;\n"
    "    case 1: { const scalar w = (scalar)i * 0.5; acc += w; break; }\n"
    "    default: acc -= 0.25;\n"
    "    }\n"
    "    hist[i % 5]++;\n"
    "}\n"
    "unsigned int j = 0u;\n"
    "while (j < 3u) { j++; }\n"
    "do { j += 2u; } while (j < 8u);\n"
    "int64_t big = (int64_t)1 << 40;\n"
    "V = acc + (scalar)hist[k % 5u] + (scalar)j + fmin(exp(0.0), 2.0) + (scalar)(big >> 40)\n"
    "    + ((k > 2u) ? 1.0 : 0.0) - -(scalar)(7 / 2) * 2.0;\n"
    "k++;\n";

double reference(unsigned k) {
    double acc = 0.0;
    int hist[5] = {1, 2};
    for (int i = 0; i < 10; i++) {
        if (i % 3 == 0) continue;
        switch (i & 3) {
        case 0:
            acc += 1.0;
            break;
        case 1: {
            const double w = static_cast<double>(i) * 0.5;
            acc += w;
            break;
        }
        default:
            acc -= 0.25;
        }
        hist[i % 5]++;
    }
    unsigned j = 0u;
    while (j < 3u)
        j++;
    do {
        j += 2u;
    } while (j < 8u);
    const int64_t big = int64_t(1) << 40;
    return acc + hist[k % 5u] + j + std::fmin(std::exp(0.0), 2.0) + static_cast<double>(big >> 40) +
           (k > 2u ? 1.0 : 0.0) + 3.0 * 2.0;
}

} // namespace

TEST(SnippetRuntime, AcceptedProgramCompilesAndComputesAsC) {
    for (Precision p : {Precision::Double, Precision::Float}) {
        Model m(p == Precision::Double ? "program_double" : "program_float");
        m.setPrecision(p);
        m.addNeuronGroup("Cell", 2, countingNeuron(kProgram), {}, {{"V", 0.0}, {"k", 0.0}});
        Simulation sim(m, cpu());
        for (unsigned k = 0; k < 7; k++) {
            sim.step();
            sim.pull("Cell", "V");
            const double v = p == Precision::Double ? sim.view<double>("Cell", "V")[1]
                                                    : sim.view<float>("Cell", "V")[1];
            EXPECT_NEAR(v, reference(k), 1e-5) << "k = " << k;
        }
    }
}

// A custom update writes through an EGP reference (a writable array): an index past its end is
// reported with the update's name, and its own EGPs are real arrays that setEGP can fill.
TEST(SnippetRuntime, CustomUpdateEGPIndicesAreChecked) {
    NeuronModel holder = countingNeuron("");
    Model m("cu_egp");
    m.addNeuronGroup("Pop", 4, holder, {}, {{"V", 0.0}, {"k", 0.0}});
    CustomUpdateModel write;
    write.name = "Write";
    write.varRefs = {{"V", "scalar", CustomUpdateVarAccess::ReadWrite}};
    write.egps = {{"gain", "scalar"}};
    write.egpRefs = {{"out", "scalar"}};
    write.updateCode = "out[id + 1u] = gain[0] * V;";
    m.addCustomUpdate("W", "Write", write, {}, {}, {{"V", {"Pop", "V"}}},
                      {{"out", {"Pop", "table"}}});
    Simulation sim(m, cpu());
    sim.setEGP("W", "gain", std::vector<double>{2.0});
    sim.setEGP("Pop", "table", std::vector<double>{0, 0, 0, 0, 0});
    EXPECT_NO_THROW(sim.customUpdate("Write"));
    sim.setEGP("Pop", "table", std::vector<double>{0, 0, 0, 0}); // one too short for id 3
    sim.customUpdate("Write");
    try {
        sim.step();
        ADD_FAILURE() << "no error";
    } catch (const ModelError& e) {
        EXPECT_TRUE(
            contains(e.what(), "W.updateCode line 1, column 5: index out of range for 'out'"))
            << e.what();
    }
}

TEST(SnippetRuntime, InitialiserSnippetsSeeNoExtraGlobalParameters) {
    InitSnippet init;
    init.name = "FromTable";
    init.egps = {{"values", "scalar"}};
    init.code = "value = values[id];";
    Model m("init_egp");
    m.addNeuronGroup("Pop", 2, countingNeuron(""), {}, {{"V", VarInit(init, {})}, {"k", 0.0}});
    try {
        m.finalise();
        ADD_FAILURE() << "no error";
    } catch (const ModelError& e) {
        EXPECT_TRUE(contains(e.what(), "Pop.init.V line 1, column 9: unknown identifier 'values'"))
            << e.what();
    }
}

TEST(SnippetRuntime, IndexErrorsDuringInitialisationAreReported) {
    InitSnippet init;
    init.name = "Ramp";
    init.code = "scalar a[2] = {1.0, 2.0};\nvalue = a[id];";
    Model m("init_index");
    m.addNeuronGroup("Pop", 3, countingNeuron(""), {}, {{"V", VarInit(init, {})}, {"k", 0.0}});
    try {
        Simulation sim(m, cpu());
        ADD_FAILURE() << "no error";
    } catch (const ModelError& e) {
        EXPECT_TRUE(contains(e.what(),
                             "Pop.init.V line 2, column 11: index out of range for 'a' during "
                             "initialisation"))
            << e.what();
    }
}

// Structurally identical groups share one kernel; each still reports in its own slot.
TEST(SnippetRuntime, MergedGroupsReportTheirOwnName) {
    Model m("merged_slots");
    const NeuronModel nm = countingNeuron("V = table[k];\nk++;");
    m.addNeuronGroup("A", 2, nm, {}, {{"V", 0.0}, {"k", 0.0}});
    m.addNeuronGroup("B", 2, nm, {}, {{"V", 0.0}, {"k", 0.0}});
    Simulation sim(m, cpu());
    sim.setEGP("A", "table", std::vector<double>{1, 2, 3, 4});
    sim.setEGP("B", "table", std::vector<double>{1, 2});
    EXPECT_EQ(runError(sim, 2), "");
    const std::string err = runError(sim, 1);
    EXPECT_TRUE(
        contains(err, "B.simCode line 1, column 11: index out of range for 'table' in step 2"))
        << err;
    EXPECT_FALSE(contains(err, "A.simCode"));
}
