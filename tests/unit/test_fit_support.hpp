#pragma once
// Shared by the fit tests: a small Yin-Yang network that compiles and trains in seconds on the
// cpu backend, and temporary paths removed at the end of a test.
#include "spikeforge/train/fit.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

namespace fit_test {

namespace fs = std::filesystem;
using namespace spikeforge::train;

// 5 inputs (Yin-Yang with bias) -> `hidden` LIF -> 3 leaky integrators read out by SumVar.
inline Network yinYangNetwork(uint32_t hidden = 32) {
    Network net;
    net.addSpikeInput("In", {5});
    net.addLif("Hid", hidden, {20.0, 1.0, 16});
    net.addLeakyIntegrate("Out", 3, {20.0, Readout::SumVar});
    net.addConnection("InHid", "In", "Hid", {{1.5, 0.78}, 5.0});
    net.addConnection("HidOut", "Hid", "Out", {{0.0, 0.1}, 5.0});
    return net;
}

// dt 1 ms over the 60 ms of a Yin-Yang example.
inline EventPropOptions yinYangOptions(uint32_t batch = 16) {
    EventPropOptions o;
    o.exampleTimesteps = 60;
    o.dt = 1.0;
    o.batchSize = batch;
    o.seed = 7;
    o.adam.learningRate = 1e-2;
    return o;
}

inline std::unique_ptr<EventPropCompiler> yinYangCompiler(uint32_t hidden = 32,
                                                          uint32_t batch = 16) {
    spikeforge::BackendPreferences prefs;
    prefs.backend = "cpu";
    prefs.threads = 1; // the machine is shared; one thread keeps sums in a fixed order too
    return std::make_unique<EventPropCompiler>(yinYangNetwork(hidden), yinYangOptions(batch),
                                               prefs);
}

// The metrics of `c` over every example of `data` (which becomes its dataset).
inline Metrics evaluateAll(EventPropCompiler& c, const EventDataset& data) {
    c.setDataset(data);
    std::vector<uint32_t> all(data.size());
    for (uint32_t i = 0; i < all.size(); i++)
        all[i] = i;
    return c.evaluate(all);
}

// A fresh path under the temporary directory, removed (recursively) when this goes away.
class TempPath {
public:
    explicit TempPath(const std::string& suffix = "") {
        static std::atomic<int> counter{0};
        const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
        m_path =
            fs::temp_directory_path() / ("sf_fit_" + std::to_string(::getpid()) + "_" +
                                         test->name() + "_" + std::to_string(counter++) + suffix);
        fs::remove_all(m_path);
    }
    ~TempPath() {
        std::error_code ec;
        fs::remove_all(m_path, ec);
    }
    TempPath(const TempPath&) = delete;
    TempPath& operator=(const TempPath&) = delete;
    const fs::path& path() const { return m_path; }

private:
    fs::path m_path;
};

} // namespace fit_test
