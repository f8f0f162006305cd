#pragma once
// The CUDA driver API as the cuda backend uses it, loaded at run time with dlopen("libcuda.so.1")
// so that a build with cuda support links and runs on a machine without an NVIDIA driver (the
// backend is then reported unusable, with the reason). No CUDA runtime (libcudart) is used.
//
// The few types and constants used are declared here rather than taken from cuda.h: the build
// then needs no CUDA toolkit at all, and the values are the driver's ABI, fixed since CUDA 4-12
// (checked against cuda.h of CUDA 13.0). Where cuda.h maps a name to a versioned symbol
// (cuMemAlloc -> cuMemAlloc_v2), the versioned symbol is resolved: the unversioned ones keep
// their old 32-bit or legacy signatures for binary compatibility.
#include <memory>
#include <string>

namespace spikeforge::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long; // a device address (64-bit on every supported platform)
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;
using CUgraphNode = struct CUgraphNode_st*;

// CUresult values the backend tells apart (cuda.h, enum cudaError_enum).
inline constexpr CUresult kSuccess = 0;          // CUDA_SUCCESS
inline constexpr CUresult kErrorNoDevice = 100;  // CUDA_ERROR_NO_DEVICE
inline constexpr CUresult kErrorOutOfMemory = 2; // CUDA_ERROR_OUT_OF_MEMORY
inline constexpr CUresult kErrorNotReady = 600;  // CUDA_ERROR_NOT_READY (cuEventQuery)

// CUdevice_attribute values (cuda.h).
inline constexpr int kAttrMaxThreadsPerBlock = 1;   // CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK
inline constexpr int kAttrMaxGridDimX = 5;          // CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X
inline constexpr int kAttrMaxGridDimY = 6;          // CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y
inline constexpr int kAttrMultiprocessorCount = 16; // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
inline constexpr int kAttrComputeCapabilityMajor =
    75; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
inline constexpr int kAttrComputeCapabilityMinor =
    76; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR

inline constexpr unsigned kStreamNonBlocking = 0x1;    // CU_STREAM_NON_BLOCKING
inline constexpr unsigned kEventDefault = 0x0;         // CU_EVENT_DEFAULT (timing enabled)
inline constexpr unsigned kEventDisableTiming = 0x2;   // CU_EVENT_DISABLE_TIMING
inline constexpr unsigned kMemHostAllocPortable = 0x1; // CU_MEMHOSTALLOC_PORTABLE
inline constexpr int kCaptureModeThreadLocal = 1;      // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
inline constexpr int kGraphExecUpdateSuccess = 0;      // CU_GRAPH_EXEC_UPDATE_SUCCESS

// CUgraphExecUpdateResultInfo (cuda.h): what cuGraphExecUpdate_v2 reports.
struct GraphExecUpdateResultInfo {
    int result; // CUgraphExecUpdateResult
    CUgraphNode errorNode;
    CUgraphNode errorFromNode;
};

// The resolved entry points. Members are named after the symbols (versioned where cuda.h
// versions them); the graph entry points are optional (nullptr: graphs are not used).
struct DriverApi {
    CUresult (*cuInit)(unsigned flags);
    CUresult (*cuDriverGetVersion)(int* version);
    CUresult (*cuGetErrorName)(CUresult error, const char** name);
    CUresult (*cuGetErrorString)(CUresult error, const char** text);
    CUresult (*cuDeviceGetCount)(int* count);
    CUresult (*cuDeviceGet)(CUdevice* device, int ordinal);
    CUresult (*cuDeviceGetName)(char* name, int length, CUdevice device);
    CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device);
    CUresult (*cuDevicePrimaryCtxRelease_v2)(CUdevice device);
    CUresult (*cuCtxSetCurrent)(CUcontext context);
    CUresult (*cuMemGetInfo_v2)(size_t* free, size_t* total);
    CUresult (*cuMemAlloc_v2)(CUdeviceptr* pointer, size_t bytes);
    CUresult (*cuMemFree_v2)(CUdeviceptr pointer);
    CUresult (*cuMemHostAlloc)(void** pointer, size_t bytes, unsigned flags);
    CUresult (*cuMemFreeHost)(void* pointer);
    CUresult (*cuMemsetD8Async)(CUdeviceptr dst, unsigned char value, size_t count, CUstream s);
    CUresult (*cuMemsetD32Async)(CUdeviceptr dst, unsigned value, size_t count, CUstream s);
    CUresult (*cuMemcpyHtoDAsync_v2)(CUdeviceptr dst, const void* src, size_t bytes, CUstream s);
    CUresult (*cuMemcpyDtoHAsync_v2)(void* dst, CUdeviceptr src, size_t bytes, CUstream s);
    CUresult (*cuMemcpyDtoDAsync_v2)(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s);
    CUresult (*cuStreamCreate)(CUstream* stream, unsigned flags);
    CUresult (*cuStreamDestroy_v2)(CUstream stream);
    CUresult (*cuStreamSynchronize)(CUstream stream);
    CUresult (*cuStreamWaitEvent)(CUstream stream, CUevent event, unsigned flags);
    CUresult (*cuEventCreate)(CUevent* event, unsigned flags);
    CUresult (*cuEventRecord)(CUevent event, CUstream stream);
    CUresult (*cuEventDestroy_v2)(CUevent event);
    CUresult (*cuModuleLoadData)(CUmodule* module, const void* image);
    CUresult (*cuModuleUnload)(CUmodule module);
    CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name);
    CUresult (*cuLaunchKernel)(CUfunction f, unsigned gridX, unsigned gridY, unsigned gridZ,
                               unsigned blockX, unsigned blockY, unsigned blockZ,
                               unsigned sharedBytes, CUstream stream, void** params, void** extra);
    // Optional (CUDA graphs; cuGraphExecUpdate_v2 needs a CUDA 12 driver).
    CUresult (*cuStreamBeginCapture_v2)(CUstream stream, int mode);
    CUresult (*cuStreamEndCapture)(CUstream stream, CUgraph* graph);
    CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec* exec, CUgraph graph,
                                            unsigned long long flags);
    CUresult (*cuGraphExecUpdate_v2)(CUgraphExec exec, CUgraph graph,
                                     GraphExecUpdateResultInfo* info);
    CUresult (*cuGraphLaunch)(CUgraphExec exec, CUstream stream);
    CUresult (*cuGraphDestroy)(CUgraph graph);
    CUresult (*cuGraphExecDestroy)(CUgraphExec exec);
    // Optional (event timing for the busy time): cuEventElapsedTime_v2 is CUDA 12.8's name; on
    // older drivers the member holds cuEventElapsedTime, which has the same signature.
    CUresult (*cuEventQuery)(CUevent event);
    CUresult (*cuEventSynchronize)(CUevent event);
    CUresult (*cuEventElapsedTime_v2)(float* milliseconds, CUevent start, CUevent end);

    int driverVersion = 0; // cuDriverGetVersion: 1000 * major + 10 * minor (12040 = 12.4)

    // Whether every graph entry point was found.
    bool hasGraphs() const;
    // Whether every event-timing entry point was found (CudaDevice::busySeconds).
    bool hasEventTiming() const;

    // Opens `library` and resolves every entry point, without initialising the driver.
    // BackendError naming the library (and dlerror's reason) when it cannot be opened, or the
    // first required symbol it lacks. The library stays loaded for the life of the process.
    static std::unique_ptr<DriverApi> load(const std::string& library);
};

// The driver of this process: libcuda.so.1 loaded and cuInit(0) run, once; every later call
// returns the same object or throws the same BackendError ("libcuda.so.1 not found: no NVIDIA
// driver (…)", "cuInit failed: CUDA_ERROR_NO_DEVICE …").
const DriverApi& driver();

// "" when the driver loads, initialises and reports at least one device; else why not ("no
// CUDA device", …). Never throws; for availableBackends.
std::string driverStatus();

// "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory) (<context>)". `api` may be
// null (before the driver loaded): then the code is given as a number.
std::string errorMessage(const DriverApi* api, CUresult code, const char* call,
                         const std::string& context = {});

// Throws BackendError(errorMessage(&api, …)) unless `code` is CUDA_SUCCESS.
void check(const DriverApi& api, CUresult code, const char* call, const std::string& context = {});

} // namespace spikeforge::cuda
