// Built only with the cuda layer (file name cuda_*: CMake leaves it out otherwise).
// The CUDA compile check: with SPIKEFORGE_CUDA_COMPILE_CHECK=1 in the environment, every plan
// the tests lower (codegen::setPlanObserver) is generated in the CUDA dialect and compiled with
// NVRTC for sm_80 and sm_90; a source that does not compile fails the test that lowered it. The
// ctest entry cuda_compile_check runs the backend suite on cpu this way (CMakeLists.txt), so
// every model of the suite is compile-tested for CUDA on machines without a GPU. Identical
// sources are compiled once.
#include "backends/cuda/cuda_dialect.hpp"
#include "backends/cuda/nvrtc.hpp"
#include "backends/simt/simt.hpp"
#include "codegen/plan_observer.hpp"
#include "spikeforge/errors.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
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

struct Counts {
    size_t plans = 0, compiled = 0, failed = 0;
    double seconds = 0; // [s] in generation and NVRTC
};

class CudaCompileCheck : public ::testing::Environment {
public:
    void SetUp() override {
        if (!checkRequested() || !cuda::nvrtcInfo().available) return;
        codegen::setPlanObserver([this](const codegen::Plan& plan) { check(plan); });
        active = true;
    }

    void TearDown() override {
        if (!active) return;
        codegen::setPlanObserver({});
        std::cout << "[cuda compile check] " << counts.plans << " plans, " << counts.compiled
                  << " distinct sources compiled for sm_80 and sm_90, " << counts.failed
                  << " failed, " << counts.seconds << " s\n";
        // The observer must have seen the suite's plans: none means the seam is broken.
        EXPECT_GT(counts.compiled, 0u) << "the CUDA compile check saw no plan";
    }

    bool active = false;
    Counts counts;

private:
    void check(const codegen::Plan& plan) {
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
        if (seen.insert(program.source).second) {
            counts.compiled++;
            // The architectures compile at once (NVRTC programs are independent); the failures
            // are reported here, in the test's thread.
            std::vector<std::future<std::string>> errors;
            for (const auto& [major, minor] : kArchitectures)
                errors.push_back(std::async(std::launch::async, [&, major, minor] {
                    try {
                        cuda::compileCuda(program.source, major, minor, cuda::cudaCompileOptions());
                    } catch (const BackendError& e) {
                        return std::string(e.what());
                    }
                    return std::string();
                }));
            for (auto& f : errors)
                if (const std::string e = f.get(); !e.empty()) {
                    counts.failed++;
                    ADD_FAILURE() << "generated CUDA does not compile: " << e;
                }
        }
        counts.seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }

    std::unordered_set<std::string> seen; // sources compiled so far
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
