#pragma once
// Backend tests are written once and run for every backend usable on this machine (Kokkos
// style): TEST_P(BackendTest, …) gets the backend's name from GetParam().
#include "spikeforge/simulation.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <random>
#include <string>
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
        spikeforge::BackendPreferences p;
        p.backend = GetParam();
        if (p.backend == "cpu") p.threads = threads;
        return p;
    }
};

} // namespace sftest

#define SF_INSTANTIATE_BACKEND_TESTS(Fixture)                                                      \
    INSTANTIATE_TEST_SUITE_P(Backends, Fixture, ::testing::ValuesIn(sftest::usableBackends()),     \
                             [](const auto& info) { return info.param; })
