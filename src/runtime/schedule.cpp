// Simulation::run of a Schedule: the items are checked first, then queued as the host calls
// they stand for would run them (Impl::advance, queueLaunches, resetTrial), so both give the same
// results; the queue goes to the device in one Device::runSequence between sync points.
#include "runtime/simulation_impl.hpp"

namespace spikeforge {

namespace {

std::string itemPrefix(size_t index) {
    return "schedule item " + std::to_string(index) + ": ";
}

} // namespace

void Simulation::run(const Schedule& schedule, uint64_t repeats) {
    auto& s = *m_impl;
    using Kind = Schedule::Item::Kind;
    const auto& items = schedule.items();
    // Checked before anything runs: the kernels of each custom update, the arrays of each reset.
    std::vector<const std::vector<size_t>*> kernels(items.size(), nullptr);
    std::vector<std::vector<std::string>> arrays(items.size());
    for (size_t i = 0; i < items.size(); i++) {
        const auto& item = items[i];
        switch (item.kind) {
        case Kind::Steps:
            break;
        case Kind::CustomUpdate:
            kernels[i] = &s.updateKernels(item.updateGroup, itemPrefix(i));
            break;
        case Kind::ResetState:
            try {
                arrays[i] = s.stateArrays(item.state);
            } catch (const ModelError& e) {
                throw ModelError(itemPrefix(i) + e.what());
            }
            break;
        }
    }
    for (uint64_t r = 0; r < repeats; r++)
        for (size_t i = 0; i < items.size(); i++) {
            const auto& item = items[i];
            switch (item.kind) {
            case Kind::Steps:
                s.advance(item.steps);
                break;
            case Kind::CustomUpdate:
                s.queueLaunches(*kernels[i]);
                break;
            case Kind::ResetState:
                // No wait for the device here: a batch of trials stays one stretch of device
                // work (errors are read at the checks, naming the resets in between).
                s.resetTrial(arrays[i], false);
                break;
            }
        }
    s.submit();
    s.recorder->deliver();
    s.errors->check(s.step);
}

} // namespace spikeforge
