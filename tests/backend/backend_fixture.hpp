#pragma once
// Backend tests are written once and run for every backend usable on this machine (Kokkos
// style): TEST_P(BackendTest, …) gets the backend's name from GetParam().
#include "spikeforge/simulation.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sftest {

inline std::vector<std::string> usableBackends() {
    std::vector<std::string> out;
    for (const auto& b : spikeforge::availableBackends())
        if (b.usable) out.push_back(b.name);
    return out;
}

class BackendTest : public ::testing::TestWithParam<std::string> {
protected:
    spikeforge::BackendPreferences prefs(int threads = 0) const {
        spikeforge::BackendPreferences p;
        p.backend = GetParam();
        p.threads = threads;
        return p;
    }
};

} // namespace sftest

#define SF_INSTANTIATE_BACKEND_TESTS(Fixture)                                                      \
    INSTANTIATE_TEST_SUITE_P(Backends, Fixture, ::testing::ValuesIn(sftest::usableBackends()),     \
                             [](const auto& info) { return info.param; })
