#pragma once
#include "backends/backend.hpp"

#include <filesystem>

namespace spikeforge::cpu {

class CpuBackend : public backends::Backend {
public:
    // Throws ModelError for a negative thread count.
    explicit CpuBackend(BackendPreferences prefs);
    std::string name() const override { return "cpu"; }
    std::unique_ptr<backends::Device> build(const codegen::Plan& plan, BuildInfo& info) override;

private:
    BackendPreferences m_prefs;
    unsigned m_threads = 1; // OpenMP threads of every kernel (prefs.threads, 0 = all cores)
};

std::filesystem::path cacheDirectory(const BackendPreferences& prefs);
// Empty when the system compiler works, else the reason it does not.
std::string compilerStatus(const BackendPreferences& prefs);

} // namespace spikeforge::cpu
