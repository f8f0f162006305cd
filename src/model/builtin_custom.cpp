// Built-in custom update models (models.hpp): the pieces with which a batch of simulations learns
// one set of weights on the device.
#include "spikeforge/model.hpp"
#include "spikeforge/models.hpp"

#include "model/builtin_common.hpp"

namespace spikeforge::models {

namespace {

using A = CustomUpdateVarAccess;

CustomUpdateModel makeBatchReduceAndZero() {
    CustomUpdateModel m;
    m.name = "BatchReduceAndZero";
    m.varRefs = {{"gradient", "scalar", A::ReadWrite},
                 {"reducedGradient", "scalar", A::ReduceBatchSum}};
    m.updateCode = "reducedGradient = gradient;\n"
                   "gradient = 0.0;\n";
    return m;
}

// Adam (Kingma & Ba 2015). The bias corrections use the device-side run counter, so a training
// loop never writes to the device between batches; alpha (the learning rate) is usually marked
// dynamic for schedules. With `warmup` the rate of step t is min(alpha, warmupStart *
// warmupFactor^(t-1)) (the loss-shaping paper's ease-in), from the same counter.
CustomUpdateModel makeAdam(bool warmup) {
    CustomUpdateModel m;
    m.name = warmup ? "AdamWarmup" : "Adam";
    m.params = {"beta1", "beta2", "epsilon", "alpha"};
    if (warmup) m.params.insert(m.params.end(), {"warmupStart", "warmupFactor"});
    // beta = 1 would divide by zero in the bias correction; epsilon guards the division by v
    m.paramDomain = [](const ParamValues& v, Precision) {
        detail::Domain d(v);
        for (const char* beta : {"beta1", "beta2"})
            if (v.count(beta))
                d.require(v.at(beta) >= 0.0 && v.at(beta) < 1.0,
                          std::string("parameter '") + beta + "' must be in [0, 1) (got " +
                              detail::Domain::format(v.at(beta)) + ")");
        if (v.count("warmupFactor"))
            d.require(v.at("warmupFactor") >= 1.0,
                      "parameter 'warmupFactor' must be >= 1 (got " +
                          detail::Domain::format(v.at("warmupFactor")) + ")");
        d.positive("warmupStart");
        return d.positive("epsilon").problem();
    };
    m.vars = {{"m", "scalar", A::ReadWrite}, {"v", "scalar", A::ReadWrite}};
    m.varRefs = {{"gradient", "scalar", A::ReadOnly}, {"variable", "scalar", A::ReadWrite}};
    m.updateCode = std::string("const scalar step = (scalar)(updateCount + 1u);\n") +
                   (warmup ? "const scalar rate = fmin(alpha, warmupStart * pow(warmupFactor, "
                             "step - 1.0));\n"
                           : "const scalar rate = alpha;\n") +
                   "const scalar mScale = 1.0 / (1.0 - pow(beta1, step));\n"
                   "const scalar vScale = 1.0 / (1.0 - pow(beta2, step));\n"
                   "m = beta1 * m + (1.0 - beta1) * gradient;\n"
                   "v = beta2 * v + (1.0 - beta2) * gradient * gradient;\n"
                   "variable -= rate * (m * mScale) / (sqrt(v * vScale) + epsilon);\n";
    return m;
}

CustomUpdateModel makeTranspose() {
    CustomUpdateModel m;
    m.name = "Transpose";
    m.varRefs = {{"variable", "scalar", A::ReadOnly}};
    return m;
}

} // namespace

const CustomUpdateModel& BatchReduceAndZero() {
    static const CustomUpdateModel m = makeBatchReduceAndZero();
    return m;
}

const CustomUpdateModel& Adam() {
    static const CustomUpdateModel m = makeAdam(false);
    return m;
}

const CustomUpdateModel& AdamWarmup() {
    static const CustomUpdateModel m = makeAdam(true);
    return m;
}

const CustomUpdateModel& Transpose() {
    static const CustomUpdateModel m = makeTranspose();
    return m;
}

namespace {

struct NamedCustomUpdate {
    const char* name;
    const CustomUpdateModel& (*model)();
};
constexpr NamedCustomUpdate kCustomUpdateModels[] = {
    {"BatchReduceAndZero", &BatchReduceAndZero},
    {"Adam", &Adam},
    {"AdamWarmup", &AdamWarmup},
    {"Transpose", &Transpose},
};

} // namespace

const CustomUpdateModel* findCustomUpdateModel(const std::string& name) {
    for (const auto& [known, model] : kCustomUpdateModels)
        if (name == known) return &model();
    return nullptr;
}

std::vector<std::string> customUpdateModelNames() {
    std::vector<std::string> names;
    for (const auto& entry : kCustomUpdateModels)
        names.push_back(entry.name);
    return names;
}

// Three passes over the population, in one update group: the maximum (for stability), the sum of
// exponentials, then the normalised output. Each pass needs the previous one's reduction
// complete, so they are separate custom updates, run in order.
void addSoftmax(Model& model, const std::string& name, const std::string& updateGroup,
                const VarReference& input, const VarReference& output) {
    CustomUpdateModel max;
    max.name = "SoftmaxMax";
    max.vars = {{"maxValue", "scalar", A::ReduceNeuronMax}};
    max.varRefs = {{"input", "scalar", A::ReadOnly}};
    max.updateCode = "maxValue = input;\n";
    model.addCustomUpdate(name + "Max", updateGroup, max, {}, {{"maxValue", 0.0}},
                          {{"input", input}});

    CustomUpdateModel sum;
    sum.name = "SoftmaxSum";
    sum.vars = {{"sumExp", "scalar", A::ReduceNeuronSum}};
    sum.varRefs = {{"input", "scalar", A::ReadOnly},
                   {"maxValue", "scalar", A::ReadOnlySharedNeuron}};
    sum.updateCode = "sumExp = exp(input - maxValue);\n";
    model.addCustomUpdate(name + "Sum", updateGroup, sum, {}, {{"sumExp", 0.0}},
                          {{"input", input}, {"maxValue", {name + "Max", "maxValue"}}});

    CustomUpdateModel out;
    out.name = "SoftmaxOutput";
    out.varRefs = {{"input", "scalar", A::ReadOnly},
                   {"maxValue", "scalar", A::ReadOnlySharedNeuron},
                   {"sumExp", "scalar", A::ReadOnlySharedNeuron},
                   {"output", "scalar", A::ReadWrite}};
    out.updateCode = "output = exp(input - maxValue) / sumExp;\n";
    model.addCustomUpdate(name, updateGroup, out, {}, {},
                          {{"input", input},
                           {"maxValue", {name + "Max", "maxValue"}},
                           {"sumExp", {name + "Sum", "sumExp"}},
                           {"output", output}});
}

} // namespace spikeforge::models
