// Every built-in model works from a config (loaded and finalised with the parameters and
// variables it declares), and docs/config.md lists every one of them.
#include "config.hpp"
#include "train_config.hpp"

#include "spikeforge/models.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace spikeforge;
using namespace spikeforge::cli;

namespace {

// "{ a = 1.0, b = 1.0 }" for the declared names (values chosen by `value`).
template <typename List, typename Name>
std::string inlineTable(const List& names, Name nameOf, const std::string& value) {
    std::string out = "{ ";
    for (const auto& n : names)
        out += (out.size() > 2 ? ", " : "") + nameOf(n) + " = " + value;
    return out + " }";
}

std::string paramsOf(const SnippetBase& m) {
    return inlineTable(
        m.params, [](const std::string& p) { return p; }, "1.0");
}

std::string varsOf(const std::vector<VarDecl>& vars) {
    return inlineTable(
        vars, [](const VarDecl& v) { return v.name; }, "1");
}

// A source (SpikeSourceArray) and a target (LIF) for projections and current sources.
const std::string twoPopulations = R"([model]
dt = 0.1

[[populations]]
name = "S"
size = 2
model = "SpikeSourceArray"
spike_times = [[1.0], []]

[[populations]]
name = "T"
size = 2
model = "LIF"
params = { C = 1.0, TauM = 20.0, Vrest = -65.0, Vreset = -65.0, Vthresh = -50.0, Ioffset = 0.0, TauRefrac = 2.0 }
vars = { V = -65.0, RefracTime = 0.0 }
)";

void expectLoadsAndFinalises(const std::string& text, const std::string& model) {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("sf_builtin_" + std::to_string(::getpid()) + "_" + model + ".toml"))
                                 .string();
    std::ofstream(path) << text;
    try {
        Config cfg = loadConfig(path);
        cfg.model->finalise();
    } catch (const std::exception& e) {
        ADD_FAILURE() << model << ": " << e.what() << "\n" << text;
    }
    std::filesystem::remove(path);
}

} // namespace

TEST(ConfigBuiltins, EveryNeuronModel) {
    for (const std::string& name : models::neuronModelNames()) {
        const NeuronModel& m = *models::findNeuronModel(name);
        std::string text =
            "[model]\ndt = 0.1\n[[populations]]\nname = \"P\"\nsize = 2\nmodel = \"" + name +
            "\"\n";
        if (!m.params.empty()) text += "params = " + paramsOf(m) + "\n";
        if (name == "SpikeSourceArray")
            text += "spike_times = [[1.0], [0.5, 2.0]]\n";
        else if (!m.vars.empty())
            text += "vars = " + varsOf(m.vars) + "\n";
        expectLoadsAndFinalises(text, name);
    }
}

TEST(ConfigBuiltins, EveryPostsynapticModel) {
    for (const std::string& name : models::postsynapticModelNames()) {
        const PostsynapticModel& m = *models::findPostsynapticModel(name);
        std::string text = twoPopulations +
                           "[[projections]]\nname = \"X\"\nsource = \"S\"\ntarget = \"T\"\n"
                           "matrix = \"dense\"\nweight_update = { model = \"StaticPulse\", "
                           "vars = { g = 0.5 } }\npostsynaptic = { model = \"" +
                           name + "\"";
        if (!m.params.empty()) text += ", params = " + paramsOf(m);
        if (!m.vars.empty()) text += ", vars = " + varsOf(m.vars);
        expectLoadsAndFinalises(text + " }\n", name);
    }
}

TEST(ConfigBuiltins, EveryWeightUpdateModel) {
    for (const std::string& name : models::weightUpdateModelNames()) {
        const WeightUpdateModel& m = *models::findWeightUpdateModel(name);
        std::string text = twoPopulations +
                           "[[projections]]\nname = \"X\"\nsource = \"S\"\ntarget = \"T\"\n"
                           "matrix = \"sparse\"\nconnectivity = { init = \"OneToOne\" }\n"
                           "postsynaptic = { model = \"DeltaCurr\" }\n";
        if (name == "StaticPulseDendriticDelay") text += "max_dendritic_delay_steps = 4\n";
        text += "[projections.weight_update]\nmodel = \"" + name + "\"\n";
        if (!m.params.empty()) text += "params = " + paramsOf(m) + "\n";
        if (!m.vars.empty()) text += "vars = " + varsOf(m.vars) + "\n";
        if (!m.preVars.empty()) text += "pre_vars = " + varsOf(m.preVars) + "\n";
        if (!m.postVars.empty()) text += "post_vars = " + varsOf(m.postVars) + "\n";
        expectLoadsAndFinalises(text, name);
    }
}

TEST(ConfigBuiltins, EveryCurrentSourceModel) {
    for (const std::string& name : models::currentSourceModelNames()) {
        const CurrentSourceModel& m = *models::findCurrentSourceModel(name);
        std::string text = twoPopulations +
                           "[[current_sources]]\nname = \"C\"\ntarget = \"T\"\nmodel = \"" + name +
                           "\"\n";
        if (!m.params.empty()) text += "params = " + paramsOf(m) + "\n";
        if (!m.vars.empty()) text += "vars = " + varsOf(m.vars) + "\n";
        expectLoadsAndFinalises(text, name);
    }
}

TEST(ConfigBuiltins, DocListsEveryBuiltIn) {
    std::ifstream in(std::string(SPIKEFORGE_SOURCE_DIR) + "/docs/config.md");
    std::ostringstream doc;
    doc << in.rdbuf();
    ASSERT_FALSE(doc.str().empty());
    std::vector<std::string> names;
    for (auto list :
         {models::neuronModelNames, models::postsynapticModelNames, models::weightUpdateModelNames,
          models::currentSourceModelNames, init::varInitSnippetNames, init::sparseInitSnippetNames})
        for (const std::string& name : list())
            names.push_back(name);
    EXPECT_GE(names.size(), 20u);
    for (const std::string& name : names)
        EXPECT_NE(doc.str().find("`" + name + "`"), std::string::npos)
            << name << " is not listed in docs/config.md";
}

// Training configs (a [training] table: `spikeforge train`) load with the train loader, the
// others are simulate configs and must also finalise.
bool isTrainingConfig(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("[training]", 0) == 0) return true;
    return false;
}

TEST(ConfigBuiltins, EveryExampleConfigLoadsAndFinalises) {
    int count = 0, training = 0;
    for (const auto& entry :
         std::filesystem::directory_iterator(std::string(SPIKEFORGE_SOURCE_DIR) + "/examples")) {
        if (entry.path().extension() != ".toml") continue;
        ++count;
        try {
            if (isTrainingConfig(entry.path())) {
                ++training;
                const auto cfg = spikeforge::cli::loadTrainConfig(entry.path().string(), {});
                EXPECT_GT(cfg.eventprop.exampleTimesteps, 0u) << entry.path();
                continue;
            }
            Config cfg = loadConfig(entry.path().string());
            finaliseModel(cfg);
            EXPECT_TRUE(cfg.durationMs.has_value()) << entry.path();
        } catch (const std::exception& e) {
            ADD_FAILURE() << entry.path() << ": " << e.what();
        }
    }
    EXPECT_GE(count - training, 2) << "simulate examples";
    EXPECT_GE(training, 3) << "yinyang, shd and ssc";
}
