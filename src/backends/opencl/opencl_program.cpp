// The loaded SIMT program of an OpenClDevice: kernels per launch, merged-group tables written in
// 8-byte words by the table-store kernel (a program of its own, built once per context and shared
// by every model: a cl_mem has no device address the host could write, so the kernel receives the
// buffers as arguments and stores their addresses), and
// plan kernels run as their sequences of launches on the in-order queue.
#include "backends/opencl/opencl_device.hpp"

#include "backends/opencl/opencl_dialect.hpp"

#include "codegen/ctype.hpp"
#include "spikeforge/errors.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

namespace spikeforge::opencl {

namespace {

constexpr size_t kWord = 8; // [B] the table store's unit: a pointer, or 8 bytes of numbers

size_t roundUpToWord(size_t bytes) {
    return (bytes + kWord - 1) / kWord * kWord;
}

// The table store (simt::Program::tableStoreSource) built once per context and source and kept
// for the process, as the contexts are (opencl_device.cpp): it is the same for every model, and
// PoCL compiles a kernel at its first launch in each program (about 0.2 s), so a copy in every
// model's program was compiled once per model. Each device creates its own kernel object from
// it (kernel arguments belong to a kernel object). A program that does not build is not kept,
// and the BackendError reaches the model's build.
const Program& sharedTableStore(const OpenClDevice& device, const std::string& source) {
    static std::mutex mutex;
    static auto* const built = new std::map<std::pair<cl_context, std::string>, Program>;
    const std::lock_guard<std::mutex> lock(mutex);
    const auto key = std::make_pair(device.context(), source);
    auto it = built->find(key);
    if (it == built->end())
        it = built->emplace(key, device.buildProgram(source, buildOptions(device.info()))).first;
    return it->second;
}

} // namespace

void OpenClDevice::load(const codegen::Plan& plan, const simt::Program& program, Program built) {
    m_launches.clear();
    m_tableStore.reset();
    m_program.emplace(std::move(built));
    for (const auto& launches : program.kernels) {
        std::vector<LoadedLaunch> loaded;
        for (const auto& l : launches)
            loaded.push_back({m_program->kernel(l.function), l, {}});
        m_launches.push_back(std::move(loaded));
    }
    m_tableStore.emplace(
        sharedTableStore(*this, program.tableStoreSource).kernel(program.tableStore));
    m_steps.clear();
    for (const simt::Program::Steps* steps : {&program.steps, &program.init})
        if (!steps->function.empty())
            m_steps.push_back({m_program->kernel(steps->function), *steps});
    m_tableInfo.clear();
    for (const auto& t : plan.mergedGroups) {
        Table table;
        table.layout = codegen::layoutOf(t.fields);
        for (const auto& f : t.fields)
            table.types.push_back(codegen::cTypeOf(f.ctype));
        table.groups = t.groupNames.size();
        m_tableInfo.push_back(std::move(table));
    }
    m_tables.assign(plan.mergedGroups.size(), nullptr);
}

void OpenClDevice::bindTable(size_t index,
                             const std::vector<std::vector<backends::FieldValue>>& values) {
    if (!m_program) throw InternalError("OpenClDevice::bindTable before a program was loaded");
    if (index >= m_tableInfo.size())
        throw InternalError("OpenClDevice::bindTable: table " + std::to_string(index) +
                            " of a program with " + std::to_string(m_tableInfo.size()));
    Table& t = m_tableInfo[index];
    if (values.size() != t.groups)
        throw InternalError("OpenClDevice::bindTable: " + std::to_string(values.size()) +
                            " groups for a table of " + std::to_string(t.groups));
    // The structs in C layout (codegen::layoutOf), pointer fields left zero, and the buffer of
    // each pointer field.
    std::vector<unsigned char> bytes(roundUpToWord(t.layout.size * std::max<size_t>(1, t.groups)));
    std::vector<std::pair<uint32_t, backends::Buffer>> pointers; // (byte offset, buffer)
    for (size_t g = 0; g < t.groups; g++) {
        if (values[g].size() != t.types.size())
            throw InternalError("OpenClDevice::bindTable: wrong field count");
        const size_t base = g * t.layout.size;
        for (size_t f = 0; f < t.types.size(); f++) {
            const backends::FieldValue& v = values[g][f];
            const size_t at = base + t.layout.offsets[f];
            switch (v.kind) {
            case backends::FieldValue::Kind::Buffer:
                if (t.types[f] != codegen::CType::Pointer)
                    throw InternalError(
                        "OpenClDevice::bindTable: a buffer bound to a number field");
                if (v.buffer) memOf(v.buffer); // a handle this device made
                pointers.emplace_back(static_cast<uint32_t>(at), v.buffer);
                break;
            case backends::FieldValue::Kind::Number:
                codegen::storeNumber(bytes.data() + at, t.types[f], v.number);
                break;
            }
        }
    }
    if (bytes.size() >= simt::kStoreAddress)
        throw InternalError("OpenClDevice::bindTable: a table of " + std::to_string(bytes.size()) +
                            " bytes");
    const bool first = !m_tables[index];
    if (first) m_tables[index] = allocate(bytes.size()); // zero-filled
    // What changed since the last bind (everything at the first): words of numbers, then
    // addresses. A pointer's word is zero in `bytes`, so it never counts as a changed number.
    std::vector<TableStore> stores;
    for (size_t w = 0; w < bytes.size(); w += kWord)
        if (first || std::memcmp(bytes.data() + w, t.bytes.data() + w, kWord) != 0) {
            TableStore s{static_cast<uint32_t>(w), 0, nullptr};
            std::memcpy(&s.word, bytes.data() + w, kWord);
            stores.push_back(s);
        }
    std::vector<uint64_t> serials;
    for (const auto& [slot, buffer] : pointers)
        serials.push_back(buffer ? m_serials.at(buffer) : 0);
    for (size_t p = 0; p < pointers.size(); p++)
        if (first || serials[p] != t.pointers[p])
            stores.push_back({pointers[p].first | simt::kStoreAddress, 0, pointers[p].second});
    runTableStores(m_tables[index], stores);
    t.bytes = std::move(bytes);
    t.pointers = std::move(serials);
}

void OpenClDevice::runTableStores(backends::Buffer table, const std::vector<TableStore>& stores) {
    Kernel& k = *m_tableStore;
    constexpr unsigned perLaunch = simt::kTableStoresPerLaunch;
    for (size_t first = 0; first < stores.size(); first += perLaunch) {
        k.setBuffer(0, table);
        for (unsigned i = 0; i < perLaunch; i++) {
            const bool used = first + i < stores.size();
            const TableStore& s = used ? stores[first + i] : TableStore{simt::kNoStore, 0, nullptr};
            k.setValue(1 + 3 * i, s.slot);
            k.setValue(2 + 3 * i, s.word);
            k.setBuffer(3 + 3 * i,
                        s.address ? static_cast<backends::Buffer>(memOf(s.address)) : nullptr);
        }
        enqueue(k, 1, 1);
    }
}

bool OpenClDevice::runStepsKernel(const std::vector<size_t>& kernels,
                                  const codegen::abi::StepArgs& first, uint64_t steps, double dt) {
    const auto stretch =
        std::find_if(m_steps.begin(), m_steps.end(),
                     [&](const StepsKernel& s) { return s.steps.kernels == kernels; });
    if (stretch == m_steps.end() || steps == 0) return false;
    Kernel& k = stretch->kernel;
    k.setValue(0, first);
    k.setValue(1, steps);
    k.setValue(2, dt);
    const auto& tables = stretch->steps.tables;
    for (size_t i = 0; i < tables.size(); i++) {
        if (!m_tables.at(tables[i]))
            throw InternalError("OpenClDevice::runSteps: table " + std::to_string(tables[i]) +
                                " launched before it was bound");
        k.setBuffer(static_cast<unsigned>(i + 3), m_tables[tables[i]]);
    }
    enqueue(k, stretch->steps.localSize, stretch->steps.localSize);
    return true;
}

void OpenClDevice::launch(size_t kernel, const codegen::abi::StepArgs& args) {
    if (!m_program) throw InternalError("OpenClDevice::launch before a program was loaded");
    if (kernel >= m_launches.size())
        throw InternalError("OpenClDevice::launch: kernel " + std::to_string(kernel) +
                            " of a program with " + std::to_string(m_launches.size()));
    timed([&] {
        // Kernel timing: markers around the launches (on an in-order queue a marker ends when
        // everything before it has), the span between their ends the kernel's time.
        const bool timing = kernelTiming() && m_profiling;
        if (timing) collectBusy(false); // bounds the pairs a long sequence holds
        cl_event before = timing ? marker() : nullptr;
        struct Release { // unless handed to the pending pairs below
            cl_event& event;
            ~Release() {
                if (event) clReleaseEvent(event);
            }
        } release{before};
        for (auto& l : m_launches[kernel]) {
            l.kernel.setValue(0, args);
            l.boundTables.resize(l.launch.tables.size(), nullptr);
            for (size_t i = 0; i < l.launch.tables.size(); i++) {
                const size_t t = l.launch.tables[i];
                if (!m_tables.at(t))
                    throw InternalError("OpenClDevice::launch: table " + std::to_string(t) +
                                        " launched before it was bound");
                if (l.boundTables[i] == m_tables[t]) continue;
                l.kernel.setBuffer(static_cast<unsigned>(i + 1), m_tables[t]);
                l.boundTables[i] = m_tables[t];
            }
            enqueue2d(l.kernel, l.launch.items, l.launch.dim1, l.launch.localSize);
        }
        if (!before) return;
        const cl_event after = marker();
        m_busyPending.push_back({std::exchange(before, nullptr), after, kernel});
    });
}

} // namespace spikeforge::opencl
