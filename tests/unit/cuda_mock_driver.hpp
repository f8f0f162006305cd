#pragma once
// Shared by the CUDA unit tests (test_cuda_*.cpp, built only with the cuda backend): a mock CUDA
// driver, a small library compiled by the test at run time that fills the DriverApi table without
// a GPU. "Device" memory is host memory; every launch and every device-to-device copy is logged in
// order (a launch with its grid, block, StepArgs time/step/rngStep and table address); stream
// capture records launches and copies (memcpy nodes) into a graph that instantiation, in-place
// update and launch replay; events carry a mock clock on which a launch runs 1 ms and a copy
// 0.5 ms, so busy times are known. The library is built once per test process and shared by every
// test in it: tests compare counts before and after, never absolute ones.
#include "backends/cuda/cuda_driver.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

namespace cuda_mock {

// The entry points CudaDevice uses, with the driver's C ABI, and mock_* queries for the tests.
inline constexpr const char* kSource = R"MOCK(
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>
extern "C" {
typedef int R;
// One operation as it ran: a launch (fn set) or a device-to-device copy (fn null).
struct Op {
    const char* fn; unsigned gx, gy, bx; uint64_t step; double t; uint64_t table, rng;
    unsigned long long dst, src; size_t bytes; int graph;
};
struct G { std::vector<Op> ops; };
static std::vector<Op> g_log, g_capture;
static bool g_capturing = false, g_failCapture = false;
static int g_inst = 0, g_updates = 0, g_memcpyNodes = 0, g_live = 0, g_launches = 0, g_dummy = 0;
static void copy(const Op& o) { std::memcpy((void*)(uintptr_t)o.dst, (const void*)(uintptr_t)o.src, o.bytes); }
// Events carry the mock clock [ms] when recorded: every launch and copy "runs" for a fixed
// time on it, so elapsed times are known; g_notReady makes queries report unfinished work.
struct Ev { double t; };
static double g_clock = 0.0;
static bool g_notReady = false;
static int g_events = 0, g_eventsMade = 0, g_eventSyncs = 0;
// An op runs: it is logged and advances the clock, a launch by 1 ms and a copy by 0.5 ms.
static void ran(const Op& o) {
    g_log.push_back(o);
    if (o.fn) g_launches++;
    g_clock += o.fn ? 1.0 : 0.5;
}
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
    Op o{};
    o.dst = d; o.src = s; o.bytes = n;
    if (g_capturing) { g_memcpyNodes++; g_capture.push_back(o); return 0; }
    copy(o);
    ran(o);
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
    Op o{};
    o.fn = (const char*)f; o.gx = gx; o.gy = gy; o.bx = bx;
    o.t = *(const double*)params[0];
    o.step = *(const uint64_t*)((const char*)params[0] + 8);
    o.rng = *(const uint64_t*)((const char*)params[0] + 40); // StepArgs::rngStep
    o.table = *(const unsigned long long*)params[1];
    if (g_capturing) g_capture.push_back(o);
    else ran(o);
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
        ran(o);
    }
    return 0;
}
R cuGraphDestroy(void* g) { delete (G*)g; return 0; }
R cuGraphExecDestroy(void* e) { delete (G*)e; return 0; }
// For the test.
size_t mock_ops() { return g_log.size(); }
const char* mock_name(size_t i) { return g_log[i].fn ? g_log[i].fn : "copy"; }
uint64_t mock_field(size_t i, int f) {
    const Op& o = g_log[i];
    switch (f) {
    case 0: return o.gx;
    case 1: return o.gy;
    case 2: return o.bx;
    case 3: return o.step;
    case 4: return o.table;
    case 5: return (uint64_t)o.graph;
    case 6: return (uint64_t)(o.t * 1000.0);
    case 7: return o.rng;
    }
    return 0;
}
int mock_launches() { return g_launches; }
int mock_instantiations() { return g_inst; }
int mock_updates() { return g_updates; }
int mock_memcpy_nodes() { return g_memcpyNodes; }
int mock_live() { return g_live; }
int mock_events() { return g_events; }
int mock_events_made() { return g_eventsMade; }
int mock_event_syncs() { return g_eventSyncs; }
void mock_fail_capture(int fail) { g_failCapture = fail != 0; }
void mock_host_gap(double ms) { g_clock += ms; }
void mock_not_ready(int v) { g_notReady = v != 0; }
}
)MOCK";

// The fields of a logged op, in the order mock_field numbers them.
enum class Field : int { GridX = 0, GridY, Block, Step, Table, Graph, TimeUs, Rng };

// The mock built once per test process (no api and the reason in `why` when there is no
// compiler). Ops are indexed from 0 in the order they ran, launches and copies alike.
struct Mock {
    std::unique_ptr<spikeforge::cuda::DriverApi> api;
    void* handle = nullptr; // the same library, for the mock_* queries
    std::string why;

    template <typename F> F fn(const char* name) const {
        return reinterpret_cast<F>(dlsym(handle, name));
    }
    size_t ops() const { return fn<size_t (*)()>("mock_ops")(); }
    // The launches among the ops (copies not counted).
    size_t launches() const { return static_cast<size_t>(count("mock_launches")); }
    // The kernel's name, or "copy".
    std::string name(size_t i) const { return fn<const char* (*)(size_t)>("mock_name")(i); }
    uint64_t field(size_t i, Field f) const {
        return fn<uint64_t (*)(size_t, int)>("mock_field")(i, static_cast<int>(f));
    }
    uint64_t gridX(size_t i) const { return field(i, Field::GridX); }
    uint64_t gridY(size_t i) const { return field(i, Field::GridY); }
    uint64_t block(size_t i) const { return field(i, Field::Block); }
    uint64_t step(size_t i) const { return field(i, Field::Step); }
    uint64_t table(size_t i) const { return field(i, Field::Table); } // the table's address
    int graph(size_t i) const { return static_cast<int>(field(i, Field::Graph)); } // 1: replayed
    uint64_t timeUs(size_t i) const { return field(i, Field::TimeUs); } // StepArgs::t [µs]
    uint64_t rng(size_t i) const { return field(i, Field::Rng); }
    // A mock_* counter by name (mock_instantiations, mock_updates, mock_memcpy_nodes, mock_live,
    // mock_events, mock_events_made, mock_event_syncs).
    int count(const char* what) const { return fn<int (*)()>(what)(); }
    void failCapture(bool fail) const { fn<void (*)(int)>("mock_fail_capture")(fail); }
    void hostGap(double ms) const { fn<void (*)(double)>("mock_host_gap")(ms); } // [ms]
    void notReady(bool v) const { fn<void (*)(int)>("mock_not_ready")(v); }
};

inline const Mock& mock() {
    static const Mock m = [] {
        Mock out;
        const char* cxx = std::getenv("CXX");
        const std::string compiler = cxx && *cxx ? cxx : "c++";
        const auto dir =
            std::filesystem::temp_directory_path() / ("sf-mock-cuda-" + std::to_string(getpid()));
        std::filesystem::create_directories(dir);
        const auto src = dir / "mock.cpp", lib = dir / "libmockcuda.so";
        std::ofstream(src) << kSource;
        const std::string cmd = compiler + " -std=c++17 -shared -fPIC -O0 -o '" + lib.string() +
                                "' '" + src.string() + "' 2>&1";
        if (std::system(cmd.c_str()) != 0) {
            out.why = "cannot compile the mock driver with " + compiler;
            return out;
        }
        out.api = spikeforge::cuda::DriverApi::load(lib.string());
        out.handle = dlopen(lib.string().c_str(), RTLD_NOW | RTLD_LOCAL);
        return out;
    }();
    return m;
}

} // namespace cuda_mock

#define SKIP_WITHOUT_MOCK()                                                                        \
    if (!cuda_mock::mock().api) GTEST_SKIP() << cuda_mock::mock().why
