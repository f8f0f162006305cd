// Simulation::Impl's queueing and running of device work: steps, kernel launches, submission
// to the device and the kernels of each launch point.
#include "runtime/simulation_impl.hpp"
#include "snippet/suggest.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace spikeforge {

uint64_t Simulation::Impl::stepsUntilCheck() const {
    const uint64_t interval = prefs.errorCheckInterval;
    const uint64_t never = std::numeric_limits<uint64_t>::max();
    // 0 and intervals reaching past the last step mean "only at sync points"; a sum that
    // wrapped would schedule a check at every step instead.
    if (interval == 0 || interval > never - errors->checkedStep()) return never;
    const uint64_t due = errors->checkedStep() + interval;
    return due > step ? due - step : 1;
}

void Simulation::Impl::submit() {
    if (queue.empty()) return;
    std::vector<backends::SequenceItem> items;
    items.swap(queue);
    device->runSequence(items);
}

bool Simulation::Impl::flushRecordingIfFull() {
    const uint64_t chunk = recorder->recordSteps(); // 0 when not recording
    if (chunk == 0 || step < recorder->recordStart() + chunk) return false;
    submit();
    return recorder->afterRun(step);
}

void Simulation::Impl::advance(uint64_t n) {
    while (n > 0) {
        flushRecordingIfFull(); // a chunk left full (its sink threw) is flushed first
        const uint64_t piece = std::min({n, recorder->stepsUntilFlush(step), stepsUntilCheck()});
        queue.push_back(backends::SequenceItem::ofSteps(stepKernels, args(), piece, model.dt()));
        step += piece;
        rngStep += piece;
        n -= piece;
        const bool flushed = flushRecordingIfFull();
        if (flushed || (prefs.errorCheckInterval > 0 &&
                        step - errors->checkedStep() >= prefs.errorCheckInterval)) {
            submit();
            errors->check(step);
        }
    }
}

void Simulation::Impl::queueLaunches(const std::vector<size_t>& kernels) {
    const auto a = args();
    for (size_t k : kernels)
        queue.push_back(backends::SequenceItem::ofLaunch(k, a));
}

const std::vector<size_t>& Simulation::Impl::updateKernels(const std::string& updateGroup,
                                                           const std::string& where) const {
    auto it = customKernels.find(updateGroup);
    if (it != customKernels.end()) return it->second;
    std::vector<std::string> groups;
    for (const auto& cu : model.customUpdates())
        groups.push_back(cu->updateGroup());
    for (const auto& cc : model.customConnectivityUpdates())
        groups.push_back(cc->updateGroup());
    throw ModelError(where + "model '" + model.name() + "' has no custom update group '" +
                     updateGroup + "'" + didYouMean(updateGroup, groups));
}

void Simulation::Impl::launchAll(const std::vector<size_t>& kernels) {
    queueLaunches(kernels);
    submit();
}

codegen::abi::StepArgs Simulation::Impl::args() const {
    codegen::abi::StepArgs a;
    a.t = static_cast<double>(step) * model.dt();
    a.step = step;
    a.recordStart = recorder->kernelRecordStart();
    a.recordSteps = recorder->kernelRecordSteps();
    a.seed = model.seed();
    a.rngStep = rngStep;
    return a;
}

void Simulation::Impl::sortKernels() {
    using P = codegen::KernelPhase;
    for (size_t k = 0; k < plan.kernels.size(); k++) {
        const auto& kernel = plan.kernels[k];
        switch (kernel.phase) {
        case P::Initialise:
            break; // codegen::initKernels orders them
        case P::SynapseDynamics:
        case P::PresynapticEventUpdate:
        case P::PresynapticUpdate:
        case P::PostsynapticEventUpdate:
        case P::PostsynapticUpdate:
        case P::NeuronUpdate:
        case P::EventDetection:
            break; // codegen::stepKernels orders them
        case P::CustomUpdate:
            customKernels[kernel.updateGroup].push_back(k);
            break;
        case P::BlockPrune:
            pruneKernels[kernel.updateGroup] = k;
            break;
        case P::ConnectivityUpdate: // after the group's custom updates (plan order)
            customKernels[kernel.updateGroup].push_back(k);
            break;
        }
    }
    initKernels = codegen::initKernels(plan);
    stepKernels = codegen::stepKernels(plan);
}

} // namespace spikeforge
