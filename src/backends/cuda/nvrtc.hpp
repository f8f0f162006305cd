#pragma once
// NVRTC, the CUDA run-time compiler, loaded with dlopen when first used: the library never links
// NVRTC (nor libcuda), so a build with the cuda layer runs on machines without the CUDA toolkit
// and says why cuda is unusable there.
//
// The library is $SPIKEFORGE_NVRTC (a file name or path) when set, else the first that loads of:
// the toolkit's that CMake found at build time (if any), then libnvrtc.so and the versioned
// names libnvrtc.so.13, .12, .11.2 on the loader's search path (LD_LIBRARY_PATH, ldconfig).
#include <string>
#include <vector>

namespace spikeforge::cuda {

// The name CUDA programs of the SIMT generator have in #line directives and NVRTC's messages.
inline constexpr const char* kSourceName = "spikeforge_generated.cu";

struct NvrtcInfo {
    bool available = false;
    std::string reason;       // why not, naming every library tried
    std::string library;      // the file that was loaded
    int major = 0, minor = 0; // NVRTC version, e.g. 13.0
};
// Loads NVRTC on the first call (thread-safe); later calls return the same answer.
const NvrtcInfo& nvrtcInfo();

struct CompiledCuda {
    std::vector<char> cubin; // machine code for sm_<major><minor>, for cuModuleLoadData
    std::string log;         // NVRTC's log (warnings), possibly empty
};

// Compiles `source` (CUDA C++, no headers) to a cubin for compute capability major.minor, with
// `options` (e.g. cudaCompileOptions()) besides the architecture. `name` is the file name
// NVRTC's messages use for lines of `source` outside #line directives. Throws BackendError when
// NVRTC is absent (nvrtcInfo().reason) or the source does not compile: then the message has the
// first error, the source line it names and the whole log.
CompiledCuda compileCuda(const std::string& source, int major, int minor,
                         const std::vector<std::string>& options,
                         const std::string& name = kSourceName);

} // namespace spikeforge::cuda
