// Quick builds (BackendPreferences::optimisation): the test suite builds its models with the quick
// flags (cpu -Og; CMakeLists.txt sets SPIKEFORGE_QUICK_BUILD=1), so this file keeps the release
// flags covered. A network with every kind of arithmetic the engine
// generates (exponential decay, random draws, sparse propagation, a custom-update reduction) is
// built once with Release and once with Quick on every backend: the spikes and every variable
// must be the same bit for bit, since neither form contracts or reassociates. Also: the two are
// different binaries (neither reuses the other's cache entry) and the environment switch refuses
// a value it does not know.
#include "backend_fixture.hpp"
#include "spikeforge/errors.hpp"
#include "spikeforge/models.hpp"

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

using namespace spikeforge;

namespace {

using O = BackendPreferences::Optimisation;

// A fresh cache directory per call, removed by the destructor.
struct TempDir {
    std::string path;
    TempDir() {
        static int counter = 0;
        const auto dir = std::filesystem::temp_directory_path() /
                         ("sf_quick_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
        std::filesystem::create_directories(dir);
        std::filesystem::permissions(dir, std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::replace);
        path = dir.string();
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

class QuickBuildTest : public sftest::BackendTest {};

constexpr unsigned kBatch = 3;
constexpr uint64_t kSteps = 300; // 30 ms

void buildNetwork(Model& m) {
    m.setDT(0.1);
    m.setBatchSize(kBatch);
    m.setSeed(11);
    m.addNeuronGroup("Input", 400, models::Poisson(), {{"rate", 40.0}}, {{"timeStepToSpike", 0.0}})
        .setSpikeRecording(true);
    m.addNeuronGroup("Cells", 300, models::LIF(),
                     {{"C", 1.0},
                      {"TauM", 20.0},
                      {"Vrest", -65.0},
                      {"Vreset", -65.0},
                      {"Vthresh", -50.0},
                      {"Ioffset", 0.1},
                      {"TauRefrac", 2.0}},
                     {{"V", init::Normal(-58.0, 4.0)}, {"RefracTime", 0.0}})
        .setSpikeRecording(true);
    m.addSynapseGroup("InputToCells", MatrixType::Sparse, 0, "Input", "Cells",
                      {models::StaticPulse(), {}, {{"g", init::Uniform(0.5, 1.5)}}, {}, {}},
                      {models::ExpCurr(), {{"tau", 5.0}}, {}}, init::FixedProbability(0.1));
    m.addCurrentSource("Noise", models::GaussianNoise(), "Cells", {{"mean", 0.0}, {"sd", 0.5}},
                       {});
    CustomUpdateModel peak;
    peak.name = "PeakV";
    peak.vars = {{"peak", "scalar", CustomUpdateVarAccess::ReduceBatchMax}};
    peak.varRefs = {{"v", "scalar", CustomUpdateVarAccess::ReadOnly}};
    peak.updateCode = "peak = v;";
    m.addCustomUpdate("Peak", "Reduce", peak, {}, {{"peak", 0.0}}, {{"v", {"Cells", "V"}}});
}

struct Outcome {
    std::vector<SpikeEvent> input, cells;
    std::vector<uint32_t> v, isyn, peak; // bit patterns
    bool cacheHit = false;
};

std::vector<uint32_t> bits(Simulation& sim, const std::string& group, const std::string& var) {
    sim.pull(group, var);
    std::vector<uint32_t> out;
    for (float x : sim.view<float>(group, var))
        out.push_back(std::bit_cast<uint32_t>(x));
    return out;
}

Outcome run(BackendPreferences prefs, O optimisation) {
    prefs.optimisation = optimisation;
    Model m("quick_build");
    buildNetwork(m);
    Simulation sim(m, prefs);
    Outcome o;
    o.cacheHit = sim.buildInfo().cacheHit;
    sim.setRecordingWindow(kSteps);
    sim.run(kSteps);
    sim.customUpdate("Reduce");
    sim.pullRecording();
    o.input = sim.spikes("Input");
    o.cells = sim.spikes("Cells");
    o.v = bits(sim, "Cells", "V");
    o.isyn = bits(sim, "InputToCells", "inSyn");
    o.peak = bits(sim, "Peak", "peak");
    return o;
}

// Sets an environment variable for one scope.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : m_name(name) {
        if (const char* old = std::getenv(name)) m_old = old, m_had = true;
        ::setenv(name, value, 1);
    }
    ~ScopedEnv() {
        if (m_had)
            ::setenv(m_name.c_str(), m_old.c_str(), 1);
        else
            ::unsetenv(m_name.c_str());
    }

private:
    std::string m_name, m_old;
    bool m_had = false;
};

} // namespace

TEST_P(QuickBuildTest, ReleaseAndQuickBuildsComputeTheSameBits) {
    TempDir cache;
    BackendPreferences p = prefs();
    p.cacheDir = cache.path;
    const Outcome release = run(p, O::Release);
    const Outcome quick = run(p, O::Quick);
    EXPECT_FALSE(release.cacheHit);
    EXPECT_FALSE(quick.cacheHit) << "the quick build reused the release binary";
    // The network is live: both populations fire and the synapses carry input.
    ASSERT_GT(release.input.size(), 1000u);
    ASSERT_GT(release.cells.size(), 50u);
    EXPECT_EQ(release.input, quick.input);
    EXPECT_EQ(release.cells, quick.cells);
    EXPECT_EQ(release.v, quick.v);
    EXPECT_EQ(release.isyn, quick.isyn);
    EXPECT_EQ(release.peak, quick.peak);
    // Auto follows the environment: with SPIKEFORGE_QUICK_BUILD=0 the release binary is reused.
    ScopedEnv env("SPIKEFORGE_QUICK_BUILD", "0");
    BackendPreferences autoPrefs = p;
    autoPrefs.optimisation = O::Auto;
    Model m("quick_build");
    buildNetwork(m);
    Simulation again(m, autoPrefs);
    if (p.backend == "cpu") {
        EXPECT_TRUE(again.buildInfo().cacheHit);
    }
}

SF_INSTANTIATE_BACKEND_TESTS(QuickBuildTest);

TEST(QuickBuild, AnUnknownEnvironmentValueIsAClearError) {
    ScopedEnv env("SPIKEFORGE_QUICK_BUILD", "yes");
    TempDir cache;
    BackendPreferences p;
    p.cacheDir = cache.path;
    Model m("quick_build");
    buildNetwork(m);
    sftest::expectError<ModelError>([&] { Simulation sim(m, p); },
                                    {"SPIKEFORGE_QUICK_BUILD", "'yes'", "must be 1"});
    p.optimisation = O::Release; // an explicit choice does not read the environment
    EXPECT_NO_THROW(Simulation sim(m, p));
}
