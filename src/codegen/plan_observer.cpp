#include "codegen/plan_observer.hpp"

#include <utility>

namespace spikeforge::codegen {

namespace {

PlanObserver& observer() {
    static PlanObserver o;
    return o;
}

} // namespace

void setPlanObserver(PlanObserver o) {
    observer() = std::move(o);
}

void notifyPlanObserver(const Plan& plan) {
    if (observer()) observer()(plan);
}

} // namespace spikeforge::codegen
