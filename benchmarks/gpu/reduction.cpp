// Batch-reduction throughput of a GPU backend (opencl or cuda) against a device-to-device copy on
// the same device, measured in one run: the roofline of ../shared/REFERENCE.md, "Rooflines"
// (benchmarks/README.md, "GPU backends").
//
//   neuron E×B   a neuron-shaped custom update summing a float variable of E elements over a
//                batch of B (`sum = x;`, sum ReduceBatchSum). Bytes per call: E·4·(B+1), every
//                batch copy read once and the sum written once (../shared/REFERENCE.md,
//                "Rooflines"). E = 4096, B = 512 is the few-elements × large-batch shape.
//   weight P×Q×B the same over a Dense P×Q weight-shaped variable (addCustomUpdateWU).
//   copy         a device-to-device copy (backends::Device::copyBuffer: clEnqueueCopyBuffer,
//                cuMemcpyDtoDAsync) of N = E·4·(B+1)/2 bytes on the same device, counted as 2N
//                bytes (read + write): the same total traffic as the reduction it is compared
//                with (benchmarks/custom_update_reduction.cpp explains the choice).
//
// Each model is built and its result checked once (x = 1 everywhere, so every sum must equal B)
// before timing. A timed sample is K back-to-back calls closed by one synchronisation
// (Simulation::checkErrors for the reduction, Device::synchronise for the copy), K chosen so a
// sample lasts
// about 0.2 s; the median of --repeats samples is reported.
//
// Prints one line per configuration: reduction GB/s, copy GB/s, their ratio and PASS/FAIL for
// the target where E·B >= 1M (smaller ones are launch-bound and only reported): reduction >= 80 %
// of copy bandwidth on cuda (issue #9), >= 50 % on opencl (issue #8, where the device may be the
// CPU under PoCL). Exit status: 0 every target met, 1 one missed, 2 a failure or a bad argument.
//
// Options: --backend opencl|cuda (default opencl), --device SEL (BackendPreferences::device),
// --repeats R (default 5), --quick (two configurations). SPIKEFORGE_CACHE as usual.
//
// --copy-only [--copy-bytes N]: only the device's memory bandwidth, for a roofline measured in
// the same run as other benchmarks (benchmarks/gpu/run): a copy of N bytes (default 256 MiB)
// counted as 2N (read + write), printed as a line and, last, as one JSON line
// {"copy_gbs": …, "copy_bytes": N, "device": "…"}. Exit status 0, or 2 on a failure.
#if SPIKEFORGE_BACKEND_OPENCL
#include "backends/opencl/opencl_device.hpp"
#endif
#if SPIKEFORGE_BACKEND_CUDA
#include "backends/cuda/cuda_backend.hpp"
#include "backends/cuda/cuda_device.hpp"
#include "backends/cuda/cuda_driver.hpp"
#endif
#include "spikeforge/model.hpp"
#include "spikeforge/models.hpp"
#include "spikeforge/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using namespace spikeforge;
using A = CustomUpdateVarAccess;

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kSampleSeconds = 0.2;    // [s] target length of one timed sample
constexpr uint64_t kTargetFrom = 1 << 20; // E·B from which the target applies

struct Config {
    std::string label;
    uint64_t elements; // E: per batch element (neurons, or P·Q synapses)
    unsigned batch;    // B
    unsigned pre = 0;  // > 0: weight-shaped, P×Q = pre × (elements / pre)
};

struct Options {
    std::string backend = "opencl";
    std::string device;
    int repeats = 5;
    bool quick = false;
    bool copyOnly = false;
    uint64_t copyBytes = uint64_t(256) << 20; // [B] --copy-only
};

NeuronModel holder() {
    NeuronModel n;
    n.name = "Holder";
    n.vars = {{"x", "scalar", VarAccess::ReadWrite}};
    return n;
}

CustomUpdateModel batchSum() {
    CustomUpdateModel sum;
    sum.name = "BatchSum";
    sum.vars = {{"sum", "scalar", A::ReduceBatchSum}};
    sum.varRefs = {{"x", "scalar", A::ReadOnly}};
    sum.updateCode = "sum = x;";
    return sum;
}

// The model of `c`: every x = 1, one update group "Reduce".
std::unique_ptr<Model> reductionModel(const Config& c) {
    auto model = std::make_unique<Model>("bench_gpu_reduction");
    model->setBatchSize(c.batch);
    if (c.pre == 0) {
        model->addNeuronGroup("Pop", unsigned(c.elements), holder(), {}, {{"x", 1.0}});
        model->addCustomUpdate("Reduce", "Reduce", batchSum(), {}, {{"sum", 0.0}},
                               {{"x", {"Pop", "x"}}});
        return model;
    }
    const unsigned post = unsigned(c.elements / c.pre);
    model->addNeuronGroup("Pre", c.pre, holder(), {}, {{"x", 0.0}});
    model->addNeuronGroup("Post", post, holder(), {}, {{"x", 0.0}});
    WeightUpdateModel wu;
    wu.name = "Held";
    wu.vars = {{"x", "scalar", VarAccess::ReadWrite}};
    model->addSynapseGroup("Syn", MatrixType::Dense, 0, "Pre", "Post",
                           {wu, {}, {{"x", 1.0}}, {}, {}}, {models::DeltaCurr(), {}, {}});
    model->addCustomUpdateWU("Reduce", "Reduce", batchSum(), {}, {{"sum", 0.0}},
                             {{"x", {"Syn", "x"}}});
    return model;
}

// The median over `repeats` samples of the time of one call of `call` [s]; `sync` ends a sample.
double medianCallSeconds(const std::function<void()>& call, const std::function<void()>& sync,
                         int repeats) {
    auto t0 = Clock::now();
    call();
    sync();
    const double once = std::chrono::duration<double>(Clock::now() - t0).count();
    const int k = std::max(1, static_cast<int>(kSampleSeconds / std::max(once, 1e-6)));
    std::vector<double> samples;
    for (int r = 0; r < repeats; ++r) {
        t0 = Clock::now();
        for (int i = 0; i < k; ++i)
            call();
        sync();
        samples.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / k);
    }
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() / 2];
}

// Seconds per reduction call, after checking that every sum equals B.
double timeReduction(const Config& c, const Options& o) {
    const std::unique_ptr<Model> model = reductionModel(c);
    BackendPreferences prefs;
    prefs.backend = o.backend;
    prefs.device = o.device;
    Simulation sim(*model, prefs);
    sim.customUpdate("Reduce");
    sim.pull("Reduce", "sum");
    const auto sums = sim.view<float>("Reduce", "sum");
    for (size_t i = 0; i < sums.size(); ++i)
        if (sums[i] != float(c.batch))
            throw std::runtime_error(c.label + ": sum[" + std::to_string(i) +
                                     "] = " + std::to_string(sums[i]) + ", expected " +
                                     std::to_string(c.batch));
    return medianCallSeconds([&] { sim.customUpdate("Reduce"); }, [&] { sim.checkErrors(); },
                             o.repeats);
}

// Seconds per device-to-device copy of `bytes` on `device`.
double timeCopy(backends::Device& device, uint64_t bytes, int repeats) {
    const backends::Buffer src = device.allocate(bytes), dst = device.allocate(bytes);
    const double seconds = medianCallSeconds([&] { device.copyBuffer(dst, src, bytes); },
                                             [&] { device.synchronise(); }, repeats);
    device.release(src);
    device.release(dst);
    return seconds;
}

// --copy-only: the device's copy bandwidth [GB/s], as a line and a JSON line.
int printCopyBandwidth(backends::Device& device, const std::string& name, const Options& o) {
    const double gbs = 2.0 * double(o.copyBytes) / timeCopy(device, o.copyBytes, o.repeats) / 1e9;
    std::string quoted;
    for (char c : name)
        if (c != '"' && c != '\\') quoted += c; // a JSON string without escapes
    std::printf("%s: device-to-device copy of %llu bytes, median of %d samples: %.2f GB/s\n",
                name.c_str(), static_cast<unsigned long long>(o.copyBytes), o.repeats, gbs);
    std::printf("{\"copy_gbs\": %.4f, \"copy_bytes\": %llu, \"device\": \"%s\"}\n", gbs,
                static_cast<unsigned long long>(o.copyBytes), quoted.c_str());
    return 0;
}

std::vector<Config> configurations(bool quick) {
    if (quick) return {{"neuron 1M x 8", 1u << 20, 8}, {"neuron 4096 x 512", 4096, 512}};
    return {{"neuron 4096 x 512", 4096, 512}, {"neuron 64K x 32", 1u << 16, 32},
            {"neuron 1M x 1", 1u << 20, 1},   {"neuron 1M x 8", 1u << 20, 8},
            {"neuron 1M x 32", 1u << 20, 32}, {"weight 1024x1024 x 32", 1u << 20, 32, 1024}};
}

// The device the backend's simulations run on, opened directly for the copy, and its name.
std::unique_ptr<backends::Device> openDevice(const Options& o, std::string& name) {
#if SPIKEFORGE_BACKEND_OPENCL
    if (o.backend == "opencl") {
        auto device = opencl::OpenClDevice::open(o.device);
        name = "OpenCL device " + device->info().selector() + " " + device->info().name + " (" +
               device->info().platformName + ")";
        return device;
    }
#endif
#if SPIKEFORGE_BACKEND_CUDA
    if (o.backend == "cuda") {
        if (const std::string why = cuda::cudaStatus(); !why.empty())
            throw std::runtime_error("cuda cannot run here: " + why);
        const cuda::DriverApi& api = cuda::driver();
        int count = 0;
        cuda::check(api, api.cuDeviceGetCount(&count), "cuDeviceGetCount");
        const cuda::DeviceInfo info = cuda::queryDevice(api, cuda::selectDevice(o.device, count));
        name = "CUDA device " + std::to_string(info.ordinal) + " " + info.name + " (sm_" +
               std::to_string(info.major) + std::to_string(info.minor) + ")";
        return std::make_unique<cuda::CudaDevice>(api, info, 0);
    }
#endif
    throw std::runtime_error("backend '" + o.backend + "' is not a GPU backend of this build");
}

bool parse(int argc, char** argv, Options& o) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick") {
            o.quick = true;
        } else if (a == "--backend" && i + 1 < argc) {
            o.backend = argv[++i];
        } else if (a == "--device" && i + 1 < argc) {
            o.device = argv[++i];
        } else if (a == "--copy-only") {
            o.copyOnly = true;
        } else if (a == "--copy-bytes" && i + 1 < argc) {
            o.copyBytes = std::strtoull(argv[++i], nullptr, 10);
            if (o.copyBytes < 4096) return false;
        } else if (a == "--repeats" && i + 1 < argc) {
            o.repeats = std::atoi(argv[++i]);
            if (o.repeats < 1) return false;
        } else {
            return false;
        }
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    Options o;
    if (!parse(argc, argv, o)) {
        std::fprintf(stderr,
                     "usage: %s [--backend opencl|cuda] [--device SEL] [--repeats R] [--quick]\n"
                     "       %s --copy-only [--copy-bytes N >= 4096] [--backend …] [--device …]\n",
                     argv[0], argv[0]);
        return 2;
    }
    try {
        std::string name;
        const std::unique_ptr<backends::Device> device = openDevice(o, name);
        if (o.copyOnly) return printCopyBandwidth(*device, name, o);
        const double targetRatio = o.backend == "cuda" ? 0.8 : 0.5;
        std::printf("%s, median of %d samples\n\n", name.c_str(), o.repeats);
        std::printf("%-24s %12s %12s %12s %8s  %s\n", "configuration", "bytes/call", "reduce GB/s",
                    "copy GB/s", "ratio", "target");
        bool missed = false;
        for (const Config& c : configurations(o.quick)) {
            const uint64_t bytes = c.elements * sizeof(float) * (uint64_t(c.batch) + 1);
            const double reduce = double(bytes) / timeReduction(c, o) / 1e9; // [GB/s]
            const double copy = double(bytes) / timeCopy(*device, bytes / 2, o.repeats) / 1e9;
            const double ratio = reduce / copy;
            const bool applies = c.elements * c.batch >= kTargetFrom;
            const bool pass = ratio >= targetRatio;
            missed = missed || (applies && !pass);
            std::printf("%-24s %12llu %12.2f %12.2f %8.2f  %s\n", c.label.c_str(),
                        static_cast<unsigned long long>(bytes), reduce, copy, ratio,
                        applies ? (pass ? "PASS" : "FAIL") : "(launch-bound: not judged)");
            std::fflush(stdout);
        }
        std::printf("\ntarget: reduction >= %.0f %% of copy bandwidth where E*B >= %llu\n",
                    targetRatio * 100, static_cast<unsigned long long>(kTargetFrom));
        return missed ? 1 : 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_gpu_reduction: %s\n", e.what());
        return 2;
    }
}
