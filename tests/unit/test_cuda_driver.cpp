// Built only with the cuda backend (file name test_cuda_*: CMake leaves it out otherwise).
// The driver-API side of the cuda backend as far as it runs without a GPU: loading the driver
// (a missing library, a library that is not a driver), error messages, device selection, the
// cubin cache entries, the cudaGraphSteps option, and what availableBackends and makeBackend say
// on this machine, checked against the machine itself (with a driver and a GPU the backend suite
// in tests/backend runs everything on cuda instead).
#include "backends/backend.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_device.hpp"
#include "backends/cuda/cuda_driver.hpp"
#include "spikeforge/errors.hpp"
#include "spikeforge/models.hpp"
#include "spikeforge/simulation.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

using namespace spikeforge;

namespace {

// The message of the exception E that f throws ("" and a test failure when it throws none).
template <typename E, typename F> std::string errorOf(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    }
    ADD_FAILURE() << "no exception of the expected type";
    return {};
}

// Whether this machine has a loadable NVIDIA driver, asked independently of the backend.
bool driverLibraryPresent() {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h) dlclose(h);
    return h != nullptr;
}

const BackendStatus& cudaEntry(const std::vector<BackendStatus>& all) {
    for (const auto& b : all)
        if (b.name == "cuda") return b;
    throw std::runtime_error("availableBackends lists no cuda");
}

} // namespace

TEST(CudaDriver, MissingLibraryNamesItAndSaysThereIsNoDriver) {
    const std::string msg =
        errorOf<BackendError>([] { cuda::DriverApi::load("libspikeforge-no-such-driver.so.1"); });
    EXPECT_NE(msg.find("libspikeforge-no-such-driver.so.1 not found: no NVIDIA driver"),
              std::string::npos)
        << msg;
}

TEST(CudaDriver, LibraryWithoutTheDriverApiNamesTheFirstMissingSymbol) {
    // libm is on every glibc system and has none of the driver's entry points.
    const std::string msg = errorOf<BackendError>([] { cuda::DriverApi::load("libm.so.6"); });
    EXPECT_NE(msg.find("libm.so.6 lacks cuInit"), std::string::npos) << msg;
}

TEST(CudaDriver, ErrorMessageWithoutADriverGivesTheNumber) {
    EXPECT_EQ(cuda::errorMessage(nullptr, 100, "cuInit", "device 0"),
              "cuInit failed: CUresult 100 (device 0)");
    EXPECT_EQ(cuda::errorMessage(nullptr, 2, "cuMemAlloc_v2"), "cuMemAlloc_v2 failed: CUresult 2");
}

TEST(CudaDriver, StatusAgreesWithTheMachine) {
    const std::string status = cuda::driverStatus();
    if (!driverLibraryPresent()) {
        EXPECT_NE(status.find("libcuda.so.1 not found: no NVIDIA driver"), std::string::npos)
            << status;
        const std::string msg = errorOf<BackendError>([] { cuda::driver(); });
        EXPECT_NE(msg.find("libcuda.so.1 not found"), std::string::npos) << msg;
    } else if (!status.empty()) {
        // A driver without a usable GPU (a container without the device): the reason says so.
        EXPECT_NE(status.find("CUDA"), std::string::npos) << status;
    }
}

TEST(CudaBackendStatus, AvailableBackendsReportsCudaWithItsReason) {
    const BackendStatus& cuda = cudaEntry(availableBackends());
    const std::string why = cuda::cudaStatus();
    EXPECT_EQ(cuda.usable, why.empty());
    EXPECT_EQ(cuda.reason, why);
    if (!driverLibraryPresent()) {
        EXPECT_FALSE(cuda.usable);
        EXPECT_NE(cuda.reason.find("libcuda.so.1 not found"), std::string::npos) << cuda.reason;
    }
}

TEST(CudaBackendStatus, MakeBackendNamesTheReasonWhenCudaCannotRun) {
    const std::string why = cuda::cudaStatus();
    if (why.empty()) GTEST_SKIP() << "cuda is usable here: there is no reason to report";
    BackendPreferences prefs;
    prefs.backend = "cuda";
    const std::string msg = errorOf<BackendError>([&] { backends::makeBackend(prefs); });
    EXPECT_NE(msg.find(why), std::string::npos) << msg;
}

TEST(CudaDevice, SelectDeviceByIndex) {
    EXPECT_EQ(cuda::selectDevice("", 2), 0);
    EXPECT_EQ(cuda::selectDevice("1", 2), 1);
    const std::string range = errorOf<BackendError>([] { cuda::selectDevice("2", 2); });
    EXPECT_NE(range.find("there are 2 CUDA devices (indices 0 to 1)"), std::string::npos) << range;
    const std::string one = errorOf<BackendError>([] { cuda::selectDevice("3", 1); });
    EXPECT_NE(one.find("there is 1 CUDA device"), std::string::npos) << one;
    const std::string text = errorOf<ModelError>([] { cuda::selectDevice("H200", 1); });
    EXPECT_NE(text.find("'H200'"), std::string::npos) << text;
    EXPECT_THROW(cuda::selectDevice("-1", 4), ModelError);
    EXPECT_THROW(cuda::selectDevice("", 0), BackendError);
}

TEST(CudaCubinCache, EntryRoundTripsAndRejectsDamage) {
    const std::string key = cuda::cubinKey("kernel source", {"-O3"}, 9, 0, 13, 0);
    const std::string cubin("\x7f"
                            "ELF\0binary\n\xff",
                            14);
    const std::string entry = cuda::cubinEntry(key, cubin);
    EXPECT_EQ(cuda::cubinFromEntry(entry, key), cubin);
    const std::string otherKey = cuda::cubinKey("kernel source", {"-O3"}, 8, 0, 13, 0);
    EXPECT_NE(otherKey, key); // the architecture is part of the key
    EXPECT_EQ(cuda::cubinFromEntry(entry, otherKey), "");
    EXPECT_EQ(cuda::cubinFromEntry(entry.substr(0, entry.size() - 1), key), ""); // truncated
    EXPECT_EQ(cuda::cubinFromEntry(entry + "x", key), "");                       // trailing
    std::string flipped = entry;
    flipped.back() ^= 1;
    EXPECT_EQ(cuda::cubinFromEntry(flipped, key), ""); // checksum
    EXPECT_EQ(cuda::cubinFromEntry("", key), "");
}

TEST(CudaCubinCache, KeyCoversSourceOptionsAndNvrtcVersion) {
    const std::string base = cuda::cubinKey("s", {"-a"}, 9, 0, 13, 0);
    EXPECT_EQ(base.size(), 64u);
    EXPECT_EQ(cuda::cubinKey("s", {"-a"}, 9, 0, 13, 0), base);
    EXPECT_NE(cuda::cubinKey("t", {"-a"}, 9, 0, 13, 0), base);
    EXPECT_NE(cuda::cubinKey("s", {"-b"}, 9, 0, 13, 0), base);
    EXPECT_NE(cuda::cubinKey("s", {"-a"}, 9, 0, 12, 8), base);
    EXPECT_NE(cuda::cubinKey("s", {"-a"}, 9, 0, 13, 1), base);
}

// Compute capabilities that differ only in the minor version get their own binaries (a cubin
// for sm_80 does not load on every sm_86 part, and vice versa), and a capability's digits are
// never read two ways (major 1, minor 10 is not major 11, minor 0).
TEST(CudaCubinCache, KeyCoversTheComputeCapabilityIncludingItsMinorVersion) {
    const std::string sm80 = cuda::cubinKey("s", {"-a"}, 8, 0, 13, 0);
    EXPECT_NE(cuda::cubinKey("s", {"-a"}, 8, 6, 13, 0), sm80);
    EXPECT_NE(cuda::cubinKey("s", {"-a"}, 8, 9, 13, 0), sm80);
    EXPECT_NE(cuda::cubinKey("s", {"-a"}, 9, 0, 13, 0), sm80);
    EXPECT_NE(cuda::cubinKey("s", {"-a"}, 1, 10, 13, 0), cuda::cubinKey("s", {"-a"}, 11, 0, 13, 0));
}

TEST(CudaGraphSteps, RefusedForOtherBackends) {
    BackendPreferences prefs;
    prefs.backend = "cpu";
    prefs.cudaGraphSteps = 5;
    const std::string msg = errorOf<ModelError>([&] { backends::makeBackend(prefs); });
    EXPECT_NE(msg.find("cudaGraphSteps (5) applies to the cuda backend only"), std::string::npos)
        << msg;
}

TEST(CudaGraphSteps, BoundedForCuda) {
    BackendPreferences prefs;
    prefs.backend = "cuda";
    prefs.cudaGraphSteps = kMaxCudaGraphSteps + 1;
    const std::string msg = errorOf<ModelError>([&] { backends::makeBackend(prefs); });
    EXPECT_NE(msg.find("must be at most " + std::to_string(kMaxCudaGraphSteps)), std::string::npos)
        << msg;
    // The bound itself is accepted: what remains is only whether cuda runs here.
    prefs.cudaGraphSteps = kMaxCudaGraphSteps;
    try {
        backends::makeBackend(prefs);
    } catch (const ModelError& e) {
        ADD_FAILURE() << "the largest allowed value was refused: " << e.what();
    } catch (const BackendError& e) {
        EXPECT_FALSE(cuda::cudaStatus().empty()) << e.what();
    }
}

// ---- on a GPU: CUDA graphs change nothing but the number of launches ----

namespace {

struct NetworkRun {
    std::vector<SpikeEvent> input, output; // recorded spikes of P and X
    std::vector<float> v;                  // [mV] X's membrane at the end
    uint64_t steps = 0;
};

// Poisson sources (random streams keyed by the step argument) drive LIF neurons through sparse
// synapses, so a step run with another step's arguments, or a launch lost from a graph, changes
// the spikes. `graphSteps` = BackendPreferences::cudaGraphSteps.
NetworkRun runNetwork(uint32_t graphSteps) {
    Model m("cuda_graphs");
    m.setDT(0.1);
    m.setSeed(1234);
    m.addNeuronGroup("P", 400, models::Poisson(), {{"rate", 30.0}}, {{"timeStepToSpike", 0.0}})
        .setSpikeRecording(true);
    m.addNeuronGroup("X", 100, models::LIF(),
                     {{"C", 1.0},
                      {"TauM", 20.0},
                      {"Vrest", -70.0},
                      {"Vreset", -70.0},
                      {"Vthresh", -50.0},
                      {"Ioffset", 0.5},
                      {"TauRefrac", 2.0}},
                     {{"V", -65.0}, {"RefracTime", 0.0}})
        .setSpikeRecording(true);
    m.addSynapseGroup("PX", MatrixType::Sparse, 0, "P", "X",
                      {models::StaticPulseConstantWeight(), {{"g", 0.4}}, {}, {}, {}},
                      {models::ExpCurr(), {{"tau", 5.0}}, {}}, init::FixedProbability(0.1));
    BackendPreferences prefs;
    prefs.backend = "cuda";
    prefs.cudaGraphSteps = graphSteps;
    prefs.errorCheckInterval = 230; // pieces that graphs of 64 steps do not divide
    Simulation sim(m, prefs);
    NetworkRun r;
    r.steps = 1000;
    sim.setRecordingWindow(r.steps);
    sim.run(r.steps);
    sim.pullRecording();
    r.input = sim.spikes("P");
    r.output = sim.spikes("X");
    sim.pull("X", "V");
    const auto v = sim.view<float>("X", "V");
    r.v.assign(v.begin(), v.end());
    return r;
}

} // namespace

TEST(CudaGraphs, ReplayedStepsEqualPlainLaunchesBitForBit) {
    if (const std::string why = cuda::cudaStatus(); !why.empty())
        GTEST_SKIP() << "needs a CUDA GPU: " << why;
    const NetworkRun plain = runNetwork(0);
    // Poisson at 30 Hz over 100 ms: ~1200 input spikes; the test means nothing without them.
    ASSERT_GT(plain.input.size(), 600u);
    ASSERT_FALSE(plain.output.empty());
    for (const uint32_t graphSteps : {64u, 7u}) {
        SCOPED_TRACE("cudaGraphSteps " + std::to_string(graphSteps));
        const uint64_t before = cuda::graphLaunches();
        const NetworkRun graphs = runNetwork(graphSteps);
        // Graphs were really used (no silent fall-back to plain launches): at least one per
        // full graph of steps.
        EXPECT_GE(cuda::graphLaunches() - before, plain.steps / graphSteps);
        EXPECT_EQ(graphs.input, plain.input);
        EXPECT_EQ(graphs.output, plain.output);
        EXPECT_EQ(graphs.v, plain.v);
    }
}
