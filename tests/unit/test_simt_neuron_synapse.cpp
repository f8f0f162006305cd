// The SIMT printers of the neuron update and of propagation (src/backends/simt): the strategy
// the rule picks for each shape and override, the launches it sizes, the span override's
// validation, and every generated program built by PoCL (OpenCL C 1.2) where OpenCL is built.
#include "backends/backend.hpp"
#include "backends/simt/simt_span.hpp"
#include "codegen/lower.hpp"
#include "spikeforge/errors.hpp"
#include "spikeforge/models.hpp"

#if SPIKEFORGE_BACKEND_OPENCL
#include "backends/opencl/opencl_device.hpp"
#include "backends/opencl/opencl_dialect.hpp"
#include "backends/opencl/platforms.hpp"
#endif

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>

using namespace spikeforge;
using namespace spikeforge::codegen;
using spikeforge::simt::Strategy;

namespace {

constexpr unsigned kWg = 64; // work-group size of every test dialect here

// The plan's neuron and synapse update kernels only (the other printers are not under test).
Plan updateKernels(const Model& m) {
    Plan p = lowerModel(m);
    std::erase_if(p.kernels, [](const Kernel& k) {
        return k.phase != KernelPhase::NeuronUpdate && k.phase != KernelPhase::PresynapticUpdate &&
               k.phase != KernelPhase::PostsynapticUpdate;
    });
    return p;
}

const Kernel& kernelOf(const Plan& p, KernelPhase phase) {
    for (const auto& k : p.kernels)
        if (k.phase == phase) return k;
    throw std::runtime_error("no kernel of that phase");
}

// The presynaptic (or postsynaptic learning) group of the synapse update kernel whose table
// holds synapse group `name`.
const KernelGroup& propagation(const Plan& p, const std::string& name, bool presynaptic) {
    for (const auto& g :
         kernelOf(p, presynaptic ? KernelPhase::PresynapticUpdate : KernelPhase::PostsynapticUpdate)
             .groups) {
        const auto& names = p.mergedGroups.at(g.table).groupNames;
        const auto* b = std::get_if<PropagationBody>(&g.body);
        if (b && b->presynaptic == presynaptic &&
            std::find(names.begin(), names.end(), name) != names.end())
            return g;
    }
    throw std::runtime_error("no propagation group " + name);
}

const std::vector<simt::Launch>& launchesOf(const Plan& p, const simt::Program& prog,
                                            KernelPhase phase) {
    for (size_t k = 0; k < p.kernels.size(); k++)
        if (p.kernels[k].phase == phase) return prog.kernels.at(k);
    throw std::runtime_error("no kernel of that phase");
}

simt::SpanChoice spanOf(const Plan& p, const std::string& name, bool presynaptic = true) {
    const KernelGroup& g = propagation(p, name, presynaptic);
    return simt::chooseSpan({p, p.mergedGroups.at(g.table), g, kWg},
                            std::get<PropagationBody>(g.body));
}

// The OpenCL backend's dialect where this build has OpenCL (64 work-items per work-group for a
// device that allows it); else a bare one, enough to generate.
simt::Dialect dialect() {
#if SPIKEFORGE_BACKEND_OPENCL
    simt::Dialect d = opencl::openclDialect(opencl::DeviceInfo{});
#else
    simt::Dialect d;
    d.name = "test";
#endif
    d.workGroupSize = kWg;
    return d;
}

// Builds the program's source with PoCL (or the first OpenCL device); skips without one.
void buildsOnOpenCl(const simt::Program& prog) {
#if SPIKEFORGE_BACKEND_OPENCL
    size_t devices = 0;
    for (const auto& pl : opencl::discoverPlatforms())
        devices += pl.devices.size();
    if (devices == 0) GTEST_SKIP() << "no OpenCL device on this machine: generated only";
    const auto dev = opencl::OpenClDevice::open("");
    EXPECT_NO_THROW(dev->buildProgram(prog.source, opencl::buildOptions(dev->info())))
        << prog.source;
#else
    (void)prog;
    GTEST_SKIP() << "this build has no OpenCL: generated only";
#endif
}

size_t roundUp(size_t n) {
    return (n + kWg - 1) / kWg * kWg;
}

// A model with source Pre (nPre neurons) and target Post (nPost), Poisson-free LIF.
Model& twoPopulations(Model& m, unsigned nPre, unsigned nPost, unsigned batch = 1) {
    m.setBatchSize(batch);
    const ParamValues lif = {{"C", 1.0},        {"TauM", 20.0},     {"Vrest", -70.0},
                             {"Vreset", -70.0}, {"Vthresh", -50.0}, {"Ioffset", 0.0},
                             {"TauRefrac", 2.0}};
    const VarInitMap lifVars = {{"V", -60.0}, {"RefracTime", 0.0}};
    m.addNeuronGroup("Pre", nPre, models::LIF(), lif, lifVars);
    m.addNeuronGroup("Post", nPost, models::LIF(), lif, lifVars);
    return m;
}

void addStatic(Model& m, const std::string& name, MatrixType type, unsigned delay = 0,
               std::optional<SparseConnectivityInit> conn = {}) {
    m.addSynapseGroup(name, type, delay, "Pre", "Post",
                      {models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}},
                      {models::DeltaCurr(), {}, {}}, std::move(conn));
}

TEST(SimtNeuronUpdate, TwoStagesSizedPerNeuronAndBatchAndBuilds) {
    Model m("nu");
    twoPopulations(m, 100, 37, 3);
    m.neuronGroup("Pre").setSpikeRecording(true);
    m.finalise();
    const Plan p = updateKernels(m);
    const simt::Program prog = simt::generate(p, dialect());
    const auto& launches = launchesOf(p, prog, KernelPhase::NeuronUpdate);
    ASSERT_EQ(launches.size(), 2u); // reset the spike counts, then update
    // Pre (recorded) and Post do not merge; a reset work-group each, then their neurons.
    size_t groups = 0;
    for (const auto& g : kernelOf(p, KernelPhase::NeuronUpdate).groups)
        groups += g.elements.size();
    ASSERT_EQ(groups, 2u);
    EXPECT_EQ(launches[0].items, 2u * kWg);
    EXPECT_EQ(launches[1].items, roundUp(100) + roundUp(37));
    EXPECT_EQ(launches[0].dim1, 3u);
    EXPECT_EQ(launches[1].dim1, 3u);
    EXPECT_NE(prog.source.find("sfBitsL"), std::string::npos); // work-group staging
    buildsOnOpenCl(prog);
}

// The plan of two LIF populations (nPre, nPost neurons, `batch` elements) and its program in
// dialect `d`.
std::pair<Plan, simt::Program> twoPopulationProgram(unsigned nPre, unsigned nPost, unsigned batch,
                                                    const simt::Dialect& d) {
    Model m("two");
    twoPopulations(m, nPre, nPost, batch);
    m.finalise();
    Plan p = updateKernels(m);
    simt::Program prog = simt::generate(p, d);
    return {std::move(p), std::move(prog)};
}

TEST(SimtNeuronUpdate, WarpDialectEmitsByBallotAfterAReset) {
    simt::Dialect d = dialect();
    d.subGroupSize = 32;
    const auto [p, prog] = twoPopulationProgram(100, 37, 2, d);
    const auto& launches = launchesOf(p, prog, KernelPhase::NeuronUpdate);
    ASSERT_EQ(launches.size(), 2u); // reset the spike counts, then update and emit by warp
    EXPECT_EQ(launches[0].items, 2u * kWg);
    EXPECT_EQ(launches[1].items, roundUp(100) + roundUp(37));
    EXPECT_NE(prog.source.find("sf_subgroup_ballot(sfSpike)"), std::string::npos);
}

TEST(SimtPropagation, DenseIsPostSpanOneWorkItemPerTarget) {
    Model m("dense");
    twoPopulations(m, 50, 70, 7);
    addStatic(m, "S", MatrixType::Dense);
    m.finalise();
    const Plan p = updateKernels(m);
    EXPECT_EQ(spanOf(p, "S").strategy, Strategy::PostSpan);
    const simt::Program prog = simt::generate(p, dialect());
    const auto& l = launchesOf(p, prog, KernelPhase::PresynapticUpdate).at(0);
    EXPECT_EQ(l.items, roundUp(70));
    EXPECT_EQ(l.dim1, 7u);
    buildsOnOpenCl(prog);
}

TEST(SimtPropagation, SparseShortRowsArePreSpanLongRowsPostSpan) {
    for (unsigned rowLength : {10u, kWg - 1, kWg, 3 * kWg}) {
        Model m("sparse");
        twoPopulations(m, 50, 300);
        addStatic(m, "S", MatrixType::Sparse, 0, init::FixedNumberPostWithReplacement(rowLength));
        m.finalise();
        const Plan p = updateKernels(m);
        const auto span = spanOf(p, "S");
        const bool shortRows = rowLength < kWg;
        EXPECT_EQ(span.strategy, shortRows ? Strategy::PreSpan : Strategy::PostSpan) << rowLength;
        EXPECT_EQ(span.threadsPerSpike, 1u);
        const simt::Program prog = simt::generate(p, dialect());
        // Pre-span: a work-item per presynaptic neuron; post-span: one per row slot.
        const auto& l = launchesOf(p, prog, KernelPhase::PresynapticUpdate);
        ASSERT_EQ(l.size(), 1u);
        EXPECT_EQ(l[0].items, roundUp(shortRows ? 50 : rowLength)) << rowLength;
        if (rowLength == 10 || rowLength == 3 * kWg) buildsOnOpenCl(prog);
    }
}

TEST(SimtPropagation, CpuDevicesWalkSpikesSeriallyUnlessOverridden) {
    Model m("cpuspan");
    twoPopulations(m, 50, 300, 2);
    addStatic(m, "Dense", MatrixType::Dense);
    addStatic(m, "Long", MatrixType::Sparse, 0, init::FixedNumberPostWithReplacement(3 * kWg));
    addStatic(m, "Over", MatrixType::Sparse, 0, init::FixedNumberPostWithReplacement(3 * kWg));
    m.synapseGroup("Over").setSpanType(SpanType::Postsynaptic);
    m.finalise();
    const Plan p = updateKernels(m);
    auto span = [&](const std::string& name, bool cpuDevice) {
        const KernelGroup& g = propagation(p, name, true);
        simt::GroupContext c{p, p.mergedGroups.at(g.table), g, kWg};
        c.cpuDevice = cpuDevice;
        return simt::chooseSpan(c, std::get<PropagationBody>(g.body)).strategy;
    };
    // A GPU: the parallel spans; a CPU device: one work-item per batch element, plain adds.
    EXPECT_EQ(span("Dense", false), Strategy::PostSpan);
    EXPECT_EQ(span("Long", false), Strategy::PostSpan);
    EXPECT_EQ(span("Dense", true), Strategy::Serial);
    EXPECT_EQ(span("Long", true), Strategy::Serial);
    EXPECT_EQ(span("Over", true), Strategy::PostSpan); // the user's override still holds
    simt::Dialect d = dialect();
    d.cpuDevice = true;
    const simt::Program prog = simt::generate(p, d);
    EXPECT_NE(prog.source.find("presynaptic update: serial"), std::string::npos);
    buildsOnOpenCl(prog);
}

TEST(OpenClKernelForm, RefusedForOtherBackends) {
    for (const char* backend : {"cpu", "cuda"}) {
        BackendPreferences prefs;
        prefs.backend = backend;
        prefs.openclKernels = BackendPreferences::KernelForm::Gpu;
        try {
            backends::makeBackend(prefs);
            ADD_FAILURE() << backend << ": openclKernels = Gpu accepted";
        } catch (const ModelError& e) {
            EXPECT_NE(std::string(e.what()).find("openclKernels"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(backend), std::string::npos) << e.what();
        }
    }
}

#if SPIKEFORGE_BACKEND_OPENCL
TEST(OpenClKernelForm, AutoFollowsTheDeviceTypeAndGpuOrCpuForceIt) {
    using Form = BackendPreferences::KernelForm;
    opencl::DeviceInfo cpu, gpu;
    cpu.type = "cpu";
    gpu.type = "gpu";
    EXPECT_TRUE(opencl::openclDialect(cpu, Form::Auto).cpuDevice);
    EXPECT_FALSE(opencl::openclDialect(gpu, Form::Auto).cpuDevice);
    EXPECT_FALSE(opencl::openclDialect(cpu, Form::Gpu).cpuDevice);
    EXPECT_TRUE(opencl::openclDialect(gpu, Form::Cpu).cpuDevice);
}
#endif

TEST(SimtNeuronUpdate, CpuFormIsOneLaunchOfWordsClearingTheNextSlot) {
    simt::Dialect d = dialect();
    d.cpuDevice = true;
    const auto [p, prog] = twoPopulationProgram(100, 20, 3, d);
    const auto& launches = launchesOf(p, prog, KernelPhase::NeuronUpdate);
    ASSERT_EQ(launches.size(), 1u);                        // update and emission in one launch
    EXPECT_EQ(launches[0].items, roundUp(4) + roundUp(1)); // a work-item per 32-neuron word
    EXPECT_EQ(launches[0].dim1, 3u);
    EXPECT_NE(prog.source.find("(a->step + 1u) %"), std::string::npos);
    buildsOnOpenCl(prog);
}

// Stages without barriers run every table of a run in one launch on every device (PoCL compiles
// each kernel at its first launch); a stage with barriers runs one table per launch where the
// dialect says barriers may not sit under the dispatch's conditions (PoCL).
TEST(SimtLaunches, BarrierFreeStagesShareLaunchesEvenWhereBarrierStagesMayNot) {
    Model m("tables");
    twoPopulations(m, 100, 20, 2);
    m.addNeuronGroup("Izh", 30, models::Izhikevich(),
                     {{"a", 0.02}, {"b", 0.2}, {"c", -65.0}, {"d", 8.0}},
                     {{"V", -65.0}, {"U", -13.0}});
    m.finalise();
    const Plan p = updateKernels(m);
    ASSERT_EQ(kernelOf(p, KernelPhase::NeuronUpdate).groups.size(), 2u); // LIF and Izhikevich
    simt::Dialect d = dialect();
    d.tablesShareLaunches = false;
    d.cpuDevice = true; // update and emission by words: one stage, no barrier
    const simt::Program cpu = simt::generate(p, d);
    const auto& one = launchesOf(p, cpu, KernelPhase::NeuronUpdate);
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0].tables.size(), 2u);
    buildsOnOpenCl(cpu);
    d.cpuDevice = false; // a barrier-free reset of the counts, then emission through local memory
    const simt::Program gpu = simt::generate(p, d);
    const auto& split = launchesOf(p, gpu, KernelPhase::NeuronUpdate);
    ASSERT_EQ(split.size(), 3u);
    EXPECT_EQ(split[0].tables.size(), 2u);
    EXPECT_EQ(split[1].tables.size(), 1u);
    EXPECT_EQ(split[2].tables.size(), 1u);
    EXPECT_NE(split[1].tables, split[2].tables);
    buildsOnOpenCl(gpu);
    d.tablesShareLaunches = true; // a GPU driver: every stage shares
    const simt::Program shared = simt::generate(p, d);
    const auto& two = launchesOf(p, shared, KernelPhase::NeuronUpdate);
    ASSERT_EQ(two.size(), 2u);
    EXPECT_EQ(two[0].tables.size(), 2u);
    EXPECT_EQ(two[1].tables.size(), 2u);
}

TEST(SimtSteps, CpuDevicesRunStretchesOfStepsInOneWorkGroupWhenBarrierFreeAndSmall) {
    auto generateFor = [](unsigned nPost, bool postSpanOverride, bool cpuDevice) {
        Model m("steps");
        twoPopulations(m, 50, nPost, 2);
        addStatic(m, "S", MatrixType::Sparse, 0, init::FixedNumberPostWithReplacement(3 * kWg));
        if (postSpanOverride) m.synapseGroup("S").setSpanType(SpanType::Postsynaptic);
        m.finalise();
        const Plan p = updateKernels(m);
        simt::Dialect d = dialect();
        d.cpuDevice = cpuDevice;
        return std::make_pair(simt::generate(p, d), codegen::stepKernels(p));
    };
    const auto [prog, stepKernels] = generateFor(300, false, true);
    EXPECT_EQ(prog.steps.function, "sf_steps");
    EXPECT_EQ(prog.steps.kernels, stepKernels);
    EXPECT_EQ(prog.steps.localSize, kWg);
    EXPECT_FALSE(prog.steps.tables.empty());
    EXPECT_NE(prog.source.find("SF_KERNEL sf_steps("), std::string::npos);
    buildsOnOpenCl(prog);
    // Not on a GPU; not when a launch synchronises its work-group (post-span staging); not when
    // a step has work for more than one core.
    EXPECT_TRUE(generateFor(300, false, false).first.steps.function.empty());
    EXPECT_TRUE(generateFor(300, true, true).first.steps.function.empty());
    const unsigned big = static_cast<unsigned>(simt::kStepsKernelMaxItems * 32 / 2 + 64);
    EXPECT_TRUE(generateFor(big, false, true).first.steps.function.empty());
}

// The initialisation as one launch (simt::Program::init): on a CPU device, for a small model whose
// initialisation launches are barrier-free, one function runs every launch of every
// initialisation kernel in plan order; not on a GPU, not past kStepsKernelMaxItems.
TEST(SimtSteps, CpuDevicesRunTheInitialisationAsOneLaunchWhenSmall) {
    auto generateFor = [](unsigned nPost, bool cpuDevice) {
        Model m("init_steps");
        twoPopulations(m, 50, nPost, 2);
        addStatic(m, "S", MatrixType::Sparse, 0, init::FixedNumberPostWithReplacement(3));
        m.finalise();
        const Plan p = lowerModel(m);
        simt::Dialect d = dialect();
        d.cpuDevice = cpuDevice;
        return std::make_pair(simt::generate(p, d), codegen::initKernels(p));
    };
    const auto [prog, initKernels] = generateFor(300, true);
    ASSERT_FALSE(initKernels.empty());
    size_t launches = 0;
    for (size_t k : initKernels)
        launches += prog.kernels.at(k).size();
    EXPECT_GE(launches, 2u) << "a sparse group's build and the variables: more than one launch";
    EXPECT_EQ(prog.init.function, "sf_initialize_all");
    EXPECT_EQ(prog.init.kernels, initKernels);
    EXPECT_EQ(prog.init.localSize, kWg);
    EXPECT_FALSE(prog.init.tables.empty());
    // Each launch's dispatch, in plan order, a barrier after each.
    const size_t at = prog.source.find("SF_KERNEL sf_initialize_all(");
    ASSERT_NE(at, std::string::npos);
    size_t barriers = 0;
    for (size_t i = prog.source.find("SF_BARRIER();", at); i != std::string::npos;
         i = prog.source.find("SF_BARRIER();", i + 1))
        barriers++;
    EXPECT_EQ(barriers, launches);
    buildsOnOpenCl(prog);
    EXPECT_TRUE(generateFor(300, false).first.init.function.empty());
    const unsigned big = static_cast<unsigned>(simt::kStepsKernelMaxItems * 32 + 64);
    EXPECT_TRUE(generateFor(big, true).first.init.function.empty());
}

TEST(SimtPropagation, OverrideChoosesSpanAndThreadsPerSpike) {
    Model m("spanovr");
    twoPopulations(m, 40, 500, 2);
    addStatic(m, "Pre4", MatrixType::Dense);
    addStatic(m, "PreAuto", MatrixType::Dense);
    addStatic(m, "PostSp", MatrixType::Sparse, 0, init::FixedNumberPostWithReplacement(5));
    m.synapseGroup("Pre4").setNumThreadsPerSpike(4); // Auto + a count ⇒ presynaptic
    m.synapseGroup("PreAuto").setSpanType(SpanType::Presynaptic);
    m.synapseGroup("PostSp").setSpanType(SpanType::Postsynaptic);
    m.finalise();
    const Plan p = updateKernels(m);
    const auto pre4 = spanOf(p, "Pre4");
    EXPECT_EQ(pre4.strategy, Strategy::PreSpan);
    EXPECT_EQ(pre4.threadsPerSpike, 4u);
    // No count: about 64 synapses per work-item of a 500-synapse row.
    const auto preAuto = spanOf(p, "PreAuto");
    EXPECT_EQ(preAuto.strategy, Strategy::PreSpan);
    EXPECT_EQ(preAuto.threadsPerSpike, (500u + 63u) / 64u);
    EXPECT_EQ(spanOf(p, "PostSp").strategy, Strategy::PostSpan);
    // Groups with different overrides never share a merged table.
    EXPECT_NE(propagation(p, "Pre4", true).table, propagation(p, "PreAuto", true).table);
    buildsOnOpenCl(simt::generate(p, dialect()));
}

// Today's snippet rules let synapse code assign synapse variables only, so the bodies are
// given the other writes by hand: the rule must keep every variable written by one work-item.
TEST(SimtPropagation, WhatTheCodeWritesDecidesTheSafeStrategy) {
    Model m("writes");
    twoPopulations(m, 30, 40);
    addStatic(m, "D", MatrixType::Dense);
    addStatic(m, "S", MatrixType::Sparse, 0, init::FixedProbability(0.5));
    m.finalise();
    Plan p = updateKernels(m);
    auto choose = [&](const std::string& name, bool spikeSide, bool otherSide, bool shared) {
        KernelGroup& g = const_cast<KernelGroup&>(propagation(p, name, true));
        auto& b = std::get<PropagationBody>(g.body);
        b.writesSpikeSide = spikeSide;
        b.writesOtherSide = otherSide;
        b.writesShared = shared;
        return simt::chooseSpan({p, p.mergedGroups.at(g.table), g, kWg}, b);
    };
    for (const char* n : {"D", "S"}) {
        SCOPED_TRACE(n);
        // Presynaptic state: one work-item per spike owns it, even for a dense matrix.
        const auto pre = choose(n, true, false, false);
        EXPECT_EQ(pre.strategy, Strategy::PreSpan);
        EXPECT_EQ(pre.threadsPerSpike, 1u);
        EXPECT_EQ(choose(n, true, true, false).strategy, Strategy::Serial);
        EXPECT_EQ(choose(n, false, false, true).strategy, Strategy::Serial);
    }
    // Postsynaptic state: a dense post-span work-item owns its target; sparse has no owner.
    EXPECT_EQ(choose("D", false, true, false).strategy, Strategy::PostSpan);
    EXPECT_EQ(choose("S", false, true, false).strategy, Strategy::Serial);
    // Both serial programs build.
    choose("D", false, false, true);
    buildsOnOpenCl(simt::generate(p, dialect()));
}

TEST(SimtPropagation, OverrideBoundsAreModelErrors) {
    Model m("bounds");
    twoPopulations(m, 10, 10);
    addStatic(m, "S", MatrixType::Dense);
    EXPECT_THROW(m.synapseGroup("S").setNumThreadsPerSpike(SynapseGroup::kMaxThreadsPerSpike + 1),
                 ModelError);
    m.synapseGroup("S").setNumThreadsPerSpike(SynapseGroup::kMaxThreadsPerSpike);
    m.synapseGroup("S").setSpanType(SpanType::Postsynaptic);
    try {
        m.finalise();
        ADD_FAILURE() << "a postsynaptic span with threads per spike finalised";
    } catch (const ModelError& e) {
        EXPECT_NE(std::string(e.what()).find("'S'"), std::string::npos) << e.what();
    }
    m.synapseGroup("S").setNumThreadsPerSpike(0);
    EXPECT_NO_THROW(m.finalise());
}

TEST(SimtPropagation, StdpLearningIsOneWorkItemPerTargetSpikeDenseAndSparse) {
    Model m("stdp");
    twoPopulations(m, 30, 20, 2);
    const ParamValues stdp = {{"tauPlus", 20.0}, {"tauMinus", 20.0}, {"Aplus", 0.01},
                              {"Aminus", 0.012}, {"Wmin", 0.0},      {"Wmax", 1.0}};
    for (auto type : {MatrixType::Dense, MatrixType::Sparse}) {
        std::optional<SparseConnectivityInit> conn;
        if (type == MatrixType::Sparse) conn = init::FixedProbability(0.3);
        m.addSynapseGroup(matrixTypeName(type), type, 0, "Pre", "Post",
                          {models::STDPAllToAll(),
                           stdp,
                           {{"g", 0.5}},
                           {{"preTrace", 0.0}, {"preTraceT", -1e30}},
                           {{"postTrace", 0.0}, {"postTraceT", -1e30}}},
                          {models::ExpCurr(), {{"tau", 5.0}}, {}}, conn);
    }
    m.finalise();
    const Plan p = updateKernels(m);
    for (const char* n : {"Dense", "Sparse"}) {
        const auto learn = spanOf(p, n, false);
        EXPECT_EQ(learn.strategy, Strategy::PreSpan) << n;
        EXPECT_EQ(learn.threadsPerSpike, 1u) << n;
    }
    buildsOnOpenCl(simt::generate(p, dialect()));
}

TEST(SimtPropagation, AxonalAndDendriticDelaysBuildInFloatAndDouble) {
    for (Precision precision : {Precision::Float, Precision::Double}) {
        Model m("delays");
        m.setPrecision(precision);
        twoPopulations(m, 25, 33, 7);
        m.addSynapseGroup(
            "D", MatrixType::Dense, 3, "Pre", "Post",
            {models::StaticPulseDendriticDelay(), {}, {{"g", 1.0}, {"d", 2.0}}, {}, {}},
            {models::DeltaCurr(), {}, {}});
        m.addSynapseGroup(
            "S", MatrixType::Sparse, 2, "Pre", "Post",
            {models::StaticPulseDendriticDelay(), {}, {{"g", 1.0}, {"d", 1.0}}, {}, {}},
            {models::DeltaCurr(), {}, {}}, init::FixedNumberPostWithReplacement(4));
        m.synapseGroup("D").setMaxDendriticDelaySteps(4);
        m.synapseGroup("S").setMaxDendriticDelaySteps(3);
        m.finalise();
        const Plan p = updateKernels(m);
        EXPECT_EQ(spanOf(p, "D").strategy, Strategy::PostSpan);
        EXPECT_EQ(spanOf(p, "S").strategy, Strategy::PreSpan);
        buildsOnOpenCl(simt::generate(p, dialect()));
    }
}

} // namespace

namespace {

// The text of each presynaptic-update stage of `source`, from its comment to its #undef.
std::vector<std::string> presynapticStages(const std::string& source) {
    std::vector<std::string> out;
    const std::string mark = "// presynaptic update: ";
    for (size_t at = source.find(mark); at != std::string::npos; at = source.find(mark, at + 1)) {
        const size_t end = source.find("#undef", at);
        out.push_back(source.substr(at, end == std::string::npos ? end : end - at));
    }
    return out;
}

// The #define line of `hook` in a stage.
std::string hookDefinition(const std::string& stage, Hook hook) {
    const std::string mark = std::string("#define ") + hookName(hook) + "(";
    const size_t at = stage.find(mark);
    if (at == std::string::npos) return "";
    return stage.substr(at, stage.find('\n', at) - at);
}

// PoCL runs a work-group's work-items as loops (vectorised), so a missing atomic or barrier
// never shows as a wrong sum there, and no GPU runs the suite: these are checked on the printed
// program instead. A target may be hit by two work-items at once unless the work-item is the
// target (dense post-span) or walks every spike alone (serial): everywhere else each addition
// into a target, immediate or dendritically delayed, must be atomic; post-span stages stage each
// chunk of spikes between two work-group barriers and close the loop with one.
TEST(SimtPropagation, SharedTargetsAreAddedAtomicallyAndStagingIsFenced) {
    struct Case {
        const char* name;
        MatrixType type;
        unsigned rowLength; // sparse rows; 0: dense
        SpanType span;
        unsigned threadsPerSpike;
        bool cpuDevice;
    };
    const Case cases[] = {
        {"dense post-span", MatrixType::Dense, 0, SpanType::Auto, 0, false},
        {"sparse post-span", MatrixType::Sparse, 3 * kWg, SpanType::Auto, 0, false},
        {"sparse pre-span", MatrixType::Sparse, 10, SpanType::Auto, 0, false},
        {"dense pre-span x4", MatrixType::Dense, 0, SpanType::Presynaptic, 4, false},
        {"sparse post-span forced", MatrixType::Sparse, 10, SpanType::Postsynaptic, 0, false},
        {"dense serial", MatrixType::Dense, 0, SpanType::Auto, 0, true},
        {"sparse serial", MatrixType::Sparse, 3 * kWg, SpanType::Auto, 0, true},
    };
    for (const Case& c : cases)
        for (const bool dendritic : {false, true}) {
            const std::string what = std::string(c.name) + (dendritic ? ", dendritic" : "");
            Model m("race");
            twoPopulations(m, 50, 300, 2);
            std::optional<SparseConnectivityInit> conn;
            if (c.rowLength) conn = init::FixedNumberPostWithReplacement(c.rowLength);
            if (dendritic) {
                m.addSynapseGroup(
                    "S", c.type, 0, "Pre", "Post",
                    {models::StaticPulseDendriticDelay(), {}, {{"g", 1.0}, {"d", 2.0}}, {}, {}},
                    {models::DeltaCurr(), {}, {}}, conn);
                m.synapseGroup("S").setMaxDendriticDelaySteps(4);
            } else {
                addStatic(m, "S", c.type, 0, conn);
            }
            m.synapseGroup("S").setSpanType(c.span);
            if (c.threadsPerSpike) m.synapseGroup("S").setNumThreadsPerSpike(c.threadsPerSpike);
            m.finalise();
            const Plan p = updateKernels(m);
            simt::Dialect d = dialect();
            d.cpuDevice = c.cpuDevice;
            const simt::Program prog = simt::generate(p, d);
            const auto stages = presynapticStages(prog.source);
            ASSERT_EQ(stages.size(), 1u) << what;
            const std::string& stage = stages[0];
            const bool serial = stage.find("presynaptic update: serial") != std::string::npos;
            const bool postSpan = stage.find("presynaptic update: post-span") != std::string::npos;
            EXPECT_EQ(serial, c.cpuDevice) << what;
            EXPECT_EQ(postSpan, !c.cpuDevice && c.threadsPerSpike == 0 &&
                                    (c.type == MatrixType::Dense || c.rowLength >= kWg ||
                                     c.span == SpanType::Postsynaptic))
                << what;
            const bool owned = serial || (postSpan && c.type == MatrixType::Dense);
            const Hook hook = dendritic ? Hook::AddToPostDelay : Hook::AddToPost;
            const std::string def = hookDefinition(stage, hook);
            ASSERT_FALSE(def.empty()) << what;
            EXPECT_EQ(def.find("sf_atomic_add_scalar") != std::string::npos, !owned)
                << what << ": " << def;
            if (postSpan) {
                const std::string staging =
                    "SF_BARRIER();\nif (sfLocalId < sfNc) sfSpkL[sfLocalId] "
                    "= sfSpk[sfC + sfLocalId];\nSF_BARRIER();\n";
                EXPECT_NE(stage.find(staging), std::string::npos) << what << ":\n" << stage;
                EXPECT_NE(stage.rfind("SF_BARRIER();\n"), stage.find(staging) + staging.size() -
                                                              std::string("SF_BARRIER();\n").size())
                    << what << ": no closing barrier after the spike loop";
            }
        }
}

} // namespace
