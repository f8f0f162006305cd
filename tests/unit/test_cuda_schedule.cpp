// Built only with the cuda backend (file name test_cuda_*: CMake leaves it out otherwise).
// CudaDevice::runSequence without a GPU, on a mock driver compiled by the test (as in
// test_cuda_device.cpp, extended with device-to-device copies that stream capture records as
// memcpy nodes and a graph launch performs): a schedule-shaped sequence (reset copy, steps,
// custom update) is captured, instantiated once and updated in place on every later replay;
// the graph-steps cap cuts it into pieces; a failed capture falls back to plain launches.
#include "backends/cuda/cuda_device.hpp"
#include "backends/cuda/cuda_driver.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

using namespace spikeforge;

namespace {

constexpr const char* kMockSource = R"MOCK(
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>
extern "C" {
typedef int R;
// One operation as it ran: a launch (fn set) or a device-to-device copy.
struct Op { const char* fn; uint64_t step, rng; unsigned long long dst, src; size_t bytes; int graph; };
struct G { std::vector<Op> ops; };
static std::vector<Op> g_log, g_capture;
static bool g_capturing = false, g_failCapture = false;
static int g_inst = 0, g_updates = 0, g_memcpyNodes = 0, g_dummy = 0;
static void copy(const Op& o) { std::memcpy((void*)(uintptr_t)o.dst, (const void*)(uintptr_t)o.src, o.bytes); }
// Events carry the mock clock [ms] when recorded: every launch and copy "runs" for a fixed
// time on it, so elapsed times are known; g_notReady makes queries report unfinished work.
struct Ev { double t; };
static double g_clock = 0.0;
static bool g_notReady = false;
static int g_events = 0, g_eventsMade = 0, g_eventSyncs = 0;
R cuInit(unsigned) { return 0; }
R cuDriverGetVersion(int* v) { *v = 12040; return 0; }
R cuGetErrorName(R, const char** s) { *s = "CUDA_ERROR_MOCK"; return 0; }
R cuGetErrorString(R, const char** s) { *s = "mock error"; return 0; }
R cuDeviceGetCount(int* c) { *c = 1; return 0; }
R cuDeviceGet(int* d, int o) { *d = o; return 0; }
R cuDeviceGetName(char* n, int len, int) { std::strncpy(n, "Mock GPU", len); return 0; }
R cuDeviceGetAttribute(int* v, int a, int) {
    switch (a) {
    case 1: *v = 1024; return 0;
    case 5: *v = 2147483647; return 0;
    case 6: *v = 65535; return 0;
    case 16: *v = 4; return 0;
    case 75: *v = 9; return 0;
    case 76: *v = 0; return 0;
    }
    return 1;
}
R cuDevicePrimaryCtxRetain(void** c, int) { *c = &g_dummy; return 0; }
R cuDevicePrimaryCtxRelease_v2(int) { return 0; }
R cuCtxSetCurrent(void*) { return 0; }
R cuMemGetInfo_v2(size_t* f, size_t* t) { *f = size_t(1) << 30; *t = size_t(2) << 30; return 0; }
R cuMemAlloc_v2(unsigned long long* p, size_t n) { *p = (uintptr_t)std::malloc(n); return 0; }
R cuMemFree_v2(unsigned long long p) { std::free((void*)(uintptr_t)p); return 0; }
R cuMemHostAlloc(void** p, size_t n, unsigned) { *p = std::malloc(n); return 0; }
R cuMemFreeHost(void* p) { std::free(p); return 0; }
R cuMemsetD8Async(unsigned long long d, unsigned char v, size_t n, void*) {
    std::memset((void*)(uintptr_t)d, v, n); return 0; }
R cuMemsetD32Async(unsigned long long d, unsigned v, size_t n, void*) {
    for (size_t i = 0; i < n; i++) ((uint32_t*)(uintptr_t)d)[i] = v;
    return 0; }
R cuMemcpyHtoDAsync_v2(unsigned long long d, const void* s, size_t n, void*) {
    std::memcpy((void*)(uintptr_t)d, s, n); return 0; }
R cuMemcpyDtoDAsync_v2(unsigned long long d, unsigned long long s, size_t n, void*) {
    Op o{nullptr, 0, 0, d, s, n, 0};
    if (g_capturing) { g_memcpyNodes++; g_capture.push_back(o); return 0; }
    copy(o);
    g_log.push_back(o);
    g_clock += 0.5; // a copy runs for 0.5 ms
    return 0;
}
R cuMemcpyDtoHAsync_v2(void* d, unsigned long long s, size_t n, void*) {
    std::memcpy(d, (void*)(uintptr_t)s, n); return 0; }
R cuStreamCreate(void** s, unsigned) { *s = &g_dummy; return 0; }
R cuStreamDestroy_v2(void*) { return 0; }
R cuStreamSynchronize(void*) { return 0; }
R cuStreamWaitEvent(void*, void*, unsigned) { return 0; }
R cuEventCreate(void** e, unsigned) { *e = new Ev{0.0}; g_events++; g_eventsMade++; return 0; }
R cuEventRecord(void* e, void*) { ((Ev*)e)->t = g_clock; return 0; }
R cuEventDestroy_v2(void* e) { delete (Ev*)e; g_events--; return 0; }
R cuEventQuery(void*) { return g_notReady ? 600 : 0; }
R cuEventSynchronize(void*) { g_eventSyncs++; return 0; }
R cuEventElapsedTime_v2(float* ms, void* a, void* b) { *ms = float(((Ev*)b)->t - ((Ev*)a)->t); return 0; }
R cuModuleLoadData(void** m, const void*) { *m = &g_dummy; return 0; }
R cuModuleUnload(void*) { return 0; }
R cuModuleGetFunction(void** f, void*, const char* name) { *f = (void*)strdup(name); return 0; }
R cuLaunchKernel(void* f, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                 unsigned, void*, void** params, void**) {
    const uint64_t step = *(const uint64_t*)((const char*)params[0] + 8);
    const uint64_t rng = *(const uint64_t*)((const char*)params[0] + 40); // StepArgs::rngStep
    (g_capturing ? g_capture : g_log).push_back(Op{(const char*)f, step, rng, 0, 0, 0, 0});
    if (!g_capturing) g_clock += 1.0; // a launch runs for 1 ms
    return 0;
}
R cuStreamBeginCapture_v2(void*, int) {
    if (g_failCapture) return 900; // CUDA_ERROR_NOT_SUPPORTED-like
    g_capturing = true; g_capture.clear(); return 0; }
R cuStreamEndCapture(void*, void** g) { g_capturing = false; *g = new G{g_capture}; return 0; }
R cuGraphInstantiateWithFlags(void** e, void* g, unsigned long long) {
    g_inst++; *e = new G(*(G*)g); return 0; }
struct Info { int result; void* a; void* b; };
R cuGraphExecUpdate_v2(void* e, void* g, Info* i) {
    g_updates++; *(G*)e = *(G*)g; i->result = 0; return 0; }
R cuGraphLaunch(void* e, void*) {
    for (Op o : ((G*)e)->ops) {
        if (!o.fn) copy(o);
        o.graph = 1;
        g_log.push_back(o);
        g_clock += o.fn ? 1.0 : 0.5;
    }
    return 0;
}
R cuGraphDestroy(void* g) { delete (G*)g; return 0; }
R cuGraphExecDestroy(void* e) { delete (G*)e; return 0; }
// For the test.
size_t mock_ops() { return g_log.size(); }
const char* mock_fn(size_t i) { return g_log[i].fn ? g_log[i].fn : "copy"; }
uint64_t mock_step(size_t i) { return g_log[i].step; }
uint64_t mock_rng(size_t i) { return g_log[i].rng; }
int mock_graph(size_t i) { return g_log[i].graph; }
int mock_instantiations() { return g_inst; }
int mock_updates() { return g_updates; }
int mock_memcpy_nodes() { return g_memcpyNodes; }
void mock_fail_capture(int fail) { g_failCapture = fail != 0; }
int mock_events() { return g_events; }
void mock_host_gap(double ms) { g_clock += ms; }
}
)MOCK";

struct Mock {
    std::unique_ptr<cuda::DriverApi> api;
    void* handle = nullptr;
    std::string why;

    template <typename F> F fn(const char* name) const {
        return reinterpret_cast<F>(dlsym(handle, name));
    }
    size_t ops() const { return fn<size_t (*)()>("mock_ops")(); }
    std::string name(size_t i) const { return fn<const char* (*)(size_t)>("mock_fn")(i); }
    uint64_t step(size_t i) const { return fn<uint64_t (*)(size_t)>("mock_step")(i); }
    uint64_t rng(size_t i) const { return fn<uint64_t (*)(size_t)>("mock_rng")(i); }
    int graph(size_t i) const { return fn<int (*)(size_t)>("mock_graph")(i); }
    int count(const char* what) const { return fn<int (*)()>(what)(); }
    void failCapture(bool fail) const { fn<void (*)(int)>("mock_fail_capture")(fail); }
    void hostGap(double ms) const { fn<void (*)(double)>("mock_host_gap")(ms); }
};

const Mock& mock() {
    static const Mock m = [] {
        Mock out;
        const char* cxx = std::getenv("CXX");
        const std::string compiler = cxx && *cxx ? cxx : "c++";
        const auto dir = std::filesystem::temp_directory_path() /
                         ("sf-mock-cuda-schedule-" + std::to_string(getpid()));
        std::filesystem::create_directories(dir);
        const auto src = dir / "mock.cpp", lib = dir / "libmockcudaschedule.so";
        std::ofstream(src) << kMockSource;
        const std::string cmd = compiler + " -std=c++17 -shared -fPIC -O0 -o '" + lib.string() +
                                "' '" + src.string() + "' 2>&1";
        if (std::system(cmd.c_str()) != 0) {
            out.why = "cannot compile the mock driver with " + compiler;
            return out;
        }
        out.api = cuda::DriverApi::load(lib.string());
        out.handle = dlopen(lib.string().c_str(), RTLD_NOW | RTLD_LOCAL);
        return out;
    }();
    return m;
}

#define SKIP_WITHOUT_MOCK()                                                                        \
    if (!mock().api) GTEST_SKIP() << mock().why

using Item = backends::SequenceItem;
constexpr double kDt = 0.5; // [ms]

// A device with the program {kernel 0 "step": one launch; kernel 1 "update": one launch}, its
// table bound, and two 64-byte buffers: `state` and `initial` (the reset copy's source).
struct MockSetup {
    codegen::Plan plan;
    simt::Program program;
    cuda::CudaDevice dev;
    backends::Buffer state = nullptr, initial = nullptr;

    explicit MockSetup(uint32_t graphSteps)
        : dev(*mock().api, cuda::queryDevice(*mock().api, 0), graphSteps) {
        codegen::MergedGroupTable t;
        t.fields = {{"n", "uint32_t"}};
        t.groupNames = {"A"};
        plan.mergedGroups.push_back(t);
        program.kernels = {{simt::Launch{"step", {0}, 128, 1, 128}},
                           {simt::Launch{"update", {0}, 128, 1, 128}}};
        dev.load(plan, program, "CUBIN");
        dev.bindTable(0, {{backends::FieldValue::ofNumber(1)}});
        state = dev.allocate(64);
        initial = dev.allocate(64);
    }

    // A trial as Simulation::run of a schedule queues it: the reset copy, `steps` steps from
    // step 0 (random draws keyed from `rng`), then the custom update at the last step.
    std::vector<Item> trial(uint64_t steps, uint64_t rng) const {
        codegen::abi::StepArgs first;
        first.rngStep = rng;
        codegen::abi::StepArgs end = first;
        end.step = steps;
        end.rngStep = rng + steps;
        return {Item::ofCopy(state, initial, 64), Item::ofSteps({0}, first, steps, kDt),
                Item::ofLaunch(1, end)};
    }

    void setInitial(unsigned char value) {
        const std::vector<unsigned char> bytes(64, value);
        dev.copyToDevice(initial, bytes.data(), bytes.size());
    }
    unsigned char stateByte() {
        unsigned char out[64];
        dev.copyFromDevice(out, state, sizeof out);
        return out[17];
    }
};

// The ops from `from` are one trial of `steps` steps with random draws from `rng`, each from a
// graph (1) or not (0) as `graph` says.
void expectTrial(size_t from, uint64_t steps, uint64_t rng, int graph) {
    ASSERT_GE(mock().ops(), from + steps + 2);
    EXPECT_EQ(mock().name(from), "copy");
    EXPECT_EQ(mock().graph(from), graph);
    for (uint64_t i = 0; i < steps; i++) {
        EXPECT_EQ(mock().name(from + 1 + i), "step") << i;
        EXPECT_EQ(mock().step(from + 1 + i), i) << i;
        EXPECT_EQ(mock().rng(from + 1 + i), rng + i) << i;
        EXPECT_EQ(mock().graph(from + 1 + i), graph) << i;
    }
    EXPECT_EQ(mock().name(from + 1 + steps), "update");
    EXPECT_EQ(mock().step(from + 1 + steps), steps);
    EXPECT_EQ(mock().graph(from + 1 + steps), graph);
}

TEST(CudaScheduleMock, ATrialIsCapturedOnceAndReplayedByUpdatingTheGraph) {
    SKIP_WITHOUT_MOCK();
    MockSetup s(100);
    ASSERT_TRUE(s.dev.graphsEnabled());
    const int inst = mock().count("mock_instantiations"), upd = mock().count("mock_updates");
    const int nodes = mock().count("mock_memcpy_nodes");
    const uint64_t graphs = cuda::graphLaunches();
    constexpr uint64_t kSteps = 6;
    for (uint64_t r = 0; r < 3; r++) {
        s.setInitial(static_cast<unsigned char>(10 + r)); // the copy runs at replay time
        const size_t before = mock().ops();
        s.dev.runSequence(s.trial(kSteps, r * kSteps));
        ASSERT_EQ(mock().ops(), before + kSteps + 2);
        expectTrial(before, kSteps, r * kSteps, 1);
        EXPECT_EQ(s.stateByte(), 10 + r) << "replay " << r;
    }
    EXPECT_EQ(cuda::graphLaunches() - graphs, 3u); // one launch per trial
    EXPECT_EQ(mock().count("mock_instantiations") - inst, 1);
    EXPECT_EQ(mock().count("mock_updates") - upd, 2);
    EXPECT_EQ(mock().count("mock_memcpy_nodes") - nodes, 3); // captured anew, one per trial
}

TEST(CudaScheduleMock, TheGraphStepsCapCutsTheSequenceAfterAPiecesLastItems) {
    SKIP_WITHOUT_MOCK();
    MockSetup s(4);
    const int inst = mock().count("mock_instantiations");
    const uint64_t graphs = cuda::graphLaunches();
    const size_t before = mock().ops();
    s.dev.runSequence(s.trial(6, 40));
    // [copy, steps 0-3] and [steps 4-5, update]: two graphs, every launch with its own step.
    EXPECT_EQ(cuda::graphLaunches() - graphs, 2u);
    EXPECT_EQ(mock().count("mock_instantiations") - inst, 2);
    expectTrial(before, 6, 40, 1);
}

TEST(CudaScheduleMock, AFailedCaptureFallsBackToPlainLaunchesForGood) {
    SKIP_WITHOUT_MOCK();
    MockSetup s(100);
    mock().failCapture(true);
    const uint64_t graphs = cuda::graphLaunches();
    s.setInitial(7);
    size_t before = mock().ops();
    s.dev.runSequence(s.trial(5, 0));
    mock().failCapture(false);
    EXPECT_FALSE(s.dev.graphsEnabled());
    expectTrial(before, 5, 0, 0);
    EXPECT_EQ(s.stateByte(), 7);
    before = mock().ops();
    s.dev.runSequence(s.trial(5, 5)); // capture would work now: the device no longer tries
    expectTrial(before, 5, 5, 0);
    EXPECT_EQ(cuda::graphLaunches(), graphs);
}

// Busy time: a replayed graph is timed as a whole by the event pair around the sequence (events
// are recorded outside the capture), plain launches the same way; host gaps between sequences are
// not counted. Mock launches run 1 ms and copies 0.5 ms on the mock clock.
TEST(CudaScheduleMock, BusyTimeCoversGraphsAndPlainLaunchesButNotHostGaps) {
    SKIP_WITHOUT_MOCK();
    const int events = mock().count("mock_events");
    {
        MockSetup graphs(100), plain(0);
        for (MockSetup* s : {&graphs, &plain}) {
            const double before = s->dev.busySeconds().value(); // [s]
            const uint64_t launches = cuda::graphLaunches();
            for (uint64_t r = 0; r < 3; r++) {
                s->dev.runSequence(s->trial(6, 6 * r)); // a copy, 6 steps, an update
                mock().hostGap(250.0);                  // [ms] host work between trials
            }
            EXPECT_EQ(cuda::graphLaunches() - launches, s == &graphs ? 3u : 0u);
            const double expected = 3 * (0.5 + 6 + 1) * 1e-3; // [s]
            EXPECT_NEAR(s->dev.busySeconds().value() - before, expected, 1e-6)
                << (s == &graphs ? "graphs" : "plain launches");
        }
    }
    EXPECT_EQ(mock().count("mock_events"), events); // every event destroyed with its device
}

} // namespace
