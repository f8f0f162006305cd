// The SIMT neuron update and propagation strategies against the CPU backend: the same model run
// on cpu and opencl. Inputs are deterministic (a spike pattern from the step count, neuron and
// batch element) and weights integer-valued, so every sum is exact whatever the order in which
// a strategy adds: spikes, inSyn and V must be bit-identical. STDP weights pass through exp()
// and are compared within a tolerance.
#include "backend_fixture.hpp"
#include "spikeforge/models.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

using namespace spikeforge;

namespace {

bool openclUsable(std::string& why) {
    for (const auto& b : availableBackends())
        if (b.name == "opencl") {
            if (!b.usable) why = "opencl backend not usable here: " + b.reason;
            return b.usable;
        }
    why = "this build has no opencl backend";
    return false;
}

#define SKIP_WITHOUT_OPENCL()                                                                      \
    do {                                                                                           \
        std::string why;                                                                           \
        if (!openclUsable(why)) GTEST_SKIP() << why;                                               \
    } while (0)

// Spikes when (steps + 7 id + 3 batch) mod period is 0: every neuron and batch element has its
// own phase, and nothing random or inexact decides a spike.
NeuronModel pattern() {
    NeuronModel n;
    n.name = "Pattern";
    n.params = {"period"};
    n.vars = {{"n"}};
    n.simCode = "n += 1.0;";
    n.thresholdConditionCode = "fmod(n + 7.0 * id + 3.0 * batch, period) == 0.0";
    return n;
}

// Integrates its input exactly (integers) and spikes every `thr` of it.
NeuronModel counter() {
    NeuronModel n;
    n.name = "Counter";
    n.params = {"thr"};
    n.vars = {{"V"}};
    n.simCode = "V += Isyn;";
    n.thresholdConditionCode = "V >= thr";
    n.resetCode = "V -= thr;";
    return n;
}

struct Result {
    std::vector<uint32_t> bits; // inSyn of every synapse group, then V, bit patterns
    std::vector<SpikeEvent> preSpikes, postSpikes;
    std::vector<uint32_t> rowLengths;
};

// Pushes integer values offset … offset + modulus - 1 varying with the synapse index.
template <typename T = float>
void integerWeights(Simulation& sim, const std::string& sg, const std::string& var = "g",
                    unsigned modulus = 5, unsigned offset = 1) {
    sim.pull(sg, var);
    auto g = sim.view<T>(sg, var);
    for (size_t k = 0; k < g.size(); k++)
        g[k] = static_cast<T>((k * 7 + k / 3) % modulus + offset);
    sim.push(sg, var);
}

void appendBits(Result& r, Simulation& sim, const std::string& group, const std::string& var) {
    sim.pull(group, var);
    for (float x : sim.view<float>(group, var))
        r.bits.push_back(std::bit_cast<uint32_t>(x));
}

Model& network(Model& m, unsigned batch, unsigned nPre = 90, unsigned nPost = 70) {
    m.setBatchSize(batch);
    m.setSeed(11);
    m.addNeuronGroup("Pre", nPre, pattern(), {{"period", 5.0}}, {{"n", 0.0}});
    m.addNeuronGroup("Post", nPost, counter(), {{"thr", 300.0}}, {{"V", 0.0}});
    m.neuronGroup("Pre").setSpikeRecording(true);
    m.neuronGroup("Post").setSpikeRecording(true);
    return m;
}

const char* const kSpans[] = {"SpanAuto", "SpanPre3", "SpanPost"};

// Three static synapse groups Pre → Post of `matrix`, one per span setting.
void addSpanGroups(Model& m, MatrixType matrix, unsigned delay = 0) {
    for (const char* name : kSpans) {
        std::optional<SparseConnectivityInit> conn;
        if (matrix == MatrixType::Sparse) conn = init::FixedProbability(0.3);
        auto& sg = m.addSynapseGroup(name, matrix, delay, "Pre", "Post",
                                     {models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}},
                                     {models::DeltaCurr(), {}, {}}, conn);
        if (std::string(name) == "SpanPre3") sg.setNumThreadsPerSpike(3);
        if (std::string(name) == "SpanPost") sg.setSpanType(SpanType::Postsynaptic);
    }
}

Result runStatic(const std::string& backend, MatrixType matrix, unsigned batch, unsigned delay) {
    Model m("simtprop");
    network(m, batch);
    addSpanGroups(m, matrix, delay);
    BackendPreferences prefs;
    prefs.backend = backend;
    Simulation sim(m, prefs);
    for (const char* sg : kSpans)
        integerWeights(sim, sg);
    sim.setRecordingWindow(60);
    sim.run(60);
    sim.pullRecording();
    Result r;
    for (const char* sg : kSpans) {
        appendBits(r, sim, sg, "inSyn");
        if (matrix == MatrixType::Sparse) {
            sim.pullConnectivity(sg);
            const auto rl = sim.rowLengths(sg);
            r.rowLengths.insert(r.rowLengths.end(), rl.begin(), rl.end());
        }
    }
    appendBits(r, sim, "Post", "V");
    r.preSpikes = sim.spikes("Pre");
    r.postSpikes = sim.spikes("Post");
    return r;
}

void expectSame(const Result& cpu, const Result& ocl) {
    EXPECT_EQ(cpu.rowLengths, ocl.rowLengths);
    EXPECT_EQ(cpu.bits, ocl.bits);
    EXPECT_EQ(cpu.preSpikes, ocl.preSpikes);
    EXPECT_EQ(cpu.postSpikes, ocl.postSpikes);
    // The model must exercise propagation: inputs reach the targets and make them spike.
    EXPECT_GT(cpu.preSpikes.size(), 100u);
    EXPECT_GT(cpu.postSpikes.size(), 20u);
}

TEST(SimtPropagationVsCpu, DenseEveryStrategyBatch1And7BitIdentical) {
    SKIP_WITHOUT_OPENCL();
    for (unsigned batch : {1u, 7u}) {
        SCOPED_TRACE("batch " + std::to_string(batch));
        expectSame(runStatic("cpu", MatrixType::Dense, batch, 0),
                   runStatic("opencl", MatrixType::Dense, batch, 0));
    }
}

TEST(SimtPropagationVsCpu, SparseEveryStrategyBatch1And7BitIdentical) {
    SKIP_WITHOUT_OPENCL();
    for (unsigned batch : {1u, 7u}) {
        SCOPED_TRACE("batch " + std::to_string(batch));
        expectSame(runStatic("cpu", MatrixType::Sparse, batch, 0),
                   runStatic("opencl", MatrixType::Sparse, batch, 0));
    }
}

TEST(SimtPropagationVsCpu, AxonalDelayBitIdentical) {
    SKIP_WITHOUT_OPENCL();
    expectSame(runStatic("cpu", MatrixType::Sparse, 7, 3),
               runStatic("opencl", MatrixType::Sparse, 7, 3));
}

// Dendritic delays 0 … 3 steps (integers per synapse) into a ring of 4, dense and sparse.
Result runDendritic(const std::string& backend, unsigned batch) {
    Model m("simtden");
    network(m, batch);
    for (MatrixType matrix : {MatrixType::Dense, MatrixType::Sparse}) {
        std::optional<SparseConnectivityInit> conn;
        if (matrix == MatrixType::Sparse) conn = init::FixedNumberPostWithReplacement(9);
        m.addSynapseGroup(
             matrixTypeName(matrix), matrix, 1, "Pre", "Post",
             {models::StaticPulseDendriticDelay(), {}, {{"g", 1.0}, {"d", 0.0}}, {}, {}},
             {models::DeltaCurr(), {}, {}}, conn)
            .setMaxDendriticDelaySteps(4);
    }
    BackendPreferences prefs;
    prefs.backend = backend;
    Simulation sim(m, prefs);
    Result r;
    for (const char* sg : {"Dense", "Sparse"}) {
        integerWeights(sim, sg);
        integerWeights<uint8_t>(sim, sg, "d", 4, 0);
    }
    sim.setRecordingWindow(50);
    sim.run(50);
    sim.pullRecording();
    for (const char* sg : {"Dense", "Sparse"}) {
        appendBits(r, sim, sg, "inSyn");
        appendBits(r, sim, sg, "denDelay");
    }
    appendBits(r, sim, "Post", "V");
    r.preSpikes = sim.spikes("Pre");
    r.postSpikes = sim.spikes("Post");
    return r;
}

TEST(SimtPropagationVsCpu, DendriticDelaysBitIdentical) {
    SKIP_WITHOUT_OPENCL();
    for (unsigned batch : {1u, 7u}) {
        SCOPED_TRACE("batch " + std::to_string(batch));
        expectSame(runDendritic("cpu", batch), runDendritic("opencl", batch));
    }
}

// STDP (all-to-all traces) on dense and sparse, onto a target whose spikes ignore its input
// (so learning never feeds back into the spikes): weights agree within 1e-5 (relative), spikes
// exactly.
std::vector<float> runStdp(const std::string& backend, unsigned batch,
                           std::vector<SpikeEvent>& post) {
    Model m("simtstdp");
    network(m, batch);
    m.addNeuronGroup("Learn", 50, pattern(), {{"period", 7.0}}, {{"n", 0.0}});
    m.neuronGroup("Learn").setSpikeRecording(true);
    const ParamValues stdp = {{"tauPlus", 20.0}, {"tauMinus", 20.0}, {"Aplus", 0.01},
                              {"Aminus", 0.012}, {"Wmin", 0.0},      {"Wmax", 10.0}};
    for (MatrixType matrix : {MatrixType::Dense, MatrixType::Sparse}) {
        std::optional<SparseConnectivityInit> conn;
        if (matrix == MatrixType::Sparse) conn = init::FixedProbability(0.4);
        m.addSynapseGroup(matrixTypeName(matrix), matrix, 0, "Pre", "Learn",
                          {models::STDPAllToAll(),
                           stdp,
                           {{"g", 5.0}},
                           {{"preTrace", 0.0}, {"preTraceT", -1e30}},
                           {{"postTrace", 0.0}, {"postTraceT", -1e30}}},
                          {models::ExpCurr(), {{"tau", 5.0}}, {}}, conn);
    }
    BackendPreferences prefs;
    prefs.backend = backend;
    Simulation sim(m, prefs);
    sim.setRecordingWindow(80);
    sim.run(80);
    sim.pullRecording();
    post = sim.spikes("Learn");
    std::vector<float> g;
    for (const char* sg : {"Dense", "Sparse"}) {
        sim.pull(sg, "g");
        for (float x : sim.view<float>(sg, "g"))
            g.push_back(x);
    }
    return g;
}

TEST(SimtPropagationVsCpu, StdpDenseAndSparseWithinTolerance) {
    SKIP_WITHOUT_OPENCL();
    for (unsigned batch : {1u, 7u}) {
        SCOPED_TRACE("batch " + std::to_string(batch));
        std::vector<SpikeEvent> cpuPost, oclPost;
        const auto cpu = runStdp("cpu", batch, cpuPost);
        const auto ocl = runStdp("opencl", batch, oclPost);
        EXPECT_EQ(cpuPost, oclPost);
        ASSERT_EQ(cpu.size(), ocl.size());
        size_t changed = 0;
        for (size_t k = 0; k < cpu.size(); k++) {
            EXPECT_NEAR(ocl[k], cpu[k], 1e-5 * std::max(1.0f, std::fabs(cpu[k]))) << k;
            changed += cpu[k] != 5.0f && cpu[k] != 0.0f;
        }
        EXPECT_GT(changed, cpu.size() / 10); // learning happened
    }
}

} // namespace
