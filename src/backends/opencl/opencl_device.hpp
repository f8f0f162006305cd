#pragma once
// The OpenCL device: a context and an in-order command queue on one device, buffers as cl_mem,
// and the program build helper the SIMT generator's kernels will go through. Binding tables and
// launching plan kernels wait for that generator (issue #8).
#include "backends/device.hpp"
#include "backends/opencl/platforms.hpp"

#include <memory>
#include <string>
#include <unordered_map>

namespace spikeforge::opencl {

// A kernel of a built Program. Owns its cl_kernel.
class Kernel {
public:
    Kernel(cl_kernel kernel, std::string name) : m_kernel(kernel), m_name(std::move(name)) {}
    Kernel(Kernel&& other) noexcept;
    Kernel& operator=(Kernel&&) = delete;
    Kernel(const Kernel&) = delete;
    ~Kernel();

    // A buffer argument: a handle from OpenClDevice::allocate (nullptr: a null buffer).
    void setBuffer(unsigned index, backends::Buffer buffer);
    // A scalar argument, passed by value (its size must match the kernel's parameter).
    template <typename T> void setValue(unsigned index, const T& value) {
        setRaw(index, sizeof value, &value);
    }
    cl_kernel handle() const { return m_kernel; }
    const std::string& name() const { return m_name; }

private:
    void setRaw(unsigned index, size_t size, const void* value);
    cl_kernel m_kernel;
    std::string m_name;
};

// A program built for one device. Owns its cl_program.
class Program {
public:
    explicit Program(cl_program program) : m_program(program) {}
    Program(Program&& other) noexcept;
    Program& operator=(Program&&) = delete;
    Program(const Program&) = delete;
    ~Program();

    // The kernel function `name`; BackendError naming it if the program has none.
    Kernel kernel(const std::string& name) const;
    cl_program handle() const { return m_program; }

private:
    cl_program m_program;
};

class OpenClDevice : public backends::Device {
public:
    // Opens the device BackendPreferences::device `selector` names (platforms.hpp).
    static std::unique_ptr<OpenClDevice> open(const std::string& selector);
    explicit OpenClDevice(const DeviceInfo& device);
    ~OpenClDevice() override;
    OpenClDevice(const OpenClDevice&) = delete;
    OpenClDevice& operator=(const OpenClDevice&) = delete;

    std::string name() const override { return "opencl"; }
    const DeviceInfo& info() const { return m_info; }

    // Buffers are the cl_mem handles themselves (a cl_mem is a pointer, so it fits
    // backends::Buffer); the device remembers each one's size to check copies against it.
    backends::Buffer allocate(size_t bytes) override; // zero-filled; nullptr for 0 bytes
    size_t memoryCapacity() const override;           // [B] CL_DEVICE_GLOBAL_MEM_SIZE
    void release(backends::Buffer buffer) override;
    void zero(backends::Buffer buffer, size_t bytes) override;
    void synchronise() override;

    // Not before the SIMT generator: they throw InternalError.
    void bindTable(size_t table, const std::vector<std::vector<backends::FieldValue>>&) override;
    void launch(size_t kernel, const codegen::abi::StepArgs&) override;

    // Builds OpenCL C `source` for this device with compiler `options` ("-cl-std=CL1.2 …").
    // A program that does not build is a BackendError with the compiler's build log.
    Program buildProgram(const std::string& source, const std::string& options) const;
    // Enqueues `kernel` over `global` work-items (1-D) in work-groups of `local` work-items
    // (0: the platform chooses); returns without waiting (synchronise waits).
    void enqueue(const Kernel& kernel, size_t global, size_t local = 0);

    cl_context context() const { return m_context; }
    cl_command_queue queue() const { return m_queue; }
    // The cl_mem behind a handle from allocate; InternalError for a handle it did not make.
    cl_mem memOf(backends::Buffer buffer) const;

protected:
    void writeBuffer(backends::Buffer dst, const void* src, size_t bytes) override;
    void readBuffer(void* dst, backends::Buffer src, size_t bytes) override;

private:
    void fill(cl_mem mem, size_t bytes);
    void checkRange(backends::Buffer buffer, size_t bytes, const char* what) const;

    DeviceInfo m_info;
    cl_context m_context = nullptr;
    cl_command_queue m_queue = nullptr;
    std::unordered_map<backends::Buffer, size_t> m_sizes; // [B] of every live buffer
};

} // namespace spikeforge::opencl
