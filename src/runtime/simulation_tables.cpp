// Simulation::Impl's binding of the merged-group tables to the current arrays and values, and
// the checks on a new value of a dynamic parameter.
#include "model/validate.hpp"
#include "runtime/simulation_impl.hpp"

#include <set>
#include <string>

namespace spikeforge {

void Simulation::Impl::checkDynamicValue(const std::string& owner, const std::string& param,
                                         double v) const {
    const Numerics num{model.dt(), model.precision()};
    auto check = [&](const std::string& field, const SnippetBase& snippet, const ParamValues& built,
                     const std::set<std::string>& dynamic) {
        if (!dynamic.count(param)) return;
        ParamValues values = built;
        for (const auto& p : dynamic)
            values[p] = dynamicValues.at(owner + "/" + p);
        values[param] = v;
        checkValues(owner, field, snippet, values, num);
    };
    for (const auto& ng : model.neuronGroups())
        if (ng->name() == owner)
            check("params", ng->model(), ng->bound().params, ng->bound().dynamicParams);
    for (const auto& sg : model.synapseGroups())
        if (sg->name() == owner) {
            check("weight update params", sg->wu().model, sg->wu().params, sg->wu().dynamicParams);
            check("postsynaptic params", sg->ps().model, sg->ps().params, sg->ps().dynamicParams);
        }
    for (const auto& cs : model.currentSources())
        if (cs->name() == owner)
            check("params", cs->bound().model, cs->bound().params, cs->bound().dynamicParams);
    for (const auto& cu : model.customUpdates())
        if (cu->name() == owner) check("params", cu->model(), cu->params(), cu->dynamicParams());
}

void Simulation::Impl::refreshTables() {
    for (size_t t = 0; t < plan.mergedGroups.size(); t++) {
        const auto& table = plan.mergedGroups[t];
        std::vector<std::vector<backends::FieldValue>> values(table.groupNames.size());
        for (size_t g = 0; g < values.size(); g++)
            for (const auto& b : table.bindings[g])
                values[g].push_back(fieldValue(b));
        device->bindTable(t, values);
    }
}

backends::FieldValue Simulation::Impl::fieldValue(const codegen::FieldBinding& b) const {
    using K = codegen::FieldBinding::Kind;
    switch (b.kind) {
    case K::Array:
        return backends::FieldValue::ofBuffer(arrays.at(b.array).device);
    case K::ArraySize:
        return backends::FieldValue::ofNumber(static_cast<double>(arrays.at(b.array).decl.count));
    case K::Dynamic:
        return backends::FieldValue::ofNumber(dynamicValues.at(b.owner + "/" + b.param));
    case K::Number:
        return backends::FieldValue::ofNumber(b.number);
    }
    throw InternalError("unknown field binding");
}

} // namespace spikeforge
