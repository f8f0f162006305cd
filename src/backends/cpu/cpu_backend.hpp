#pragma once
#include "backends/backend.hpp"

#include <filesystem>

namespace spikeforge::cpu {

class CpuBackend : public backends::Backend {
public:
    explicit CpuBackend(BackendPreferences prefs) : m_prefs(std::move(prefs)) {}
    std::string name() const override { return "cpu"; }
    codegen::Plan generate(const Model& model) override;
    std::unique_ptr<runtime::Device> build(const codegen::Plan& plan, BuildInfo& info) override;

private:
    BackendPreferences m_prefs;
};

std::filesystem::path cacheDirectory(const BackendPreferences& prefs);
// Empty when the system compiler works, else the reason it does not.
std::string compilerStatus(const BackendPreferences& prefs);

} // namespace spikeforge::cpu
