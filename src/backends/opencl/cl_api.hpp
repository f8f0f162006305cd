#pragma once
// The OpenCL C API as the opencl backend uses it: OpenCL 1.2 calls only (every platform of the
// last decade has them: PoCL, NVIDIA, AMD, Intel), and failed calls as BackendError.
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <string>

namespace spikeforge::opencl {

// The name of an OpenCL error code: "CL_OUT_OF_RESOURCES" for -5; "OpenCL error -9999" for a
// code no header names.
std::string errorName(cl_int code);

// Throws BackendError("OpenCL call <call> failed: <name>[ (<context>)]") unless `code` is
// CL_SUCCESS. `context` names what was being done (a device, a buffer size, a kernel).
void check(cl_int code, const char* call, const std::string& context = {});

} // namespace spikeforge::opencl
