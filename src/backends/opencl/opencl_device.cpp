#include "backends/opencl/opencl_device.hpp"

#include "spikeforge/errors.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

namespace spikeforge::opencl {

namespace {

// Longest build log a BackendError carries [characters]: enough for the first errors.
constexpr size_t maxLogChars = 8000;

std::string buildLog(cl_program program, cl_device_id device) {
    size_t size = 0;
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
        CL_SUCCESS)
        return "(no build log)";
    std::string log(size, '\0');
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) !=
        CL_SUCCESS)
        return "(no build log)";
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
        log.pop_back();
    if (log.size() > maxLogChars) log = log.substr(0, maxLogChars) + "\n… (log truncated)";
    return log.empty() ? "(empty build log)" : log;
}

// The process's context for `device`, retained for the caller (who releases it). Every
// OpenClDevice on one device shares it, and it lives until the process ends: PoCL gives each
// context its own LLVM context and loads its kernel library (megabytes of bitcode) into it at the
// context's first program build, so a context per simulation spent more time loading that
// library than building the program (a test of variable initialisers: 52 % of its time).
cl_context sharedContext(const DeviceInfo& device, const std::string& where) {
    static std::mutex mutex;
    // Never destroyed: a context must outlive every simulation, including those that static
    // objects hold, and releasing one while the OpenCL runtime unloads is not safe.
    static auto* const contexts = new std::map<cl_device_id, cl_context>;
    const std::lock_guard<std::mutex> lock(mutex);
    auto it = contexts->find(device.id);
    if (it == contexts->end()) {
        cl_int err = CL_SUCCESS;
        const cl_context context = clCreateContext(nullptr, 1, &device.id, nullptr, nullptr, &err);
        check(err, "clCreateContext", where);
        it = contexts->emplace(device.id, context).first;
    }
    check(clRetainContext(it->second), "clRetainContext", where);
    return it->second;
}

} // namespace

// ---- Kernel, Program ----

Kernel::Kernel(Kernel&& other) noexcept
    : m_kernel(std::exchange(other.m_kernel, nullptr)), m_name(std::move(other.m_name)) {}

Kernel::~Kernel() {
    if (m_kernel) clReleaseKernel(m_kernel);
}

void Kernel::setBuffer(unsigned index, backends::Buffer buffer) {
    const cl_mem mem = static_cast<cl_mem>(buffer);
    setRaw(index, sizeof mem, &mem);
}

void Kernel::setRaw(unsigned index, size_t size, const void* value) {
    // The message is built only on failure: this runs for every launch of every step.
    const cl_int err = clSetKernelArg(m_kernel, index, size, value);
    if (err != CL_SUCCESS)
        check(err, "clSetKernelArg", "kernel " + m_name + ", argument " + std::to_string(index));
}

Program::Program(Program&& other) noexcept : m_program(std::exchange(other.m_program, nullptr)) {}

Program::~Program() {
    if (m_program) clReleaseProgram(m_program);
}

Kernel Program::kernel(const std::string& name) const {
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(m_program, name.c_str(), &err);
    check(err, "clCreateKernel", "kernel " + name);
    return Kernel(k, name);
}

// ---- OpenClDevice ----

std::unique_ptr<OpenClDevice> OpenClDevice::open(const std::string& selector) {
    const std::vector<PlatformInfo> platforms = discoverPlatforms();
    return std::make_unique<OpenClDevice>(selectDevice(platforms, selector));
}

OpenClDevice::OpenClDevice(const DeviceInfo& device) : m_info(device) {
    const std::string where = "device " + device.selector() + " " + device.name;
    cl_int err = CL_SUCCESS;
    m_context = sharedContext(device, where);
    // In order: each kernel sees the writes of the copies and kernels enqueued before it. With
    // profiling for busySeconds where the platform allows it, else without (busy time unknown).
    m_queue = clCreateCommandQueue(m_context, device.id, CL_QUEUE_PROFILING_ENABLE, &err);
    m_profiling = err == CL_SUCCESS;
    if (!m_profiling) m_queue = clCreateCommandQueue(m_context, device.id, 0, &err);
    if (err != CL_SUCCESS) {
        clReleaseContext(m_context);
        check(err, "clCreateCommandQueue", where);
    }
}

OpenClDevice::~OpenClDevice() {
    // Errors are ignored here: a destructor must not throw, and the buffers go anyway.
    clFinish(m_queue);
    releasePending();
    m_launches.clear();
    m_tableStore.reset();
    m_program.reset();
    for (const auto& [buffer, bytes] : m_sizes)
        clReleaseMemObject(static_cast<cl_mem>(buffer));
    clReleaseCommandQueue(m_queue);
    clReleaseContext(m_context);
}

cl_mem OpenClDevice::memOf(backends::Buffer buffer) const {
    if (!m_sizes.count(buffer))
        throw InternalError("OpenClDevice: a buffer handle this device did not allocate");
    return static_cast<cl_mem>(buffer);
}

backends::Buffer OpenClDevice::allocate(size_t bytes) {
    if (bytes == 0) return nullptr;
    if (bytes > m_info.maxAllocationBytes)
        throw BackendError("allocating " + std::to_string(bytes) + " bytes on OpenCL device " +
                           m_info.selector() + " " + m_info.name +
                           ": more than its largest buffer (CL_DEVICE_MAX_MEM_ALLOC_SIZE = " +
                           std::to_string(m_info.maxAllocationBytes) + " bytes)");
    cl_int err = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(m_context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
    check(err, "clCreateBuffer", std::to_string(bytes) + " bytes");
    try {
        fill(mem, bytes);
    } catch (...) {
        clReleaseMemObject(mem);
        throw;
    }
    m_sizes.emplace(static_cast<backends::Buffer>(mem), bytes);
    m_serials[static_cast<backends::Buffer>(mem)] = ++m_lastSerial;
    return mem;
}

size_t OpenClDevice::memoryCapacity() const {
    return static_cast<size_t>(m_info.globalMemoryBytes);
}

void OpenClDevice::release(backends::Buffer buffer) {
    if (!buffer) return;
    const cl_mem mem = memOf(buffer);
    m_sizes.erase(buffer);
    m_serials.erase(buffer);
    // Kernels reach most buffers through pointers stored in the merged-group tables, which
    // OpenCL does not track: it would free a buffer a queued kernel still writes. Wait first
    // (releases are rare: teardown and resizing an extra global parameter).
    check(clFinish(m_queue), "clFinish");
    check(clReleaseMemObject(mem), "clReleaseMemObject");
}

void OpenClDevice::zero(backends::Buffer buffer, size_t bytes) {
    if (bytes == 0) return;
    checkRange(buffer, bytes, "zero");
    timed([&] { fill(static_cast<cl_mem>(buffer), bytes); });
}

void OpenClDevice::copyBuffer(backends::Buffer dst, backends::Buffer src, size_t bytes) {
    if (bytes == 0) return;
    checkRange(dst, bytes, "copyBuffer");
    checkRange(src, bytes, "copyBuffer");
    timed([&] {
        check(clEnqueueCopyBuffer(m_queue, memOf(src), memOf(dst), 0, 0, bytes, 0, nullptr,
                                  firstEvent()),
              "clEnqueueCopyBuffer", std::to_string(bytes) + " bytes");
    });
}

void OpenClDevice::fill(cl_mem mem, size_t bytes) {
    // A 4-byte pattern where the size allows it: the common case, and faster on GPUs.
    const uint32_t zero = 0;
    const size_t pattern = bytes % 4 == 0 ? 4 : 1;
    check(clEnqueueFillBuffer(m_queue, mem, &zero, pattern, 0, bytes, 0, nullptr, firstEvent()),
          "clEnqueueFillBuffer", std::to_string(bytes) + " bytes");
}

void OpenClDevice::checkRange(backends::Buffer buffer, size_t bytes, const char* what) const {
    const auto it = m_sizes.find(buffer);
    if (it == m_sizes.end())
        throw InternalError(std::string("OpenClDevice::") + what +
                            ": a buffer handle this device did not allocate");
    if (bytes > it->second)
        throw InternalError(std::string("OpenClDevice::") + what + " of " + std::to_string(bytes) +
                            " bytes on a buffer of " + std::to_string(it->second));
}

void OpenClDevice::writeBuffer(backends::Buffer dst, const void* src, size_t bytes) {
    if (bytes == 0) return;
    checkRange(dst, bytes, "copyToDevice");
    check(clEnqueueWriteBuffer(m_queue, static_cast<cl_mem>(dst), CL_TRUE, 0, bytes, src, 0,
                               nullptr, nullptr),
          "clEnqueueWriteBuffer", std::to_string(bytes) + " bytes");
}

void OpenClDevice::readBuffer(void* dst, backends::Buffer src, size_t bytes) {
    if (bytes == 0) return;
    checkRange(src, bytes, "copyFromDevice");
    check(clEnqueueReadBuffer(m_queue, static_cast<cl_mem>(src), CL_TRUE, 0, bytes, dst, 0, nullptr,
                              nullptr),
          "clEnqueueReadBuffer", std::to_string(bytes) + " bytes");
    collectBusy(false); // a blocking read on an in-order queue: every pair has finished
}

void OpenClDevice::synchronise() {
    check(clFinish(m_queue), "clFinish");
    collectBusy(true);
}

Program OpenClDevice::buildProgram(const std::string& source, const std::string& options) const {
    const char* text = source.c_str();
    const size_t length = source.size();
    cl_int err = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(m_context, 1, &text, &length, &err);
    check(err, "clCreateProgramWithSource");
    Program owned(program);
    err = clBuildProgram(program, 1, &m_info.id, options.c_str(), nullptr, nullptr);
    if (err == CL_BUILD_PROGRAM_FAILURE || err == CL_INVALID_BUILD_OPTIONS)
        throw BackendError("OpenCL C program does not build on device " + m_info.selector() + " " +
                           m_info.name + " (clBuildProgram: " + errorName(err) + ", options '" +
                           options + "'):\n" + buildLog(program, m_info.id));
    check(err, "clBuildProgram", "device " + m_info.selector() + " " + m_info.name);
    return owned;
}

void OpenClDevice::enqueue(const Kernel& kernel, size_t global, size_t local) {
    if (global == 0) return; // OpenCL refuses an empty range; there is nothing to run
    const cl_int err = clEnqueueNDRangeKernel(m_queue, kernel.handle(), 1, nullptr, &global,
                                              local ? &local : nullptr, 0, nullptr, firstEvent());
    if (err != CL_SUCCESS)
        check(err, "clEnqueueNDRangeKernel",
              "kernel " + kernel.name() + ", " + std::to_string(global) + " work-items");
}

void OpenClDevice::enqueue2d(const Kernel& kernel, size_t global0, size_t global1, size_t local0) {
    if (global0 == 0 || global1 == 0) return;
    const size_t global[2] = {global0, global1};
    const size_t local[2] = {local0, 1};
    const cl_int err = clEnqueueNDRangeKernel(m_queue, kernel.handle(), 2, nullptr, global,
                                              local0 ? local : nullptr, 0, nullptr, firstEvent());
    if (err != CL_SUCCESS) // the message is built only on failure (every launch of every step)
        check(err, "clEnqueueNDRangeKernel",
              "kernel " + kernel.name() + ", " + std::to_string(global0) + " x " +
                  std::to_string(global1) + " work-items");
}

} // namespace spikeforge::opencl
