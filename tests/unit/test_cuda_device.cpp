// Built only with the cuda backend (file name test_cuda_*: CMake leaves it out otherwise).
// CudaDevice without a GPU: the device is written against a DriverApi, so it runs here on a mock
// driver, a small library compiled by the test that keeps "device" memory in host memory and
// records every launch (with the table address and step it was given) and every graph. What the
// kernels would compute cannot be checked here; what the device hands the driver can: zero-fills,
// copies, the table structs in C layout with device addresses, grid and block sizes, and graph
// capture, update and replay with each step's own arguments.
#include "backends/cuda/cuda_device.hpp"
#include "backends/cuda/cuda_driver.hpp"
#include "codegen/layout.hpp"
#include "spikeforge/errors.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

using namespace spikeforge;

namespace {

// The mock driver: the entry points CudaDevice uses, with the driver's C ABI.
constexpr const char* kMockSource = R"MOCK(
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>
extern "C" {
typedef int R;
struct L { const char* fn; unsigned gx, gy, bx; uint64_t step; double t; uint64_t table; int graph; uint64_t rng; };
struct G { std::vector<L> launches; };
static std::vector<L> g_log, g_capture;
static bool g_capturing = false;
static int g_inst = 0, g_updates = 0, g_live = 0, g_dummy = 0;
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
R cuDeviceGet(int* d, int o) { *d = o; return o == 0 ? 0 : 101; }
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
R cuMemAlloc_v2(unsigned long long* p, size_t n) {
    void* m = std::malloc(n);
    std::memset(m, 0xAB, n); // garbage: the device must zero-fill
    *p = (uintptr_t)m;
    g_live++;
    return 0;
}
R cuMemFree_v2(unsigned long long p) { std::free((void*)(uintptr_t)p); g_live--; return 0; }
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
    std::memcpy((void*)(uintptr_t)d, (const void*)(uintptr_t)s, n);
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
R cuModuleLoadData(void** m, const void* image) {
    if (std::strcmp((const char*)image, "CUBIN") != 0) return 200;
    *m = &g_dummy;
    return 0;
}
R cuModuleUnload(void*) { return 0; }
R cuModuleGetFunction(void** f, void*, const char* name) { *f = (void*)strdup(name); return 0; }
R cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned, unsigned bx, unsigned, unsigned,
                 unsigned, void*, void** params, void**) {
    const double t = *(const double*)params[0];
    const uint64_t step = *(const uint64_t*)((const char*)params[0] + 8);
    const uint64_t rng = *(const uint64_t*)((const char*)params[0] + 40); // StepArgs::rngStep
    L l{(const char*)f, gx, gy, bx, step, t, *(const unsigned long long*)params[1], 0, rng};
    (g_capturing ? g_capture : g_log).push_back(l);
    if (!g_capturing) g_clock += 1.0; // a launch runs for 1 ms
    return 0;
}
R cuStreamBeginCapture_v2(void*, int) { g_capturing = true; g_capture.clear(); return 0; }
R cuStreamEndCapture(void*, void** g) { g_capturing = false; *g = new G{g_capture}; return 0; }
R cuGraphInstantiateWithFlags(void** e, void* g, unsigned long long) {
    g_inst++; *e = new G(*(G*)g); return 0; }
struct Info { int result; void* a; void* b; };
R cuGraphExecUpdate_v2(void* e, void* g, Info* i) {
    g_updates++; *(G*)e = *(G*)g; i->result = 0; return 0; }
R cuGraphLaunch(void* e, void*) {
    for (L l : ((G*)e)->launches) { l.graph = 1; g_log.push_back(l); g_clock += 1.0; }
    return 0;
}
R cuGraphDestroy(void* g) { delete (G*)g; return 0; }
R cuGraphExecDestroy(void* e) { delete (G*)e; return 0; }
// For the test.
size_t mock_launches() { return g_log.size(); }
const char* mock_name(size_t i) { return g_log[i].fn; }
uint64_t mock_field(size_t i, int f) {
    const L& l = g_log[i];
    switch (f) {
    case 0: return l.gx;
    case 1: return l.gy;
    case 2: return l.bx;
    case 3: return l.step;
    case 4: return l.table;
    case 5: return (uint64_t)l.graph;
    case 6: return (uint64_t)(l.t * 1000.0);
    case 7: return l.rng;
    }
    return 0;
}
int mock_instantiations() { return g_inst; }
int mock_updates() { return g_updates; }
int mock_live() { return g_live; }
int mock_events() { return g_events; }
int mock_events_made() { return g_eventsMade; }
int mock_event_syncs() { return g_eventSyncs; }
void mock_host_gap(double ms) { g_clock += ms; }
void mock_not_ready(bool v) { g_notReady = v; }
}
)MOCK";

// The mock built once per test process ("" and the reason in `why` when there is no compiler).
struct Mock {
    std::unique_ptr<cuda::DriverApi> api;
    void* handle = nullptr; // the same library, for the mock_* queries
    std::string why;

    template <typename F> F fn(const char* name) const {
        return reinterpret_cast<F>(dlsym(handle, name));
    }
    size_t launches() const { return fn<size_t (*)()>("mock_launches")(); }
    std::string name(size_t i) const { return fn<const char* (*)(size_t)>("mock_name")(i); }
    uint64_t field(size_t i, int f) const {
        return fn<uint64_t (*)(size_t, int)>("mock_field")(i, f);
    }
    int count(const char* what) const { return fn<int (*)()>(what)(); }
    void hostGap(double ms) const { fn<void (*)(double)>("mock_host_gap")(ms); }
    void notReady(bool v) const { fn<void (*)(bool)>("mock_not_ready")(v); }
};

const Mock& mock() {
    static const Mock m = [] {
        Mock out;
        const char* cxx = std::getenv("CXX");
        const std::string compiler = cxx && *cxx ? cxx : "c++";
        const auto dir =
            std::filesystem::temp_directory_path() / ("sf-mock-cuda-" + std::to_string(getpid()));
        std::filesystem::create_directories(dir);
        const auto src = dir / "mock.cpp", lib = dir / "libmockcuda.so";
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

// A plan with one table {float* p; uint32_t n; bool flag;} of two groups and a program whose
// kernel 0 is one launch of 256 x 2 work-items in blocks of 128, plus an empty launch.
struct Fixture {
    codegen::Plan plan;
    simt::Program program;
    Fixture() {
        codegen::MergedGroupTable t;
        t.fields = {{"p", "float*"}, {"n", "uint32_t"}, {"flag", "bool"}};
        t.groupNames = {"A", "B"};
        plan.mergedGroups.push_back(t);
        program.kernels = {
            {simt::Launch{"k0", {0}, 256, 2, 128}, simt::Launch{"k_empty", {0}, 0, 1, 128}}};
    }
};

cuda::DeviceInfo mockInfo(const cuda::DriverApi& api) {
    return cuda::queryDevice(api, 0);
}

} // namespace

TEST(CudaDeviceMock, QueryReadsTheAttributes) {
    SKIP_WITHOUT_MOCK();
    const cuda::DeviceInfo info = mockInfo(*mock().api);
    EXPECT_EQ(info.name, "Mock GPU");
    EXPECT_EQ(info.major, 9);
    EXPECT_EQ(info.minor, 0);
    EXPECT_EQ(info.maxThreadsPerBlock, 1024);
    EXPECT_EQ(info.maxGridY, 65535);
}

TEST(CudaDeviceMock, BuffersAreZeroFilledAndCopiesRoundTrip) {
    SKIP_WITHOUT_MOCK();
    const int live = mock().count("mock_live");
    {
        cuda::CudaDevice dev(*mock().api, mockInfo(*mock().api), 0);
        for (const size_t bytes : {size_t(7), size_t(1000)}) { // byte and word fills
            backends::Buffer b = dev.allocate(bytes);
            std::string back(bytes, 'x');
            dev.copyFromDevice(back.data(), b, bytes);
            EXPECT_EQ(back, std::string(bytes, '\0')) << bytes << " bytes";
            std::string data(bytes, '\0');
            for (size_t i = 0; i < bytes; i++)
                data[i] = static_cast<char>(i * 7 + 1);
            dev.copyToDevice(b, data.data(), bytes);
            dev.copyFromDevice(back.data(), b, bytes);
            EXPECT_EQ(back, data);
        }
        EXPECT_EQ(dev.allocate(0), nullptr);
        // [B] free (1 GiB in the mock) plus the 1007 bytes held
        EXPECT_EQ(dev.memoryCapacity(), (size_t(1) << 30) + 1007);
        EXPECT_EQ(dev.transfers().toDevice, 2u);
        EXPECT_EQ(dev.transfers().fromDevice, 4u);
    }
    EXPECT_EQ(mock().count("mock_live"), live); // everything freed with the device
}

TEST(CudaDeviceMock, TablesAreCStructsOfDeviceAddresses) {
    SKIP_WITHOUT_MOCK();
    Fixture f;
    cuda::CudaDevice dev(*mock().api, mockInfo(*mock().api), 0);
    dev.load(f.plan, f.program, "CUBIN");
    backends::Buffer data = dev.allocate(64);
    using V = backends::FieldValue;
    dev.bindTable(0, {{V::ofBuffer(data), V::ofNumber(7), V::ofNumber(1)},
                      {V::ofBuffer(nullptr), V::ofNumber(9), V::ofNumber(0)}});
    const size_t before = mock().launches();
    codegen::abi::StepArgs args;
    args.step = 42;
    dev.launch(0, args);
    ASSERT_EQ(mock().launches(), before + 1); // the empty launch is skipped
    EXPECT_EQ(mock().name(before), "k0");
    EXPECT_EQ(mock().field(before, 0), 2u);   // grid x = 256 / 128
    EXPECT_EQ(mock().field(before, 1), 2u);   // grid y = dim1
    EXPECT_EQ(mock().field(before, 2), 128u); // block
    EXPECT_EQ(mock().field(before, 3), 42u);  // step argument
    // The table as the kernel would read it (mock device memory is host memory).
    const auto* table = reinterpret_cast<const unsigned char*>(mock().field(before, 4));
    const codegen::StructLayout layout = codegen::layoutOf(f.plan.mergedGroups[0].fields);
    uint64_t p = 0;
    uint32_t n = 0;
    std::memcpy(&p, table + layout.offsets[0], 8);
    std::memcpy(&n, table + layout.offsets[1], 4);
    EXPECT_EQ(p, reinterpret_cast<uintptr_t>(data));
    EXPECT_EQ(n, 7u);
    EXPECT_EQ(table[layout.offsets[2]], 1u);
    std::memcpy(&p, table + layout.size + layout.offsets[0], 8);
    std::memcpy(&n, table + layout.size + layout.offsets[1], 4);
    EXPECT_EQ(p, 0u);
    EXPECT_EQ(n, 9u);
    EXPECT_EQ(table[layout.size + layout.offsets[2]], 0u);
    EXPECT_EQ(dev.transfers().toDevice, 0u); // binding is not a counted transfer
}

TEST(CudaDeviceMock, ModuleLoadErrorNamesTheCallAndTheDriversMessage) {
    SKIP_WITHOUT_MOCK();
    Fixture f;
    cuda::CudaDevice dev(*mock().api, mockInfo(*mock().api), 0);
    try {
        dev.load(f.plan, f.program, "not a cubin");
        ADD_FAILURE() << "no BackendError";
    } catch (const BackendError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("cuModuleLoadData failed: CUDA_ERROR_MOCK (mock error)"),
                  std::string::npos)
            << msg;
        EXPECT_NE(msg.find("sm_90"), std::string::npos) << msg;
    }
}

TEST(CudaDeviceMock, GraphsReplayEveryStepWithItsOwnArguments) {
    SKIP_WITHOUT_MOCK();
    Fixture f;
    cuda::CudaDevice dev(*mock().api, mockInfo(*mock().api), 4);
    ASSERT_TRUE(dev.graphsEnabled());
    dev.load(f.plan, f.program, "CUBIN");
    using V = backends::FieldValue;
    dev.bindTable(0, {{V::ofBuffer(nullptr), V::ofNumber(0), V::ofNumber(0)},
                      {V::ofBuffer(nullptr), V::ofNumber(0), V::ofNumber(0)}});
    const size_t before = mock().launches();
    const int inst = mock().count("mock_instantiations"), upd = mock().count("mock_updates");
    const uint64_t graphs = cuda::graphLaunches();
    codegen::abi::StepArgs first;
    first.step = 5;
    first.rngStep = 105;    // a later trial: random draws keyed past the step index
    const double dt = 0.25; // [ms]
    dev.runSteps({0}, first, 10, dt);
    // Pieces of 4, 4 and 2 steps: two graphs instantiated (4 and 2 steps), the second piece
    // of 4 replayed through an update of the first.
    EXPECT_EQ(cuda::graphLaunches() - graphs, 3u);
    EXPECT_EQ(mock().count("mock_instantiations") - inst, 2);
    EXPECT_EQ(mock().count("mock_updates") - upd, 1);
    ASSERT_EQ(mock().launches(), before + 10);
    for (size_t i = 0; i < 10; i++) {
        const size_t at = before + i;
        EXPECT_EQ(mock().field(at, 3), 5 + i) << "launch " << i;         // step
        EXPECT_EQ(mock().field(at, 6), (5 + i) * 250) << "launch " << i; // t [µs]
        EXPECT_EQ(mock().field(at, 5), 1u) << "launch " << i;            // from a graph
        EXPECT_EQ(mock().field(at, 7), 105 + i) << "launch " << i;       // rngStep
    }
    // One step alone runs as plain launches.
    dev.runSteps({0}, first, 1, dt);
    ASSERT_EQ(mock().launches(), before + 11);
    EXPECT_EQ(mock().field(before + 10, 5), 0u);
}

TEST(CudaDeviceMock, PullsLargerThanTheStagingBufferArriveWhole) {
    SKIP_WITHOUT_MOCK();
    cuda::CudaDevice dev(*mock().api, mockInfo(*mock().api), 0);
    const size_t bytes = (size_t(64) << 20) + 100; // [B] one piece past the 64 MiB staging buffer
    std::vector<uint32_t> data(bytes / 4);
    for (size_t i = 0; i < data.size(); i++)
        data[i] = static_cast<uint32_t>(i * 2654435761u);
    backends::Buffer b = dev.allocate(bytes);
    dev.copyToDevice(b, data.data(), bytes);
    std::vector<uint32_t> back(data.size(), 0);
    dev.copyFromDevice(back.data(), b, bytes);
    EXPECT_TRUE(back == data);
    backends::Buffer copy = dev.allocate(bytes);
    dev.copyBuffer(copy, b, bytes);
    std::fill(back.begin(), back.end(), 0u);
    dev.copyFromDevice(back.data(), copy, bytes);
    EXPECT_TRUE(back == data);
    const int live = mock().count("mock_live");
    dev.release(b);
    EXPECT_EQ(mock().count("mock_live"), live - 1);
    EXPECT_EQ(dev.transfers().toDevice, 1u);     // copyBuffer is not a host transfer
    EXPECT_THROW(dev.release(b), InternalError); // no longer this device's
}

// Busy time on the mock clock, where a launch runs 1 ms and a copy 0.5 ms: each timed call's
// event pair gives its span, host gaps between calls are not counted.
TEST(CudaDeviceMock, BusyTimeSumsTheElapsedTimeOfEachCall) {
    SKIP_WITHOUT_MOCK();
    Fixture f;
    cuda::CudaDevice dev(*mock().api, mockInfo(*mock().api), 0);
    dev.load(f.plan, f.program, "CUBIN");
    using V = backends::FieldValue;
    dev.bindTable(0, {{V::ofBuffer(nullptr), V::ofNumber(0), V::ofNumber(0)},
                      {V::ofBuffer(nullptr), V::ofNumber(0), V::ofNumber(0)}});
    backends::Buffer a = dev.allocate(64), b = dev.allocate(64);
    ASSERT_EQ(dev.busySeconds(), 0.0); // allocation and binding are not device work
    const size_t before = mock().launches();
    dev.runSteps({0}, codegen::abi::StepArgs{}, 10, 0.1);
    mock().hostGap(500.0); // [ms]
    dev.launch(0, codegen::abi::StepArgs{});
    mock().hostGap(500.0);
    dev.copyBuffer(b, a, 64);
    const size_t launches = mock().launches() - before;
    EXPECT_EQ(launches, 11u);
    const double expected = (double(launches) * 1.0 + 0.5) * 1e-3; // [s]
    EXPECT_NEAR(dev.busySeconds().value(), expected, 1e-6);
    EXPECT_EQ(dev.pendingBusyEvents(), 0u); // read at the sync point busySeconds is
}

// Pairs are read once finished and their events reused: a long loop without a sync point keeps
// a bounded number pending (waiting for the oldest at the cap) and creates a bounded number of
// events, and every event is destroyed with the device.
TEST(CudaDeviceMock, BusyEventsAreReusedBoundedAndFreed) {
    SKIP_WITHOUT_MOCK();
    Fixture f;
    const int live = mock().count("mock_events");
    {
        cuda::CudaDevice dev(*mock().api, mockInfo(*mock().api), 0);
        dev.load(f.plan, f.program, "CUBIN");
        using V = backends::FieldValue;
        dev.bindTable(0, {{V::ofBuffer(nullptr), V::ofNumber(0), V::ofNumber(0)},
                          {V::ofBuffer(nullptr), V::ofNumber(0), V::ofNumber(0)}});
        const int made = mock().count("mock_events_made");
        const int syncs = mock().count("mock_event_syncs");
        constexpr int kCalls = 1000;
        // Finished at once: every call reads the pair before it and reuses its events.
        for (int i = 0; i < kCalls; i++)
            dev.launch(0, codegen::abi::StepArgs{});
        EXPECT_LE(mock().count("mock_events_made") - made, 4);
        // Never finished until waited for: pending pairs stop growing at the cap.
        mock().notReady(true);
        size_t most = 0;
        for (int i = 0; i < kCalls; i++) {
            dev.launch(0, codegen::abi::StepArgs{});
            most = std::max(most, dev.pendingBusyEvents());
        }
        EXPECT_LE(most, 64u);
        EXPECT_GT(mock().count("mock_event_syncs") - syncs, 0); // waited at the cap
        EXPECT_LE(mock().count("mock_events_made") - made, 2 * 65 + 4);
        // Every launch counted once (1 ms each), waited for or read at the end.
        EXPECT_NEAR(dev.busySeconds().value(), 2 * kCalls * 1e-3, 1e-6);
        mock().notReady(false);
    }
    EXPECT_EQ(mock().count("mock_events"), live);
}

// A driver without event timing: busy time is unknown, not zero.
TEST(CudaDeviceMock, BusyTimeIsUnknownWithoutEventTiming) {
    SKIP_WITHOUT_MOCK();
    cuda::DriverApi api = *mock().api;
    api.cuEventElapsedTime_v2 = nullptr;
    ASSERT_FALSE(api.hasEventTiming());
    ASSERT_TRUE(mock().api->hasEventTiming());
    cuda::CudaDevice dev(api, mockInfo(api), 0);
    backends::Buffer a = dev.allocate(64), b = dev.allocate(64);
    dev.copyBuffer(b, a, 64);
    EXPECT_FALSE(dev.busySeconds().has_value());
}
