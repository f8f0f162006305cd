// Built only with the cuda layer (file name test_cuda_*: CMake leaves it out otherwise).
// The generated CUDA of a few models, one per algorithm of the SIMT generator, compiles with
// NVRTC for sm_80 and sm_90 (no GPU needed); a broken source is a BackendError with NVRTC's log;
// the sub-group (warp) reductions are what the CUDA dialect's reduction trees use, and the
// OpenCL-shaped output is unchanged without them. Skips where NVRTC is absent.
#include "backends/cuda/cuda_dialect.hpp"
#include "backends/cuda/nvrtc.hpp"
#include "backends/simt/simt.hpp"
#include "codegen/lower.hpp"
#include "spikeforge/errors.hpp"
#include "spikeforge/models.hpp"
#include "support/reduction_models.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>

using namespace spikeforge;
using A = CustomUpdateVarAccess;

namespace {

#define SKIP_WITHOUT_NVRTC()                                                                       \
    if (!cuda::nvrtcInfo().available) GTEST_SKIP() << cuda::nvrtcInfo().reason

// Generates `m`'s program in the CUDA dialect and compiles it for sm_80 and sm_90.
void compilesForCuda(Model& m, unsigned workGroupSize = 128, bool fastMath = false,
                     bool quick = false) {
    m.finalise();
    const simt::Program p =
        simt::generate(codegen::lowerModel(m), cuda::cudaDialect(workGroupSize));
    for (int major : {8, 9}) {
        cuda::CompiledCuda out;
        try {
            out = cuda::compileCuda(p.source, major, 0, cuda::cudaCompileOptions(fastMath, quick));
        } catch (const BackendError& e) {
            ADD_FAILURE() << "sm_" << major << "0: " << e.what();
            continue;
        }
        // A cubin is an ELF file.
        ASSERT_GE(out.cubin.size(), 4u);
        EXPECT_EQ(std::string(out.cubin.data() + 1, 3), "ELF") << "sm_" << major << "0";
    }
}

const ParamValues kLif = {{"C", 1.0},        {"TauM", 20.0},     {"Vrest", -70.0},
                          {"Vreset", -70.0}, {"Vthresh", -50.0}, {"Ioffset", 0.0},
                          {"TauRefrac", 2.0}};
const VarInitMap kLifVars = {{"V", init::Uniform(-70.0, -50.0)}, {"RefracTime", 0.0}};

} // namespace

TEST(CudaCompile, NeuronsAndDenseSparseDelayedPropagation) {
    SKIP_WITHOUT_NVRTC();
    for (Precision precision : {Precision::Float, Precision::Double}) {
        Model m("propagation");
        m.setPrecision(precision);
        m.addNeuronGroup("Pre", 300, models::LIF(), kLif, kLifVars);
        m.addNeuronGroup("Post", 200, models::LIF(), kLif, kLifVars);
        m.addNeuronGroup("Noise", 100, models::Poisson(), {{"rate", 20.0}},
                         {{"timeStepToSpike", 0.0}});
        m.addSynapseGroup("Dense", MatrixType::Dense, 0, "Pre", "Post",
                          {models::StaticPulse(), {}, {{"g", init::Normal(0.0, 1.0)}}, {}, {}},
                          {models::ExpCurr(), {{"tau", 5.0}}, {}});
        m.addSynapseGroup("Sparse", MatrixType::Sparse, 3, "Noise", "Post",
                          {models::StaticPulse(), {}, {{"g", 0.5}}, {}, {}},
                          {models::DeltaCurr(), {}, {}}, init::FixedProbability(0.1));
        m.addSynapseGroup(
            "Dendritic", MatrixType::Sparse, 0, "Pre", "Pre",
            {models::StaticPulseDendriticDelay(), {}, {{"g", 0.1}, {"d", 2.0}}, {}, {}},
            {models::DeltaCurr(), {}, {}}, init::FixedNumberPostWithReplacement(8));
        SCOPED_TRACE(precision == Precision::Float ? "float" : "double");
        compilesForCuda(m);
    }
}

// The defined forms of what C leaves undefined (checked division and modulo, saturating
// conversions, masked shifts) in neuron and synapse code, both precisions and fast maths.
TEST(CudaCompile, DefinedArithmetic) {
    SKIP_WITHOUT_NVRTC();
    for (Precision precision : {Precision::Float, Precision::Double}) {
        NeuronModel nm;
        nm.name = "Arith";
        nm.vars = {{"x"}, {"a", "int32_t"}, {"b", "uint32_t"}};
        nm.simCode = "a = a / (int)b + a % 3;\nb /= b;\nint64_t l = (int64_t)x / a;\n"
                     "uint64_t w = x;\nw %= b;\nint8_t c = x;\na += x + (c << b) + (l >> a);\n"
                     "x = (scalar)(w >> 7u);";
        WeightUpdateModel wu;
        wu.name = "ArithSyn";
        wu.vars = {{"g"}, {"k", "int32_t"}};
        wu.preSpikeSynCode = "k = k / (int)g;\naddToPost(g);";
        Model m("defined_arithmetic");
        m.setPrecision(precision);
        m.addNeuronGroup("N", 64, nm, {}, {{"x", 1.0}, {"a", 1.0}, {"b", 1.0}});
        m.addSynapseGroup("S", MatrixType::Sparse, 0, "N", "N",
                          {wu, {}, {{"g", 1.0}, {"k", 1.0}}, {}, {}}, {models::DeltaCurr(), {}, {}},
                          init::FixedProbability(0.1));
        SCOPED_TRACE(precision == Precision::Float ? "float" : "double");
        compilesForCuda(m);
        compilesForCuda(m, 128, true);
    }
}

// BackendPreferences::fastMath: --use_fast_math instead of --fmad=false.
TEST(CudaCompile, FastMathOptions) {
    SKIP_WITHOUT_NVRTC();
    const auto exact = cuda::cudaCompileOptions(false), fast = cuda::cudaCompileOptions(true);
    EXPECT_NE(std::find(exact.begin(), exact.end(), "--fmad=false"), exact.end());
    EXPECT_EQ(std::find(fast.begin(), fast.end(), "--fmad=false"), fast.end());
    EXPECT_NE(std::find(fast.begin(), fast.end(), "--use_fast_math"), fast.end());
    Model m("fast_math");
    m.addNeuronGroup("Pre", 300, models::LIF(), kLif, kLifVars);
    m.addNeuronGroup("Post", 200, models::LIF(), kLif, kLifVars);
    m.addSynapseGroup("Dense", MatrixType::Dense, 0, "Pre", "Post",
                      {models::StaticPulse(), {}, {{"g", init::Normal(0.0, 1.0)}}, {}, {}},
                      {models::ExpCurr(), {{"tau", 5.0}}, {}});
    compilesForCuda(m, 128, true);
}

// BackendPreferences::optimisation Quick: NVRTC 13's --Ofast-compile=mid besides the exact
// options (no other change to arithmetic); an older NVRTC gets the release options.
TEST(CudaCompile, QuickOptions) {
    SKIP_WITHOUT_NVRTC();
    const auto release = cuda::cudaCompileOptions(false, false);
    const auto quick = cuda::cudaCompileOptions(false, true);
    EXPECT_EQ(std::find(release.begin(), release.end(), "--Ofast-compile=mid"), release.end());
    auto expected = release;
    if (cuda::nvrtcInfo().major >= 13) expected.push_back("--Ofast-compile=mid");
    EXPECT_EQ(quick, expected);
    // --minimal (NVRTC 12.4 and later) in both: every generated program compiles without the
    // declarations it leaves out (the CUDA compile check compiles all of the suite's with it).
    const auto info = cuda::nvrtcInfo();
    const bool minimal = info.major > 12 || (info.major == 12 && info.minor >= 4);
    for (const auto* options : {&release, &quick})
        EXPECT_EQ(std::count(options->begin(), options->end(), "--minimal"), minimal ? 1 : 0);
    Model m("quick_options");
    m.addNeuronGroup("Pre", 300, models::LIF(), kLif, kLifVars);
    m.addNeuronGroup("Post", 200, models::LIF(), kLif, kLifVars);
    m.addSynapseGroup("Sparse", MatrixType::Sparse, 0, "Pre", "Post",
                      {models::StaticPulse(), {}, {{"g", init::Normal(0.0, 1.0)}}, {}, {}},
                      {models::ExpCurr(), {{"tau", 5.0}}, {}}, init::FixedProbability(0.1));
    compilesForCuda(m, 128, false, true);
}

TEST(CudaCompile, StdpDenseAndSparse) {
    SKIP_WITHOUT_NVRTC();
    Model m("stdp");
    m.addNeuronGroup("Pre", 64, models::LIF(), kLif, kLifVars);
    m.addNeuronGroup("Post", 48, models::LIF(), kLif, kLifVars);
    const ParamValues stdp = {{"tauPlus", 20.0}, {"tauMinus", 20.0}, {"Aplus", 0.01},
                              {"Aminus", 0.012}, {"Wmin", 0.0},      {"Wmax", 1.0}};
    m.addSynapseGroup("Nearest", MatrixType::Dense, 0, "Pre", "Post",
                      {models::STDPNearest(), stdp, {{"g", 0.5}}, {}, {}},
                      {models::DeltaCurr(), {}, {}});
    WeightUpdateInit trace{models::STDPAllToAll(), stdp, {{"g", 0.5}}, {}, {}};
    trace.preVarInits = {{"preTrace", 0.0}, {"preTraceT", -1e30}};
    trace.postVarInits = {{"postTrace", 0.0}, {"postTraceT", -1e30}};
    m.addSynapseGroup("AllToAll", MatrixType::Sparse, 0, "Pre", "Post", trace,
                      {models::DeltaCurr(), {}, {}}, init::FixedProbability(0.2));
    compilesForCuda(m);
}

// Batch reductions of both strategies (a work-item per element for 20 000 elements, a
// work-group per element for 100), neuron reductions, softmax and a transpose, batched; float
// and double (the warp reductions of each), block sizes from one warp to 32.
TEST(CudaCompile, ReductionsSoftmaxTranspose) {
    SKIP_WITHOUT_NVRTC();
    const std::pair<unsigned, Precision> shapes[] = {{32u, Precision::Float},
                                                     {128u, Precision::Float},
                                                     {128u, Precision::Double},
                                                     {1024u, Precision::Double}};
    for (const auto& [wg, precision] : shapes) {
        Model m("custom");
        m.setBatchSize(64);
        m.setPrecision(precision);
        m.addNeuronGroup("Small", 100, sftest::holder({"x", "y"}), {}, {{"x", 0.0}, {"y", 0.0}});
        m.addNeuronGroup("Large", 20000, sftest::holder({"x", "y"}), {}, {{"x", 0.0}, {"y", 0.0}});
        for (const char* g : {"Small", "Large"}) {
            m.addCustomUpdate(std::string("BR") + g, "Batch",
                              sftest::reduce(A::ReduceBatchSum, A::ReduceBatchMax), {},
                              {{"sum", 0.0}, {"mx", 0.0}}, {{"x", {g, "x"}}});
            m.addCustomUpdate(std::string("NR") + g, "Neuron",
                              sftest::reduce(A::ReduceNeuronSum, A::ReduceNeuronMax), {},
                              {{"sum", 0.0}, {"mx", 0.0}}, {{"x", {g, "y"}}});
        }
        models::addSoftmax(m, "Soft", "Softmax", {"Small", "x"}, {"Small", "y"});
        m.addSynapseGroup("Fwd", MatrixType::Dense, 0, "Small", "Large",
                          {models::StaticPulse(), {}, {{"g", 0.0}}, {}, {}},
                          {models::DeltaCurr(), {}, {}});
        m.addSynapseGroup("Back", MatrixType::Dense, 0, "Large", "Small",
                          {models::StaticPulse(), {}, {{"g", 0.0}}, {}, {}},
                          {models::DeltaCurr(), {}, {}});
        m.addCustomUpdateWU("T", "Transpose", models::Transpose(), {}, {},
                            {{"variable", {"Fwd", "g", "Back", "g"}}});
        SCOPED_TRACE("block size " + std::to_string(wg) +
                     (precision == Precision::Float ? ", float" : ", double"));
        compilesForCuda(m, wg);
    }
}

// The CUDA trees reduce within warps by shuffles; without sub-groups (OpenCL) the printed
// program has none of it, and the only difference between the two is the dialect.
TEST(CudaDialect, ReductionTreesUseWarpShufflesOnlyWhereTheDialectHasThem) {
    Model m("reduce");
    m.setBatchSize(64);
    m.addNeuronGroup("Pop", 100, sftest::holder({"x", "y"}), {}, {{"x", 0.0}, {"y", 0.0}});
    m.addCustomUpdate("NR", "Neuron", sftest::reduce(A::ReduceNeuronSum, A::ReduceNeuronMax), {},
                      {{"sum", 0.0}, {"mx", 0.0}}, {{"x", {"Pop", "y"}}});
    m.finalise();
    const codegen::Plan plan = codegen::lowerModel(m);
    simt::Dialect cuda = cuda::cudaDialect(128);
    const std::string withWarps = simt::generate(plan, cuda).source;
    cuda.subGroupSize = 0;
    const std::string without = simt::generate(plan, cuda).source;
    for (const char* fn : {"sf_subgroup_add_f32(sfAcc_", "sf_subgroup_max_f32(sfAcc_"}) {
        EXPECT_NE(withWarps.find(fn), std::string::npos) << fn;
        EXPECT_EQ(without.find(fn), std::string::npos) << fn;
    }
    EXPECT_NE(without.find("sfHalf"), std::string::npos); // the halving tree
    EXPECT_EQ(withWarps.find("sfHalf"), std::string::npos);
}

TEST(CudaDialect, RejectsBlockSizesCudaCannotRun) {
    EXPECT_THROW(cuda::cudaDialect(48), InternalError);
    EXPECT_THROW(cuda::cudaDialect(2048), InternalError);
    EXPECT_EQ(cuda::cudaDialect(256).workGroupSize, 256u);
}

TEST(Nvrtc, BrokenSourceIsABackendErrorWithTheLogAndTheLine) {
    SKIP_WITHOUT_NVRTC();
    const std::string source = "extern \"C\" __global__ void k(float* x) {\n"
                               "    x[0] = undeclared_name;\n"
                               "}\n";
    try {
        cuda::compileCuda(source, 8, 0, cuda::cudaCompileOptions(), "broken.cu");
        FAIL() << "a broken source compiled";
    } catch (const BackendError& e) {
        const std::string msg = e.what();
        for (const char* part : {"sm_80", "undeclared_name", "line 2 of broken.cu",
                                 "x[0] = undeclared_name;", "NVRTC log:"})
            EXPECT_NE(msg.find(part), std::string::npos) << part << " not in: " << msg;
    }
}

// In a fresh process (the threadsafe death-test style runs the test binary again), so that NVRTC
// is not loaded yet: a library that is not there is named in the error, with the way out.
TEST(NvrtcDeathTest, AbsentLibraryIsABackendErrorNamingWhatWasTried) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            setenv("SPIKEFORGE_NVRTC", "libnvrtc-missing.so.99", 1);
            try {
                cuda::compileCuda("", 8, 0, {});
            } catch (const BackendError& e) {
                std::cerr << e.what();
                std::exit(cuda::nvrtcInfo().available ? 2 : 0);
            }
            std::exit(1);
        },
        ::testing::ExitedWithCode(0),
        "could not be loaded; tried:\n  libnvrtc-missing\\.so\\.99: .*SPIKEFORGE_NVRTC");
}

TEST(Nvrtc, ReportsItsVersionAndLibrary) {
    SKIP_WITHOUT_NVRTC();
    const auto& info = cuda::nvrtcInfo();
    EXPECT_GE(info.major, 11);
    EXPECT_FALSE(info.library.empty());
    EXPECT_TRUE(info.reason.empty());
}

// With 32-wide sub-groups the neuron update compacts spikes by warp ballots, without the local
// spike words and counters (and their barriers) of the OpenCL form.
TEST(CudaDialect, NeuronUpdateEmitsSpikesByBallotOnlyWhereTheDialectHasIt) {
    Model m("lif");
    m.addNeuronGroup("Pop", 100, models::LIF(), kLif, kLifVars).setSpikeRecording(true);
    m.finalise();
    const codegen::Plan plan = codegen::lowerModel(m);
    simt::Dialect cuda = cuda::cudaDialect(128);
    const std::string withWarps = simt::generate(plan, cuda).source;
    cuda.subGroupSize = 0;
    const std::string without = simt::generate(plan, cuda).source;
    EXPECT_NE(withWarps.find("= sf_subgroup_ballot(sfSpike)"), std::string::npos);
    EXPECT_EQ(withWarps.find("sfBitsL"), std::string::npos);
    EXPECT_EQ(without.find("= sf_subgroup_ballot(sfSpike)"), std::string::npos);
    EXPECT_NE(without.find("sfBitsL"), std::string::npos);
}
