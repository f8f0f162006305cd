// Built only with the cuda layer (file name cuda_*: CMake leaves it out otherwise).
// The CUDA compile check: with SPIKEFORGE_CUDA_COMPILE_CHECK=1 in the environment, every plan
// the tests lower (codegen::setPlanObserver) is generated in the CUDA dialect and compiled with
// NVRTC for sm_80 and sm_90; a source that does not compile fails the test that lowered it. The
// ctest shards run the whole suite this way (CMakeLists.txt), so every model of every test is
// compile-tested for CUDA on machines without a GPU. Each source is compiled with the options
// the cuda backend would use for the test's model: the quick build's under
// SPIKEFORGE_QUICK_BUILD=1, as the suite runs (cudaCompileOptions), and one source in eight
// (chosen by its hash, so the same in every run and shard) with the release build's options
// as well, which keeps them covered across every kind of model the suite builds. Identical sources
// are compiled once per run: a source that compiled leaves a marker in the generated-code cache
// ($SPIKEFORGE_CACHE), keyed by the source, the options, the architecture and the NVRTC version,
// which the other shards (and later runs) find; a failure leaves none, so it fails again wherever
// it appears.
#include "backends/common/cache_dir.hpp"
#include "backends/common/cache_entry.hpp"
#include "backends/common/optimisation.hpp"
#include "backends/common/sha256.hpp"
#include "backends/cuda/cuda_dialect.hpp"
#include "backends/cuda/nvrtc.hpp"
#include "backends/simt/simt.hpp"
#include "codegen/plan_observer.hpp"
#include "spikeforge/errors.hpp"
#include "spikeforge/simulation.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <iostream>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

using namespace spikeforge;

namespace {

constexpr std::pair<int, int> kArchitectures[] = {{8, 0}, {9, 0}}; // compute capabilities

bool checkRequested() {
    const char* v = std::getenv("SPIKEFORGE_CUDA_COMPILE_CHECK");
    return v && std::strcmp(v, "") != 0 && std::strcmp(v, "0") != 0;
}

// The marker of a source that compiled for (major, minor) with `options`.
std::filesystem::path markerPath(const std::filesystem::path& dir, const std::string& key) {
    return dir / (key + ".nvrtc-ok");
}

std::string markerKey(const std::string& source, const std::vector<std::string>& options, int major,
                      int minor) {
    backends::Sha256 h;
    h.field("spikeforge-cuda-compile-check-1");
    h.field(source);
    for (const auto& o : options)
        h.field(o);
    h.field("sm " + std::to_string(major) + "." + std::to_string(minor));
    h.field("nvrtc " + std::to_string(cuda::nvrtcInfo().major) + "." +
            std::to_string(cuda::nvrtcInfo().minor));
    return h.hexDigest();
}

struct Counts {
    size_t plans = 0, compiled = 0, cached = 0, failed = 0;
    double seconds = 0; // [s] in generation and NVRTC
};

class CudaCompileCheck : public ::testing::Environment {
public:
    // NVRTC is loaded at the first plan, not here: a death test re-runs this binary with the
    // same environment to try a missing NVRTC library, which must not be loaded before it.
    void SetUp() override {
        if (!checkRequested()) return;
        codegen::setPlanObserver([this](const codegen::Plan& plan) { check(plan); });
        active = true;
    }

    void TearDown() override {
        if (!active) return;
        codegen::setPlanObserver({});
        std::cout << "[cuda compile check] " << counts.plans << " plans, " << counts.compiled
                  << " distinct sources compiled for sm_80 and sm_90 (quick options; one in "
                     "eight also with the release options) ("
                  << counts.cached << " more compiled earlier in this run or cache), "
                  << counts.failed << " failed, " << counts.seconds << " s\n";
    }

    bool active = false;
    Counts counts;

private:
    void check(const codegen::Plan& plan) {
        if (!cuda::nvrtcInfo().available) return; // NvrtcLoadsWhenRequested says why
        const auto t0 = std::chrono::steady_clock::now();
        counts.plans++;
        simt::Program program;
        try {
            program = simt::generate(plan, cuda::cudaDialect());
        } catch (const std::exception& e) {
            counts.failed++;
            ADD_FAILURE() << "the SIMT generator failed on a plan in the CUDA dialect: "
                          << e.what();
            return;
        }
        if (seen.insert(program.source).second) compile(program.source);
        counts.seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }

    // Compiles `source` for every architecture whose marker is missing; the architectures
    // compile at once (NVRTC programs are independent), the failures are reported here, in the
    // test's thread.
    void compile(const std::string& source) {
        const BackendPreferences suite; // Auto: the environment decides, as for the suite's models
        const std::filesystem::path dir = backends::cache::prepare(suite);
        std::vector<std::vector<std::string>> optionSets{
            cuda::cudaCompileOptions(false, backends::quickBuild(suite))};
        if (const auto release = cuda::cudaCompileOptions(false, false);
            release != optionSets.front() && alsoRelease(source))
            optionSets.push_back(release);
        std::vector<std::pair<std::string, std::future<std::string>>> results;
        for (const auto& options : optionSets)
            for (const auto& [major, minor] : kArchitectures) {
                const std::string key = markerKey(source, options, major, minor);
                if (std::filesystem::exists(markerPath(dir, key))) continue;
                results.emplace_back(key, std::async(std::launch::async, [&, major, minor] {
                                         try {
                                             cuda::compileCuda(source, major, minor, options);
                                         } catch (const BackendError& e) {
                                             return std::string(e.what());
                                         }
                                         return std::string();
                                     }));
            }
        (results.empty() ? counts.cached : counts.compiled)++;
        for (auto& [key, result] : results) {
            if (const std::string e = result.get(); !e.empty()) {
                counts.failed++;
                ADD_FAILURE() << "generated CUDA does not compile: " << e;
            } else {
                backends::cache::publish(dir, key, markerPath(dir, key), "compiled\n");
            }
        }
    }

    // One source in eight by its hash is also compiled with the release build's options.
    static bool alsoRelease(const std::string& source) {
        backends::Sha256 h;
        h.field(source);
        return h.hexDigest()[0] < '2';
    }

    std::unordered_set<std::string> seen; // sources checked so far in this process
};

CudaCompileCheck* const checker =
    static_cast<CudaCompileCheck*>(::testing::AddGlobalTestEnvironment(new CudaCompileCheck));

} // namespace

// Says, in the check's run, why nothing is compiled where NVRTC is missing.
TEST(CudaCompileCheck, NvrtcLoadsWhenRequested) {
    if (!checkRequested()) GTEST_SKIP() << "SPIKEFORGE_CUDA_COMPILE_CHECK is not set";
    if (!cuda::nvrtcInfo().available) GTEST_SKIP() << cuda::nvrtcInfo().reason;
    EXPECT_TRUE(checker->active);
}

// The seam itself: a model built in this process reaches the observer (each shard of the run
// has its own process, so each would say here if the check saw nothing).
TEST(CudaCompileCheck, TheObserverSeesTheModelsTheTestsBuild) {
    if (!checkRequested()) GTEST_SKIP() << "SPIKEFORGE_CUDA_COMPILE_CHECK is not set";
    if (!cuda::nvrtcInfo().available) GTEST_SKIP() << cuda::nvrtcInfo().reason;
    const size_t before = checker->counts.plans;
    Model m("compile_check_seam");
    NeuronModel counter;
    counter.name = "Counter";
    counter.vars = {{"x", "scalar"}};
    counter.simCode = "x += 1.0;";
    m.addNeuronGroup("N", 3, counter, {}, {{"x", 0.0}});
    Simulation sim(m);
    EXPECT_EQ(checker->counts.plans, before + 1) << "the CUDA compile check saw no plan";
}
