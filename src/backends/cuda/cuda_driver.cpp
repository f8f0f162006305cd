#include "backends/cuda/cuda_driver.hpp"

#include "spikeforge/errors.hpp"

#include <dlfcn.h>

namespace spikeforge::cuda {

namespace {

constexpr char kDriverLibrary[] = "libcuda.so.1";

// Resolves `name` into `slot`; false when the library lacks it.
template <typename Fn> bool resolve(void* handle, const char* name, Fn& slot) {
    slot = reinterpret_cast<Fn>(dlsym(handle, name));
    return slot != nullptr;
}

// Resolves a symbol the backend cannot work without.
template <typename Fn>
void require(void* handle, const std::string& library, const char* name, Fn& slot) {
    if (!resolve(handle, name, slot))
        throw BackendError(library + " lacks " + name +
                           ": not a CUDA driver, or one too old (spikeforge needs a CUDA 11.4 or "
                           "newer driver)");
}

void resolveRequired(void* h, const std::string& lib, DriverApi& a) {
#define SF_REQUIRE(name) require(h, lib, #name, a.name)
    SF_REQUIRE(cuInit);
    SF_REQUIRE(cuDriverGetVersion);
    SF_REQUIRE(cuGetErrorName);
    SF_REQUIRE(cuGetErrorString);
    SF_REQUIRE(cuDeviceGetCount);
    SF_REQUIRE(cuDeviceGet);
    SF_REQUIRE(cuDeviceGetName);
    SF_REQUIRE(cuDeviceGetAttribute);
    SF_REQUIRE(cuDevicePrimaryCtxRetain);
    SF_REQUIRE(cuDevicePrimaryCtxRelease_v2);
    SF_REQUIRE(cuCtxSetCurrent);
    SF_REQUIRE(cuMemGetInfo_v2);
    SF_REQUIRE(cuMemAlloc_v2);
    SF_REQUIRE(cuMemFree_v2);
    SF_REQUIRE(cuMemHostAlloc);
    SF_REQUIRE(cuMemFreeHost);
    SF_REQUIRE(cuMemsetD8Async);
    SF_REQUIRE(cuMemsetD32Async);
    SF_REQUIRE(cuMemcpyHtoDAsync_v2);
    SF_REQUIRE(cuMemcpyDtoHAsync_v2);
    SF_REQUIRE(cuMemcpyDtoDAsync_v2);
    SF_REQUIRE(cuStreamCreate);
    SF_REQUIRE(cuStreamDestroy_v2);
    SF_REQUIRE(cuStreamSynchronize);
    SF_REQUIRE(cuStreamWaitEvent);
    SF_REQUIRE(cuEventCreate);
    SF_REQUIRE(cuEventRecord);
    SF_REQUIRE(cuEventDestroy_v2);
    SF_REQUIRE(cuModuleLoadData);
    SF_REQUIRE(cuModuleUnload);
    SF_REQUIRE(cuModuleGetFunction);
    SF_REQUIRE(cuLaunchKernel);
#undef SF_REQUIRE
}

void resolveOptional(void* h, DriverApi& a) {
#define SF_OPTIONAL(name) resolve(h, #name, a.name)
    SF_OPTIONAL(cuStreamBeginCapture_v2);
    SF_OPTIONAL(cuStreamEndCapture);
    SF_OPTIONAL(cuGraphInstantiateWithFlags);
    SF_OPTIONAL(cuGraphExecUpdate_v2);
    SF_OPTIONAL(cuGraphLaunch);
    SF_OPTIONAL(cuGraphDestroy);
    SF_OPTIONAL(cuGraphExecDestroy);
    SF_OPTIONAL(cuEventQuery);
    SF_OPTIONAL(cuEventSynchronize);
    if (!SF_OPTIONAL(cuEventElapsedTime_v2))
        resolve(h, "cuEventElapsedTime", a.cuEventElapsedTime_v2);
#undef SF_OPTIONAL
}

// The process's driver, or the reason it has none: loading and cuInit happen once.
struct Loaded {
    std::unique_ptr<DriverApi> api;
    std::string error;
};

Loaded loadAndInit() {
    Loaded out;
    try {
        out.api = DriverApi::load(kDriverLibrary);
        const CUresult r = out.api->cuInit(0);
        if (r != kSuccess) {
            out.error = errorMessage(out.api.get(), r, "cuInit");
            if (r == kErrorNoDevice) out.error = "no CUDA device (" + out.error + ")";
            out.api.reset();
            return out;
        }
        if (out.api->cuDriverGetVersion(&out.api->driverVersion) != kSuccess)
            out.api->driverVersion = 0;
    } catch (const BackendError& e) {
        out.api.reset();
        out.error = e.what();
    }
    return out;
}

const Loaded& loaded() {
    static const Loaded instance = loadAndInit(); // thread-safe initialisation (C++11)
    return instance;
}

} // namespace

bool DriverApi::hasEventTiming() const {
    return cuEventQuery && cuEventSynchronize && cuEventElapsedTime_v2;
}

bool DriverApi::hasGraphs() const {
    return cuStreamBeginCapture_v2 && cuStreamEndCapture && cuGraphInstantiateWithFlags &&
           cuGraphExecUpdate_v2 && cuGraphLaunch && cuGraphDestroy && cuGraphExecDestroy;
}

std::unique_ptr<DriverApi> DriverApi::load(const std::string& library) {
    // RTLD_LOCAL: the driver's symbols stay out of the global namespace (generated cpu code is
    // loaded into the same process).
    void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = dlerror();
        throw BackendError(library + " not found: no NVIDIA driver (" +
                           (why ? std::string(why) : std::string("dlopen failed")) + ")");
    }
    auto api = std::make_unique<DriverApi>();
    try {
        resolveRequired(handle, library, *api);
    } catch (...) {
        dlclose(handle);
        throw;
    }
    resolveOptional(handle, *api);
    return api;
}

const DriverApi& driver() {
    const Loaded& l = loaded();
    if (!l.api) throw BackendError("the cuda backend cannot run: " + l.error);
    return *l.api;
}

std::string driverStatus() {
    const Loaded& l = loaded();
    if (!l.api) return l.error;
    int count = 0;
    const CUresult r = l.api->cuDeviceGetCount(&count);
    if (r != kSuccess) return errorMessage(l.api.get(), r, "cuDeviceGetCount");
    if (count == 0) return "no CUDA device (the driver reports none)";
    return "";
}

std::string errorMessage(const DriverApi* api, CUresult code, const char* call,
                         const std::string& context) {
    std::string text = std::string(call) + " failed: ";
    const char* name = nullptr;
    const char* description = nullptr;
    if (api && api->cuGetErrorName(code, &name) == kSuccess && name) {
        text += name;
        if (api->cuGetErrorString(code, &description) == kSuccess && description)
            text += std::string(" (") + description + ")";
    } else {
        text += "CUresult " + std::to_string(code);
    }
    if (!context.empty()) text += " (" + context + ")";
    return text;
}

void check(const DriverApi& api, CUresult code, const char* call, const std::string& context) {
    if (code == kSuccess) return;
    throw BackendError(errorMessage(&api, code, call, context));
}

} // namespace spikeforge::cuda
