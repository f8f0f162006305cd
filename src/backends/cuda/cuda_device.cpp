#include "backends/cuda/cuda_device.hpp"

#include "codegen/ctype.hpp"
#include "spikeforge/errors.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>

namespace spikeforge::cuda {

namespace {

// Largest pinned staging buffer for pulls [B]: bigger reads go through it in pieces, so a huge
// pull does not pin gigabytes of host memory.
constexpr size_t kMaxStagingBytes = size_t(64) << 20;
// Graphs kept per device: the runtime's pieces have few distinct shapes (the graph length, the
// remainders before recording flushes and error checks, a schedule's items); past this the cache
// starts over.
constexpr size_t kMaxCachedGraphs = 8;

std::atomic<uint64_t> g_graphLaunches{0};

CUdeviceptr pointerOf(backends::Buffer buffer) {
    return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(buffer));
}

backends::Buffer bufferOf(CUdeviceptr pointer) {
    return reinterpret_cast<backends::Buffer>(static_cast<uintptr_t>(pointer));
}

int attribute(const DriverApi& api, int attr, CUdevice device, const char* what) {
    int value = 0;
    check(api, api.cuDeviceGetAttribute(&value, attr, device), "cuDeviceGetAttribute", what);
    return value;
}

} // namespace

uint64_t graphLaunches() {
    return g_graphLaunches.load();
}

int selectDevice(const std::string& selector, int count) {
    if (count <= 0) throw BackendError("no CUDA device (the driver reports none)");
    if (selector.empty()) return 0;
    const bool digits =
        selector.size() <= 9 &&
        std::all_of(selector.begin(), selector.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits)
        throw ModelError("BackendPreferences::device ('" + selector +
                         "') must be a CUDA device index (0, 1, …) for the cuda backend");
    const int index = std::stoi(selector);
    if (index >= count)
        throw BackendError("BackendPreferences::device " + selector + ": there " +
                           (count == 1 ? std::string("is 1 CUDA device")
                                       : "are " + std::to_string(count) + " CUDA devices") +
                           " (indices 0 to " + std::to_string(count - 1) + ")");
    return index;
}

DeviceInfo queryDevice(const DriverApi& api, int ordinal) {
    DeviceInfo info;
    info.ordinal = ordinal;
    CUdevice device = 0;
    check(api, api.cuDeviceGet(&device, ordinal), "cuDeviceGet",
          "device " + std::to_string(ordinal));
    char name[256] = {};
    check(api, api.cuDeviceGetName(name, sizeof name - 1, device), "cuDeviceGetName");
    info.name = name;
    info.major = attribute(api, kAttrComputeCapabilityMajor, device, "compute capability");
    info.minor = attribute(api, kAttrComputeCapabilityMinor, device, "compute capability");
    info.multiprocessors = attribute(api, kAttrMultiprocessorCount, device, "multiprocessors");
    info.maxThreadsPerBlock = attribute(api, kAttrMaxThreadsPerBlock, device, "threads/block");
    info.maxGridX = attribute(api, kAttrMaxGridDimX, device, "grid size");
    info.maxGridY = attribute(api, kAttrMaxGridDimY, device, "grid size");
    return info;
}

// ---- lifetime ----

CudaDevice::CudaDevice(const DriverApi& api, DeviceInfo info, uint32_t graphSteps)
    : m_api(api), m_info(std::move(info)), m_graphSteps(graphSteps),
      m_graphsUsable(api.hasGraphs()), m_eventTiming(api.hasEventTiming()) {
    const std::string where = "CUDA device " + std::to_string(m_info.ordinal) + " " + m_info.name;
    check(api, api.cuDeviceGet(&m_device, m_info.ordinal), "cuDeviceGet", where);
    // The primary context: the one the CUDA runtime and other libraries in the process share,
    // so spikeforge coexists with them on the same GPU.
    check(api, api.cuDevicePrimaryCtxRetain(&m_context, m_device), "cuDevicePrimaryCtxRetain",
          where);
    try {
        makeCurrent();
        // Non-blocking: neither stream synchronises with the legacy default stream that other
        // code in the process may use.
        check(api, api.cuStreamCreate(&m_step, kStreamNonBlocking), "cuStreamCreate", where);
        check(api, api.cuStreamCreate(&m_copy, kStreamNonBlocking), "cuStreamCreate", where);
        check(api, api.cuEventCreate(&m_stepsDone, kEventDisableTiming), "cuEventCreate", where);
    } catch (...) {
        if (m_copy) api.cuStreamDestroy_v2(m_copy);
        if (m_step) api.cuStreamDestroy_v2(m_step);
        api.cuDevicePrimaryCtxRelease_v2(m_device);
        throw;
    }
}

CudaDevice::~CudaDevice() {
    // Errors are ignored here: a destructor must not throw, and the context goes anyway.
    m_api.cuCtxSetCurrent(m_context);
    m_api.cuStreamSynchronize(m_step);
    m_api.cuStreamSynchronize(m_copy);
    destroyGraphs();
    destroyEvents();
    if (m_module) m_api.cuModuleUnload(m_module);
    for (const auto& [buffer, bytes] : m_sizes)
        m_api.cuMemFree_v2(pointerOf(buffer));
    if (m_staging) m_api.cuMemFreeHost(m_staging);
    m_api.cuEventDestroy_v2(m_stepsDone);
    m_api.cuStreamDestroy_v2(m_copy);
    m_api.cuStreamDestroy_v2(m_step);
    m_api.cuDevicePrimaryCtxRelease_v2(m_device);
}

// The context is current per host thread; a Simulation may be used from any thread, so every
// entry point makes it current first (a cheap thread-local store in the driver).
void CudaDevice::makeCurrent() const {
    check(m_api, m_api.cuCtxSetCurrent(m_context), "cuCtxSetCurrent");
}

// ---- memory ----

backends::Buffer CudaDevice::allocate(size_t bytes) {
    if (bytes == 0) return nullptr;
    makeCurrent();
    CUdeviceptr pointer = 0;
    const CUresult r = m_api.cuMemAlloc_v2(&pointer, bytes);
    if (r != kSuccess)
        throw BackendError(errorMessage(&m_api, r, "cuMemAlloc_v2",
                                        std::to_string(bytes) + " bytes on CUDA device " +
                                            std::to_string(m_info.ordinal)));
    try {
        fill(pointer, bytes);
    } catch (...) {
        m_api.cuMemFree_v2(pointer);
        throw;
    }
    m_sizes.emplace(bufferOf(pointer), bytes);
    m_heldBytes += bytes;
    return bufferOf(pointer);
}

size_t CudaDevice::memoryCapacity() const {
    makeCurrent();
    size_t free = 0, total = 0;
    check(m_api, m_api.cuMemGetInfo_v2(&free, &total), "cuMemGetInfo_v2");
    return std::min(total, free + m_heldBytes);
}

void CudaDevice::release(backends::Buffer buffer) {
    if (!buffer) return;
    checkRange(buffer, 0, "release");
    makeCurrent();
    // Kernels reach most buffers through addresses stored in the merged-group tables, which the
    // driver does not track: wait for everything queued before freeing (releases are rare).
    synchronise();
    check(m_api, m_api.cuMemFree_v2(pointerOf(buffer)), "cuMemFree_v2");
    m_heldBytes -= m_sizes.at(buffer);
    m_sizes.erase(buffer);
}

void CudaDevice::zero(backends::Buffer buffer, size_t bytes) {
    if (bytes == 0) return;
    checkRange(buffer, bytes, "zero");
    makeCurrent();
    timed([&] { fill(pointerOf(buffer), bytes); });
}

void CudaDevice::copyBuffer(backends::Buffer dst, backends::Buffer src, size_t bytes) {
    if (bytes == 0) return;
    checkRange(dst, bytes, "copyBuffer");
    checkRange(src, bytes, "copyBuffer");
    makeCurrent();
    timed([&] {
        check(m_api, m_api.cuMemcpyDtoDAsync_v2(pointerOf(dst), pointerOf(src), bytes, m_step),
              "cuMemcpyDtoDAsync_v2", std::to_string(bytes) + " bytes");
    });
}

// On the step stream, so a zero-fill is ordered with the kernels before and after it.
void CudaDevice::fill(CUdeviceptr pointer, size_t bytes) {
    const std::string what = std::to_string(bytes) + " bytes";
    if (bytes % 4 == 0) // 4-byte words where the size allows it: the common case, and faster
        check(m_api, m_api.cuMemsetD32Async(pointer, 0u, bytes / 4, m_step), "cuMemsetD32Async",
              what);
    else
        check(m_api, m_api.cuMemsetD8Async(pointer, 0, bytes, m_step), "cuMemsetD8Async", what);
}

void CudaDevice::checkRange(backends::Buffer buffer, size_t bytes, const char* what) const {
    const auto it = m_sizes.find(buffer);
    if (it == m_sizes.end())
        throw InternalError(std::string("CudaDevice::") + what +
                            ": a buffer handle this device did not allocate");
    if (bytes > it->second)
        throw InternalError(std::string("CudaDevice::") + what + " of " + std::to_string(bytes) +
                            " bytes on a buffer of " + std::to_string(it->second));
}

void CudaDevice::copyAfterSteps() {
    check(m_api, m_api.cuEventRecord(m_stepsDone, m_step), "cuEventRecord");
    check(m_api, m_api.cuStreamWaitEvent(m_copy, m_stepsDone, 0), "cuStreamWaitEvent");
}

void CudaDevice::writeBuffer(backends::Buffer dst, const void* src, size_t bytes) {
    if (bytes == 0) return;
    checkRange(dst, bytes, "copyToDevice");
    upload(dst, src, bytes);
}

// Waits until the copy is done: the caller may change or free `src` as soon as this returns,
// and the kernels enqueued next must see the new contents.
void CudaDevice::upload(backends::Buffer dst, const void* src, size_t bytes) {
    makeCurrent();
    copyAfterSteps();
    check(m_api, m_api.cuMemcpyHtoDAsync_v2(pointerOf(dst), src, bytes, m_copy),
          "cuMemcpyHtoDAsync_v2", std::to_string(bytes) + " bytes");
    check(m_api, m_api.cuStreamSynchronize(m_copy), "cuStreamSynchronize", "copy to the device");
    collectBusy(false); // the copy waited for the step stream: every pair has finished
}

// Through the pinned staging buffer: a copy into pageable memory runs at a fraction of the
// bus's speed, and the driver would stage it anyway.
void CudaDevice::readBuffer(void* dst, backends::Buffer src, size_t bytes) {
    if (bytes == 0) return;
    checkRange(src, bytes, "copyFromDevice");
    makeCurrent();
    copyAfterSteps();
    unsigned char* out = static_cast<unsigned char*>(dst);
    void* stage = staging(bytes);
    for (size_t done = 0; done < bytes;) {
        const size_t n = std::min(bytes - done, m_stagingBytes);
        check(m_api, m_api.cuMemcpyDtoHAsync_v2(stage, pointerOf(src) + done, n, m_copy),
              "cuMemcpyDtoHAsync_v2", std::to_string(n) + " bytes");
        check(m_api, m_api.cuStreamSynchronize(m_copy), "cuStreamSynchronize",
              "copy from the device");
        std::memcpy(out + done, stage, n);
        done += n;
    }
    collectBusy(false); // the copy waited for the step stream: every pair has finished
}

void* CudaDevice::staging(size_t bytes) {
    const size_t want = std::min(bytes, kMaxStagingBytes);
    if (m_stagingBytes >= want) return m_staging;
    if (m_staging) m_api.cuMemFreeHost(m_staging); // no copy is in flight: reads synchronise
    m_staging = nullptr;
    m_stagingBytes = 0;
    check(m_api, m_api.cuMemHostAlloc(&m_staging, want, kMemHostAllocPortable), "cuMemHostAlloc",
          std::to_string(want) + " bytes of pinned host memory");
    m_stagingBytes = want;
    return m_staging;
}

void CudaDevice::synchronise() {
    makeCurrent();
    check(m_api, m_api.cuStreamSynchronize(m_step), "cuStreamSynchronize", "step stream");
    check(m_api, m_api.cuStreamSynchronize(m_copy), "cuStreamSynchronize", "copy stream");
    collectBusy(true);
}

// ---- the program ----

void CudaDevice::load(const codegen::Plan& plan, const simt::Program& program,
                      const std::string& cubin) {
    makeCurrent();
    destroyGraphs();
    m_launches.clear();
    if (m_module) m_api.cuModuleUnload(m_module);
    m_module = nullptr;
    check(m_api, m_api.cuModuleLoadData(&m_module, cubin.data()), "cuModuleLoadData",
          "the model's cubin for sm_" + std::to_string(m_info.major) +
              std::to_string(m_info.minor));
    for (const auto& launches : program.kernels) {
        std::vector<LoadedLaunch> loaded;
        for (const auto& l : launches) {
            CUfunction f = nullptr;
            check(m_api, m_api.cuModuleGetFunction(&f, m_module, l.function.c_str()),
                  "cuModuleGetFunction", "kernel " + l.function);
            loaded.push_back({f, l});
        }
        m_launches.push_back(std::move(loaded));
    }
    m_tables.clear();
    for (const auto& t : plan.mergedGroups) {
        Table table;
        table.layout = codegen::layoutOf(t.fields);
        for (const auto& f : t.fields)
            table.types.push_back(codegen::cTypeOf(f.ctype));
        table.groups = t.groupNames.size();
        m_tables.push_back(std::move(table));
    }
}

void CudaDevice::bindTable(size_t index,
                           const std::vector<std::vector<backends::FieldValue>>& values) {
    if (!m_module) throw InternalError("CudaDevice::bindTable before a program was loaded");
    if (index >= m_tables.size())
        throw InternalError("CudaDevice::bindTable: table " + std::to_string(index) +
                            " of a program with " + std::to_string(m_tables.size()));
    Table& t = m_tables[index];
    if (values.size() != t.groups)
        throw InternalError("CudaDevice::bindTable: " + std::to_string(values.size()) +
                            " groups for a table of " + std::to_string(t.groups));
    // The structs as the kernels read them: C layout (codegen::layoutOf), buffers as the device
    // addresses they are.
    std::vector<unsigned char> bytes(t.layout.size * std::max<size_t>(1, t.groups), 0);
    for (size_t g = 0; g < t.groups; g++) {
        if (values[g].size() != t.types.size())
            throw InternalError("CudaDevice::bindTable: wrong field count");
        unsigned char* base = bytes.data() + g * t.layout.size;
        for (size_t f = 0; f < t.types.size(); f++) {
            const backends::FieldValue& v = values[g][f];
            unsigned char* dst = base + t.layout.offsets[f];
            switch (v.kind) {
            case backends::FieldValue::Kind::Buffer: {
                if (t.types[f] != codegen::CType::Pointer)
                    throw InternalError("CudaDevice::bindTable: a buffer bound to a number field");
                if (v.buffer) checkRange(v.buffer, 0, "bindTable");
                const CUdeviceptr p = pointerOf(v.buffer);
                std::memcpy(dst, &p, sizeof p);
                break;
            }
            case backends::FieldValue::Kind::Number:
                codegen::storeNumber(dst, t.types[f], v.number);
                break;
            }
        }
    }
    if (!t.buffer) t.buffer = allocate(bytes.size());
    upload(t.buffer, bytes.data(), bytes.size()); // not a counted transfer (device.hpp)
}

void CudaDevice::launch(size_t kernel, const codegen::abi::StepArgs& args) {
    makeCurrent();
    timed([&] { enqueueKernel(kernel, args); });
}

void CudaDevice::enqueueLaunches(size_t kernel, const codegen::abi::StepArgs& args) {
    if (!m_module) throw InternalError("CudaDevice::launch before a program was loaded");
    if (kernel >= m_launches.size())
        throw InternalError("CudaDevice::launch: kernel " + std::to_string(kernel) +
                            " of a program with " + std::to_string(m_launches.size()));
    for (const LoadedLaunch& l : m_launches[kernel]) {
        const simt::Launch& s = l.launch;
        if (s.items == 0 || s.dim1 == 0) continue; // nothing to run
        if (s.localSize == 0 || s.items % s.localSize != 0 ||
            s.localSize > unsigned(m_info.maxThreadsPerBlock))
            throw InternalError("CudaDevice::launch: " + s.function + " has " +
                                std::to_string(s.items) + " work-items in work-groups of " +
                                std::to_string(s.localSize));
        const uint64_t blocks = s.items / s.localSize;
        if (blocks > uint64_t(m_info.maxGridX) || s.dim1 > unsigned(m_info.maxGridY))
            throw BackendError("kernel " + s.function + " needs a grid of " +
                               std::to_string(blocks) + " x " + std::to_string(s.dim1) +
                               " blocks; CUDA device " + std::to_string(m_info.ordinal) +
                               " allows " + std::to_string(m_info.maxGridX) + " x " +
                               std::to_string(m_info.maxGridY) + " (a smaller batch or model)");
        // Kernel parameters: the step arguments by value, then one table address per table.
        // cuLaunchKernel copies them before it returns.
        codegen::abi::StepArgs stepArgs = args;
        std::vector<CUdeviceptr> tables(s.tables.size());
        std::vector<void*> params{&stepArgs};
        for (size_t i = 0; i < s.tables.size(); i++) {
            const backends::Buffer b = m_tables.at(s.tables[i]).buffer;
            if (!b)
                throw InternalError("CudaDevice::launch: table " + std::to_string(s.tables[i]) +
                                    " launched before it was bound");
            tables[i] = pointerOf(b);
            params.push_back(&tables[i]);
        }
        check(m_api,
              m_api.cuLaunchKernel(l.function, static_cast<unsigned>(blocks), s.dim1, 1,
                                   s.localSize, 1, 1, 0, m_step, params.data(), nullptr),
              "cuLaunchKernel",
              "kernel " + s.function + ", " + std::to_string(blocks) + " x " +
                  std::to_string(s.dim1) + " blocks of " + std::to_string(s.localSize));
    }
}

// ---- CUDA graphs ----

void CudaDevice::runSteps(const std::vector<size_t>& kernels, const codegen::abi::StepArgs& first,
                          uint64_t steps, double dt) {
    runSequence({backends::SequenceItem::ofSteps(kernels, first, steps, dt)});
}

namespace {

using Item = backends::SequenceItem;

// The arguments of step `i` of a Steps item (Device::runSteps' formula).
codegen::abi::StepArgs argsOf(const Item& item, uint64_t i) {
    codegen::abi::StepArgs a = item.args;
    a.step = item.args.step + i;
    a.rngStep = item.args.rngStep + i;
    a.t = static_cast<double>(a.step) * item.dt;
    return a;
}

// A Steps item's steps [from, from + n) as an item of their own.
Item stepsPart(const Item& item, uint64_t from, uint64_t n) {
    return Item::ofSteps(item.kernels, argsOf(item, from), n, item.dt);
}

// Worth a graph: more than a single step's launches (one step alone, a custom update or a reset
// from the host, runs plainly).
bool worthAGraph(const std::vector<Item>& piece) {
    uint64_t steps = 0;
    for (const Item& item : piece)
        steps += item.kind == Item::Kind::Steps ? item.steps : 0;
    return steps >= 2 || (steps == 1 && piece.size() > 1);
}

std::vector<uint64_t> shapeOf(const std::vector<Item>& items) {
    std::vector<uint64_t> key;
    for (const Item& item : items) {
        key.push_back(static_cast<uint64_t>(item.kind));
        switch (item.kind) {
        case Item::Kind::Steps:
            key.push_back(item.steps);
            key.push_back(item.kernels.size());
            key.insert(key.end(), item.kernels.begin(), item.kernels.end());
            break;
        case Item::Kind::Launch:
            key.push_back(item.kernels.at(0));
            break;
        case Item::Kind::Copy:
            key.push_back(item.bytes);
            break;
        }
    }
    return key;
}

} // namespace

void CudaDevice::runSequence(const std::vector<backends::SequenceItem>& items) {
    makeCurrent();
    timed([&] { submitSequence(items); });
}

void CudaDevice::submitSequence(const std::vector<backends::SequenceItem>& items) {
    // Kernel timing times every launch: no graphs.
    if (!graphsEnabled() || kernelTiming()) return enqueue(items);
    std::vector<Item> piece;
    uint64_t pieceSteps = 0;
    auto run = [&] {
        if (piece.empty()) return;
        if (!graphsEnabled() || !worthAGraph(piece) || !replayGraph(piece)) enqueue(piece);
        piece.clear();
        pieceSteps = 0;
    };
    for (const Item& item : items) {
        if (item.kind != Item::Kind::Steps) {
            piece.push_back(item);
            continue;
        }
        for (uint64_t done = 0; done < item.steps;) {
            if (pieceSteps == m_graphSteps) run();
            const uint64_t n = std::min<uint64_t>(m_graphSteps - pieceSteps, item.steps - done);
            piece.push_back(stepsPart(item, done, n));
            pieceSteps += n;
            done += n;
        }
    }
    run();
}

// Without makeCurrent (the caller made the context current): nothing here may be a call that
// stream capture forbids.
void CudaDevice::enqueue(const std::vector<backends::SequenceItem>& items) {
    for (const Item& item : items)
        switch (item.kind) {
        case Item::Kind::Steps:
            for (uint64_t i = 0; i < item.steps; i++) {
                const codegen::abi::StepArgs a = argsOf(item, i);
                for (size_t k : item.kernels)
                    enqueueKernel(k, a);
            }
            break;
        case Item::Kind::Launch:
            enqueueKernel(item.kernels.at(0), item.args);
            break;
        case Item::Kind::Copy:
            if (item.bytes == 0) break;
            checkRange(item.dst, item.bytes, "copyBuffer");
            checkRange(item.src, item.bytes, "copyBuffer");
            check(m_api,
                  m_api.cuMemcpyDtoDAsync_v2(pointerOf(item.dst), pointerOf(item.src), item.bytes,
                                             m_step),
                  "cuMemcpyDtoDAsync_v2", std::to_string(item.bytes) + " bytes");
            break;
        }
}

// A launch's arguments differ from replay to replay, and a captured launch keeps the arguments
// it was given, so every sequence is captured anew. Capturing only records (no work is
// submitted); the instantiated graph of the same shape is then updated in place
// (cuGraphExecUpdate: the topology is the same, only kernel arguments and copy addresses
// change), which is much cheaper than instantiating.
bool CudaDevice::replayGraph(const std::vector<backends::SequenceItem>& items) {
    if (m_api.cuStreamBeginCapture_v2(m_step, kCaptureModeThreadLocal) != kSuccess) {
        m_graphsUsable = false;
        return false;
    }
    CUgraph graph = nullptr;
    try {
        enqueue(items);
    } catch (...) {
        // End the capture whatever happened; a launch that failed while capturing is reported
        // again (or not) when the sequence runs as plain launches.
        if (m_api.cuStreamEndCapture(m_step, &graph) == kSuccess && graph)
            m_api.cuGraphDestroy(graph);
        m_graphsUsable = false;
        return false;
    }
    if (m_api.cuStreamEndCapture(m_step, &graph) != kSuccess || !graph) {
        m_graphsUsable = false;
        return false;
    }
    const GraphKey key = shapeOf(items);
    auto it = m_graphs.find(key);
    if (it != m_graphs.end()) {
        GraphExecUpdateResultInfo info{};
        if (m_api.cuGraphExecUpdate_v2(it->second, graph, &info) != kSuccess ||
            info.result != kGraphExecUpdateSuccess) {
            m_api.cuGraphExecDestroy(it->second);
            m_graphs.erase(it);
            it = m_graphs.end();
        }
    }
    if (it == m_graphs.end()) {
        if (m_graphs.size() >= kMaxCachedGraphs) destroyGraphs();
        CUgraphExec exec = nullptr;
        if (m_api.cuGraphInstantiateWithFlags(&exec, graph, 0) != kSuccess || !exec) {
            m_api.cuGraphDestroy(graph);
            m_graphsUsable = false;
            return false;
        }
        it = m_graphs.emplace(key, exec).first;
    }
    m_api.cuGraphDestroy(graph); // the executable graph does not need it
    check(m_api, m_api.cuGraphLaunch(it->second, m_step), "cuGraphLaunch",
          "a sequence of " + std::to_string(items.size()) + " items");
    g_graphLaunches++;
    return true;
}

void CudaDevice::destroyGraphs() {
    for (const auto& [key, exec] : m_graphs)
        m_api.cuGraphExecDestroy(exec);
    m_graphs.clear();
}

} // namespace spikeforge::cuda
