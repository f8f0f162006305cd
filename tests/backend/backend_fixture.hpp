#pragma once
// Backend tests are written once and run for every backend usable on this machine (Kokkos
// style): TEST_P(BackendTest, …) gets the backend's name from GetParam().
#include "spikeforge/simulation.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace sftest {

// n floats uniform in [-3, 3) from a fixed seed: test inputs that are the same on every run.
inline std::vector<float> randomValues(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-3.0f, 3.0f);
    std::vector<float> v(n);
    for (auto& x : v)
        x = d(rng);
    return v;
}

inline std::vector<std::string> usableBackends() {
    std::vector<std::string> out;
    for (const auto& b : spikeforge::availableBackends())
        if (b.usable) out.push_back(b.name);
    return out;
}

// The opencl backend with its GPU kernel forms forced (BackendPreferences::openclKernels): on a
// CPU device (PoCL) the backend picks the CPU forms, so the GPU ones run under this name too.
inline constexpr const char* kOpenClGpuKernels = "opencl_gpu_kernels";

// What the backend suite runs on: the usable backends, and opencl_gpu_kernels where opencl is
// usable (on a GPU device it repeats opencl: the forms are the same there).
inline std::vector<std::string> suiteBackends() {
    std::vector<std::string> out = usableBackends();
    for (const auto& b : out)
        if (b == "opencl") {
            out.push_back(kOpenClGpuKernels);
            break;
        }
    return out;
}

// Preferences for a name of suiteBackends().
inline spikeforge::BackendPreferences preferencesFor(const std::string& name) {
    spikeforge::BackendPreferences p;
    p.backend = name;
    if (name == kOpenClGpuKernels) {
        p.backend = "opencl";
        p.openclKernels = spikeforge::BackendPreferences::KernelForm::Gpu;
    }
    return p;
}

// `p` as a release build. The suite's models are quick builds (SPIKEFORGE_QUICK_BUILD=1: cpu
// -Og, PoCL without its optimiser), which compile in less time and run slower; a test whose time
// is the simulation itself, or that measures time, asks for Release (docs/testing.md).
inline spikeforge::BackendPreferences releaseBuild(spikeforge::BackendPreferences p) {
    p.optimisation = spikeforge::BackendPreferences::Optimisation::Release;
    return p;
}

// The message of the exception E that f throws ("" and a test failure when it throws none).
template <typename E, typename F> std::string errorOf(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    }
    ADD_FAILURE() << "no exception of the expected type";
    return {};
}

// Every fragment appears in msg.
inline void expectContains(const std::string& msg, std::initializer_list<std::string> fragments) {
    for (const auto& f : fragments)
        EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
}

// f throws E whose message contains every fragment.
template <typename E, typename F>
void expectError(F&& f, std::initializer_list<std::string> fragments) {
    expectContains(errorOf<E>(std::forward<F>(f)), fragments);
}

class BackendTest : public ::testing::TestWithParam<std::string> {
protected:
    // `threads` is the cpu backend's OpenMP thread count; other backends have none (and refuse
    // one), so it applies to cpu only.
    spikeforge::BackendPreferences prefs(int threads = 0) const {
        spikeforge::BackendPreferences p = preferencesFor(GetParam());
        if (p.backend == "cpu") p.threads = threads;
        return p;
    }
};

// (backend, batch size) for every suite backend and each of `batches`: the parameters of a
// fixture that runs at several batch sizes (SF_INSTANTIATE_BACKEND_BATCH_TESTS).
inline std::vector<std::tuple<std::string, unsigned>>
backendsAndBatches(std::initializer_list<unsigned> batches) {
    std::vector<std::tuple<std::string, unsigned>> out;
    for (const auto& b : suiteBackends())
        for (unsigned batch : batches)
            out.emplace_back(b, batch);
    return out;
}

} // namespace sftest

// A fixture parameterised by (backend, batch size), named "<backend>_batch<size>".
#define SF_INSTANTIATE_BACKEND_BATCH_TESTS(Fixture, ...)                                           \
    INSTANTIATE_TEST_SUITE_P(                                                                      \
        Backends, Fixture, ::testing::ValuesIn(sftest::backendsAndBatches({__VA_ARGS__})),         \
        [](const auto& info) {                                                                     \
            return std::get<0>(info.param) + "_batch" + std::to_string(std::get<1>(info.param));   \
        })

#define SF_INSTANTIATE_BACKEND_TESTS(Fixture)                                                      \
    INSTANTIATE_TEST_SUITE_P(Backends, Fixture, ::testing::ValuesIn(sftest::suiteBackends()),      \
                             [](const auto& info) { return info.param; })
