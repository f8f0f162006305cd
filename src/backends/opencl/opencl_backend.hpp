#pragma once
// The opencl backend: the SIMT kernels printed in OpenCL C, built at run time for the device
// BackendPreferences::device selects, run on one in-order queue.
#include "backends/backend.hpp"

namespace spikeforge::opencl {

class OpenClBackend : public backends::Backend {
public:
    explicit OpenClBackend(BackendPreferences prefs);
    std::string name() const override { return "opencl"; }
    std::unique_ptr<backends::Device> build(const codegen::Plan& plan, BuildInfo& info) override;

private:
    BackendPreferences m_prefs;
};

} // namespace spikeforge::opencl
