// The loaded SIMT program of an OpenClDevice: kernels per launch, merged-group tables filled on
// the device (a cl_mem has no device address the host could store, so each struct is written by
// the program's setter kernel, which receives the buffers as arguments), and plan kernels run as
// their sequences of launches on the in-order queue.
#include "backends/opencl/opencl_device.hpp"

#include "codegen/ctype.hpp"
#include "spikeforge/errors.hpp"

#include <algorithm>

namespace spikeforge::opencl {

void OpenClDevice::load(const codegen::Plan& plan, const simt::Program& program, Program built) {
    m_launches.clear();
    m_setters.clear();
    m_program.emplace(std::move(built));
    for (const auto& launches : program.kernels) {
        std::vector<LoadedLaunch> loaded;
        for (const auto& l : launches)
            loaded.push_back({m_program->kernel(l.function), l, {}});
        m_launches.push_back(std::move(loaded));
    }
    for (const auto& name : program.setters)
        m_setters.push_back(m_program->kernel(name));
    m_steps.reset();
    if (!program.steps.function.empty())
        m_steps.emplace(StepsKernel{m_program->kernel(program.steps.function), program.steps});
    m_tableFields.clear();
    m_tableGroups.clear();
    for (const auto& t : plan.mergedGroups) {
        m_tableFields.push_back(t.fields);
        m_tableGroups.push_back(t.groupNames.size());
    }
    m_tables.assign(plan.mergedGroups.size(), nullptr);
}

void OpenClDevice::bindTable(size_t table,
                             const std::vector<std::vector<backends::FieldValue>>& values) {
    if (!m_program) throw InternalError("OpenClDevice::bindTable before a program was loaded");
    if (table >= m_setters.size())
        throw InternalError("OpenClDevice::bindTable: table " + std::to_string(table) +
                            " of a program with " + std::to_string(m_setters.size()));
    const auto& fields = m_tableFields[table];
    if (values.size() != m_tableGroups[table])
        throw InternalError("OpenClDevice::bindTable: " + std::to_string(values.size()) +
                            " groups for a table of " + std::to_string(m_tableGroups[table]));
    if (!m_tables[table]) {
        // Every field is at most 8 bytes and aligned to its size, so a struct never exceeds 8
        // bytes per field (the device lays it out; the host never reads it).
        const size_t structBytes = 8 * std::max<size_t>(1, fields.size());
        m_tables[table] = allocate(structBytes * std::max<size_t>(1, values.size()));
    }
    Kernel& setter = m_setters[table];
    for (size_t g = 0; g < values.size(); g++) {
        if (values[g].size() != fields.size())
            throw InternalError("OpenClDevice::bindTable: wrong field count");
        setter.setBuffer(0, m_tables[table]);
        setter.setValue(1, static_cast<uint32_t>(g));
        for (size_t f = 0; f < fields.size(); f++) {
            const auto& v = values[g][f];
            const unsigned arg = static_cast<unsigned>(f + 2);
            if (v.kind == backends::FieldValue::Kind::Buffer) {
                setter.setBuffer(arg, v.buffer ? static_cast<backends::Buffer>(memOf(v.buffer))
                                               : nullptr);
                continue;
            }
            const codegen::CType t = codegen::cTypeOf(simt::setterArgumentType(fields[f].ctype));
            unsigned char bytes[8] = {};
            codegen::storeNumber(bytes, t, v.number);
            setter.setRawValue(arg, codegen::sizeOf(t), bytes);
        }
        enqueue(setter, 1, 1);
    }
}

bool OpenClDevice::runStepsKernel(const std::vector<size_t>& kernels,
                                  const codegen::abi::StepArgs& first, uint64_t steps, double dt) {
    if (!m_steps || kernels != m_steps->steps.kernels || steps == 0) return false;
    Kernel& k = m_steps->kernel;
    k.setValue(0, first);
    k.setValue(1, steps);
    k.setValue(2, dt);
    const auto& tables = m_steps->steps.tables;
    for (size_t i = 0; i < tables.size(); i++) {
        if (!m_tables.at(tables[i]))
            throw InternalError("OpenClDevice::runSteps: table " + std::to_string(tables[i]) +
                                " launched before it was bound");
        k.setBuffer(static_cast<unsigned>(i + 3), m_tables[tables[i]]);
    }
    enqueue(k, m_steps->steps.localSize, m_steps->steps.localSize);
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
