// NVRTC through dlopen/dlsym. The few entry points used are declared here with NVRTC's C ABI
// (nvrtcResult is an int-sized enum, nvrtcProgram an opaque pointer), so no NVRTC header is
// needed to build.
#include "backends/cuda/nvrtc.hpp"

#include "spikeforge/errors.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <sstream>

namespace spikeforge::cuda {

namespace {

using Program = void*;
using CreateFn = int (*)(Program*, const char*, const char*, int, const char* const*,
                         const char* const*);
using CompileFn = int (*)(Program, int, const char* const*);
using SizeFn = int (*)(Program, size_t*);
using GetFn = int (*)(Program, char*);
using DestroyFn = int (*)(Program*);
using ErrorStringFn = const char* (*)(int);
using VersionFn = int (*)(int*, int*);

struct Api {
    NvrtcInfo info;
    CreateFn create = nullptr;
    CompileFn compile = nullptr;
    SizeFn logSize = nullptr, cubinSize = nullptr;
    GetFn log = nullptr, cubin = nullptr;
    DestroyFn destroy = nullptr;
    ErrorStringFn errorString = nullptr;
};

std::vector<std::string> candidates() {
    std::vector<std::string> c;
    // A library named by the user is the only one tried, so a wrong name is an error.
    if (const char* env = std::getenv("SPIKEFORGE_NVRTC"); env && *env) return {env};
#ifdef SPIKEFORGE_NVRTC_HINT
    c.push_back(SPIKEFORGE_NVRTC_HINT);
#endif
    for (const char* name : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"})
        c.push_back(name);
    return c;
}

template <typename F> bool bind(void* lib, const char* symbol, F& f) {
    f = reinterpret_cast<F>(dlsym(lib, symbol));
    return f != nullptr;
}

Api load() {
    Api api;
    std::string tried;
    for (const auto& name : candidates()) {
        void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char* why = dlerror();
            tried += "\n  " + name + ": " + (why ? why : "not found");
            continue;
        }
        VersionFn version = nullptr;
        if (!bind(lib, "nvrtcCreateProgram", api.create) ||
            !bind(lib, "nvrtcCompileProgram", api.compile) ||
            !bind(lib, "nvrtcGetProgramLogSize", api.logSize) ||
            !bind(lib, "nvrtcGetProgramLog", api.log) ||
            !bind(lib, "nvrtcGetCUBINSize", api.cubinSize) ||
            !bind(lib, "nvrtcGetCUBIN", api.cubin) ||
            !bind(lib, "nvrtcDestroyProgram", api.destroy) ||
            !bind(lib, "nvrtcGetErrorString", api.errorString) ||
            !bind(lib, "nvrtcVersion", version)) {
            tried += "\n  " + name + ": lacks an NVRTC entry point (NVRTC 11.2 or newer needed)";
            dlclose(lib);
            continue;
        }
        version(&api.info.major, &api.info.minor);
        api.info.available = true;
        api.info.library = name;
        return api; // kept loaded for the life of the process
    }
    api.info.reason = "NVRTC (the CUDA run-time compiler) could not be loaded; tried:" + tried +
                      "\n(install the CUDA toolkit, or set SPIKEFORGE_NVRTC to libnvrtc's path)";
    return api;
}

const Api& api() {
    static const Api a = load(); // C++ guarantees one thread-safe initialisation
    return a;
}

void check(int result, const char* call) {
    if (result != 0)
        throw BackendError(std::string("NVRTC call ") + call +
                           " failed: " + api().errorString(result));
}

std::string programLog(Program p) {
    size_t n = 0;
    check(api().logSize(p, &n), "nvrtcGetProgramLogSize");
    std::string log(n, '\0');
    if (n > 0) check(api().log(p, log.data()), "nvrtcGetProgramLog");
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
        log.pop_back();
    return log;
}

// Line n (from 1) of `text`, "" past its end.
std::string lineOf(const std::string& text, long n) {
    std::istringstream in(text);
    std::string line;
    for (long i = 0; i < n; i++)
        if (!std::getline(in, line)) return "";
    return line;
}

// The first "FILE(LINE): error: …" of the log, plus the source line when FILE is the generated
// source itself (other names are #line names of model code, already in the message).
std::string firstError(const std::string& log, const std::string& source, const std::string& name) {
    std::istringstream in(log);
    for (std::string line; std::getline(in, line);) {
        if (line.find(": error") == std::string::npos) continue;
        if (line.rfind(name + "(", 0) != 0) return line;
        const long n = std::strtol(line.c_str() + name.size() + 1, nullptr, 10);
        return line + "\n  line " + std::to_string(n) + " of " + name + ": " + lineOf(source, n);
    }
    return log.substr(0, log.find('\n'));
}

struct ProgramGuard {
    Program p = nullptr;
    ~ProgramGuard() {
        if (p) api().destroy(&p);
    }
};

} // namespace

const NvrtcInfo& nvrtcInfo() {
    return api().info;
}

CompiledCuda compileCuda(const std::string& source, int major, int minor,
                         const std::vector<std::string>& options, const std::string& name) {
    if (!api().info.available) throw BackendError(api().info.reason);
    const std::string arch =
        "--gpu-architecture=sm_" + std::to_string(major) + std::to_string(minor);
    std::vector<const char*> opts{arch.c_str()};
    for (const auto& o : options)
        opts.push_back(o.c_str());
    ProgramGuard g;
    check(api().create(&g.p, source.c_str(), name.c_str(), 0, nullptr, nullptr),
          "nvrtcCreateProgram");
    const int result = api().compile(g.p, int(opts.size()), opts.data());
    CompiledCuda out;
    out.log = programLog(g.p);
    if (result != 0)
        throw BackendError("NVRTC could not compile " + name + " for sm_" + std::to_string(major) +
                           std::to_string(minor) + " (" + api().errorString(result) +
                           "): " + firstError(out.log, source, name) + "\nNVRTC log:\n" + out.log);
    size_t n = 0;
    check(api().cubinSize(g.p, &n), "nvrtcGetCUBINSize");
    out.cubin.resize(n);
    check(api().cubin(g.p, out.cubin.data()), "nvrtcGetCUBIN");
    return out;
}

} // namespace spikeforge::cuda
