// The TOML config loader: malformed configs must fail with a ConfigError at the right place
// (FILE:LINE:COLUMN, key named); well-formed ones must build the right Model.
#include "config.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace spikeforge;
using namespace spikeforge::cli;
namespace fs = std::filesystem;

namespace {

// A well-formed config that each error test breaks in one place.
const std::string base = R"([model]
name = "test"
dt = 0.1
duration_ms = 20.0

[parameters]
N = 100
p = 0.1

[neuron_models.Lif]
params = ["tau", "Vt"]
vars = ["v", { name = "count", type = "unsigned int", access = "ReadWrite" }]
sim_code = "v += dt * (Isyn - v) / tau;"
threshold_condition_code = "v > Vt"
reset_code = "v = 0.0;"

[[populations]]
name = "Exc"
size = "0.8*N"
model = "Lif"
params = { tau = 20.0, Vt = 1.0 }
vars = { v = { init = "Uniform", min = 0.0, max = 1.0 }, count = 0 }

[[populations]]
name = "Inh"
size = "0.2*N"
model = "Lif"
params = { tau = 10.0, Vt = 1.0 }
vars = { v = 0.0, count = 0 }
record_spikes = false

[[projections]]
name = "ExcInh"
source = "Exc"
target = "Inh"
matrix = "sparse"
delay_steps = 2
connectivity = { init = "FixedProbability", prob = "p" }
weight_update = { model = "StaticPulse", vars = { g = 0.5 } }
postsynaptic = { model = "ExpCond", params = { tau = 5.0, E = 0.0 } }

[[current_sources]]
name = "Drive"
target = "Exc"
model = "DC"
params = { amp = 0.1 }
)";

// `text` with the first occurrence of `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    if (at == std::string::npos) {
        ADD_FAILURE() << "test bug: '" << from << "' is not in the config";
        return text;
    }
    return text.replace(at, from.size(), to);
}

// "LINE:COLUMN" (1-based) of the `occurrence`-th appearance of `needle` in `text`.
std::string positionOf(const std::string& text, const std::string& needle, int occurrence = 1) {
    std::size_t at = std::string::npos;
    for (int i = 0; i < occurrence; ++i)
        at = text.find(needle, at == std::string::npos ? 0 : at + 1);
    if (at == std::string::npos) {
        ADD_FAILURE() << "test bug: '" << needle << "' is not in the config";
        return "?";
    }
    const std::size_t lineStart = text.rfind('\n', at);
    const std::size_t column = lineStart == std::string::npos ? at + 1 : at - lineStart;
    const auto line = 1 + std::count(text.begin(), text.begin() + at, '\n');
    return std::to_string(line) + ":" + std::to_string(column);
}

// A config written to its own temporary file for the duration of a test.
class TempConfig {
public:
    explicit TempConfig(const std::string& text) {
        static std::atomic<int> counter{0};
        const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
        m_path =
            fs::temp_directory_path() / ("sf_cli_" + std::to_string(::getpid()) + "_" +
                                         test->name() + "_" + std::to_string(counter++) + ".toml");
        std::ofstream(m_path) << text;
    }
    ~TempConfig() { fs::remove(m_path); }
    std::string path() const { return m_path.string(); }

private:
    fs::path m_path;
};

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
    if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "'" << part << "' not found in: " << text;
}

// Loads `text` expecting a ConfigError at the position of `needle` that mentions every part.
std::string expectError(const std::string& text, const std::string& needle,
                        const std::vector<std::string>& parts, int occurrence = 1,
                        const std::vector<std::string>& overrides = {}) {
    const TempConfig file(text);
    try {
        loadConfig(file.path(), overrides);
    } catch (const ConfigError& e) {
        const std::string message = e.what();
        const std::string where = file.path() + ":" + positionOf(text, needle, occurrence) + ": ";
        EXPECT_EQ(message.rfind(where, 0), 0u) << "expected at " << where << "\n got: " << message;
        EXPECT_EQ(e.file(), file.path());
        for (const std::string& part : parts)
            EXPECT_TRUE(contains(message, part));
        return message;
    } catch (const std::exception& e) {
        ADD_FAILURE() << "expected a ConfigError, got: " << e.what();
        return {};
    }
    ADD_FAILURE() << "no error for a config broken at '" << needle << "'";
    return {};
}

// Loads `text` with --set overrides expecting a ConfigError without a position.
std::string expectSetError(const std::string& text, const std::vector<std::string>& overrides,
                           const std::vector<std::string>& parts) {
    const TempConfig file(text);
    try {
        loadConfig(file.path(), overrides);
    } catch (const ConfigError& e) {
        const std::string message = e.what();
        EXPECT_EQ(e.line(), 0u);
        EXPECT_EQ(message.rfind(file.path() + ": --set '", 0), 0u) << message;
        for (const std::string& part : parts)
            EXPECT_TRUE(contains(message, part));
        return message;
    }
    ADD_FAILURE() << "no error for the overrides";
    return {};
}

Config load(const std::string& text, const std::vector<std::string>& overrides = {}) {
    const TempConfig file(text);
    return loadConfig(file.path(), overrides);
}

std::string cobaPath() {
    return std::string(SPIKEFORGE_SOURCE_DIR) + "/examples/coba.toml";
}

} // namespace

// ---- malformed configs --------------------------------------------------------------------

TEST(ConfigErrors, UnknownTopLevelKeySuggestsTheRightOne) {
    const std::string text = replaced(base, "[parameters]", "[parameter]");
    expectError(text, "parameter]", {"unknown key 'parameter'", "did you mean 'parameters'?"});
}

TEST(ConfigErrors, UnknownPopulationKeySuggestsTheRightOne) {
    const std::string text = replaced(base, "size = \"0.8*N\"", "sise = \"0.8*N\"");
    expectError(text, "sise", {"population 'Exc'", "unknown key 'sise'", "did you mean 'size'?"});
}

TEST(ConfigErrors, SizeOfTheWrongTypeBoolean) {
    const std::string text = replaced(base, "size = \"0.8*N\"", "size = true");
    expectError(text, "true", {"population 'Exc': size", "got a boolean"});
}

TEST(ConfigErrors, SizeThatIsNotAnExpression) {
    const std::string text = replaced(base, "size = \"0.8*N\"", "size = \"abc\"");
    expectError(text, "abc", {"population 'Exc': size", "bad expression", "'abc'"});
}

TEST(ConfigErrors, ParamsOfTheWrongType) {
    const std::string text = replaced(base, "params = { tau = 20.0, Vt = 1.0 }", "params = 3");
    expectError(text, "3\n", {"population 'Exc': params", "expected a table, got an integer"});
}

TEST(ConfigErrors, MissingModelParameter) {
    const std::string text =
        replaced(base, "params = { tau = 20.0, Vt = 1.0 }", "params = { tau = 20.0 }");
    expectError(text, "{ tau = 20.0 }",
                {"population 'Exc': params", "missing parameter 'Vt'", "neuron model 'Lif'"});
}

TEST(ConfigErrors, ExtraModelParameterSuggestsTheRightOne) {
    const std::string text = replaced(base, "params = { tau = 20.0, Vt = 1.0 }",
                                      "params = { tau = 20.0, Vt = 1.0, Vth = 2.0 }");
    expectError(text, "Vth",
                {"population 'Exc': params", "unknown parameter 'Vth'", "neuron model 'Lif'",
                 "did you mean 'Vt'?"});
}

TEST(ConfigErrors, UnknownNeuronModelSuggestsTheRightOne) {
    const std::string text = replaced(base, "model = \"Lif\"", "model = \"Lfi\"");
    expectError(text, "\"Lfi\"",
                {"population 'Exc': model", "unknown neuron model 'Lfi'", "did you mean 'Lif'?"});
}

TEST(ConfigErrors, UnknownBuiltInModelSuggestsTheRightOne) {
    const std::string text = replaced(base, "\"StaticPulse\"", "\"StaticPlus\"");
    expectError(text, "\"StaticPlus\"",
                {"projection 'ExcInh': weight_update: model",
                 "unknown weight update model 'StaticPlus'", "did you mean 'StaticPulse'?"});
}

TEST(ConfigErrors, UnknownProjectionSource) {
    const std::string text = replaced(base, "source = \"Exc\"", "source = \"Exx\"");
    expectError(text, "\"Exx\"",
                {"projection 'ExcInh': source", "unknown population 'Exx'", "did you mean 'Exc'?"});
}

TEST(ConfigErrors, UnknownVariableInitialiser) {
    const std::string text = replaced(base, "\"Uniform\"", "\"Unifrom\"");
    expectError(text, "\"Unifrom\"",
                {"population 'Exc': vars.v.init", "unknown variable initialiser 'Unifrom'",
                 "did you mean 'Uniform'?"});
}

TEST(ConfigErrors, UnknownConnectivityInitialiser) {
    const std::string text = replaced(base, "\"FixedProbability\"", "\"FixedProbabilty\"");
    expectError(text, "\"FixedProbabilty\"",
                {"projection 'ExcInh': connectivity.init", "unknown connectivity initialiser",
                 "did you mean 'FixedProbability'?"});
}

TEST(ConfigErrors, InitialiserParameterMissing) {
    const std::string text = replaced(base, ", max = 1.0 }", " }");
    expectError(text, "{ init = \"Uniform\"",
                {"population 'Exc': vars.v", "missing parameter 'max'", "initialiser 'Uniform'"});
}

TEST(ConfigErrors, BadExpressionPointsAtTheCharacter) {
    const std::string text = replaced(base, "size = \"0.8*N\"", "size = \"0.8*(N\"");
    expectError(text, "(N", {"population 'Exc': size", "bad expression \"0.8*(N\"", "unbalanced"});
}

TEST(ConfigErrors, UnknownParameterInExpressionSuggestsTheRightOne) {
    const std::string text = replaced(base, "prob = \"p\"", "prob = \"pp\"");
    expectError(
        text, "pp",
        {"projection 'ExcInh': connectivity.prob", "unknown parameter 'pp'", "did you mean 'p'?"});
}

TEST(ConfigErrors, SizeThatIsNotAWholeNumber) {
    const std::string text = replaced(base, "N = 100", "N = 101");
    expectError(text, "\"0.8*N\"", {"population 'Exc': size", "whole number", "80.8"});
}

TEST(ConfigErrors, SizeOutOfRange) {
    const std::string text = replaced(base, "size = \"0.8*N\"", "size = -5");
    expectError(text, "-5", {"population 'Exc': size", "must be between 1 and"});
}

TEST(ConfigErrors, MissingRequiredModelKey) {
    const std::string text = replaced(base, "dt = 0.1\n", "");
    expectError(text, "[model]", {"model: missing required key 'dt'"});
}

TEST(ConfigErrors, UnknownPrecision) {
    const std::string text = replaced(base, "dt = 0.1\n", "dt = 0.1\nprecision = \"doubel\"\n");
    expectError(text, "\"doubel\"", {"model: precision", "did you mean 'double'?"});
}

TEST(ConfigErrors, DenseProjectionWithConnectivity) {
    const std::string text = replaced(base, "matrix = \"sparse\"", "matrix = \"dense\"");
    expectError(text, "{ init = \"FixedProbability\"",
                {"projection 'ExcInh': connectivity", "only sparse projections"});
}

TEST(ConfigErrors, NegativeBackPropagationDelay) {
    const std::string text =
        replaced(base, "delay_steps = 2\n", "delay_steps = 2\nback_prop_delay_steps = -1\n");
    expectError(text, "-1", {"projection 'ExcInh': back_prop_delay_steps"});
}

TEST(Config, BackPropagationDelayIsRead) {
    const std::string text =
        replaced(base, "delay_steps = 2\n", "delay_steps = 2\nback_prop_delay_steps = 4\n");
    const Config cfg = load(text);
    EXPECT_EQ(cfg.model->synapseGroup("ExcInh").backPropDelaySteps(), 4u);
    EXPECT_EQ(load(base).model->synapseGroup("ExcInh").backPropDelaySteps(), 0u);
}

TEST(ConfigErrors, SparseProjectionWithoutConnectivity) {
    const std::string text =
        replaced(base, "connectivity = { init = \"FixedProbability\", prob = \"p\" }\n", "");
    expectError(text, "[[projections]]",
                {"projection 'ExcInh'", "missing required key 'connectivity'"});
}

TEST(ConfigErrors, DuplicateGroupName) {
    const std::string text = replaced(base, "name = \"Inh\"", "name = \"Exc\"");
    expectError(text, "\"Exc\"", {"name: 'Exc' is already used"}, 2);
}

TEST(ConfigErrors, MissingVariableInitialValue) {
    const std::string text = replaced(base, "vars = { v = 0.0, count = 0 }", "vars = { v = 0.0 }");
    expectError(text, "{ v = 0.0 }",
                {"population 'Inh': vars", "missing initial value for variable 'count'"});
}

TEST(ConfigErrors, UnknownVariableAccessMode) {
    const std::string text = replaced(base, "\"ReadWrite\"", "\"ReadWirte\"");
    expectError(
        text, "\"ReadWirte\"",
        {"neuron_models.Lif: vars[1].access", "unknown access mode", "did you mean 'ReadWrite'?"});
}

TEST(ConfigErrors, UserModelMayNotShadowABuiltIn) {
    const std::string text = base + "\n[neuron_models.LIF]\nparams = [\"a\"]\n";
    expectError(text, "LIF]", {"neuron_models.LIF", "built-in neuron model"});
}

TEST(ConfigErrors, UnknownKeyInUserModel) {
    const std::string text = replaced(base, "reset_code =", "rest_code =");
    expectError(text, "rest_code",
                {"neuron_models.Lif", "unknown key 'rest_code'", "did you mean 'reset_code'?"});
}

TEST(ConfigErrors, CircularParameters) {
    const std::string text = replaced(base, "p = 0.1", "p = \"q\"\nq = \"2*p\"");
    expectError(text, "\"q\"", {"parameters: p", "circular definition"});
}

// A chain of definitions is evaluated recursively: a hostile chain of thousands must be a clear
// error at a bounded depth, never a stack overflow. 100 levels are accepted, 101 are not.
std::string parameterChain(int links) {
    std::string chain = "c0 = 1.0\n";
    for (int i = 1; i <= links; ++i)
        chain += "c" + std::to_string(i) + " = \"c" + std::to_string(i - 1) + " + 1\"\n";
    return chain;
}

TEST(ConfigErrors, ParameterChainsAreBoundedNotRecursedWithoutLimit) {
    const TempConfig ok(replaced(base, "p = 0.1", "p = 0.1\n" + parameterChain(99)));
    EXPECT_DOUBLE_EQ(loadConfig(ok.path()).parameters.at("c99"), 100.0);
    const TempConfig deep(replaced(base, "p = 0.1", "p = 0.1\n" + parameterChain(20000)));
    try {
        loadConfig(deep.path());
        ADD_FAILURE() << "a chain of 20000 definitions was accepted";
    } catch (const ConfigError& e) {
        EXPECT_TRUE(contains(e.what(), deep.path() + ":")); // placed at a definition
        EXPECT_TRUE(contains(e.what(), "more than 100 levels deep"));
    }
}

// A model name that could end a comment or start a directive in generated code is refused at its
// position in the config, like every other config error.
TEST(ConfigErrors, ModelNameMustBeAnIdentifier) {
    const std::string text = replaced(base, "name = \"test\"", "name = \"x\\nint y;\"");
    expectError(text, "\"x", {"model: name", "not an identifier"});
}

TEST(ConfigErrors, InvalidTomlSyntax) {
    const std::string text = replaced(base, "N = 100", "N = = 100");
    expectError(text, "= 100", {"invalid TOML"}, 1);
}

// toml++ 3.3 asserts on this input in builds without NDEBUG; it must be a plain syntax error.
TEST(ConfigErrors, InvalidTomlThatTripsTheParsersAssertions) {
    const std::string text = replaced(base, "[neuron_models.Lif]", "[{neuron_models.Lif]");
    expectError(text, "{neuron_models", {"invalid TOML"});
}

TEST(ConfigErrors, SetOfAnUnknownParameter) {
    expectSetError(base, {"M=5"}, {"unknown parameter 'M'", "[parameters]"});
    expectSetError(base, {"n=5"}, {"did you mean 'N'?"});
}

TEST(ConfigErrors, SetThatIsNotANumber) {
    expectSetError(base, {"N=lots"}, {"'lots' is not a number"});
    expectSetError(base, {"N"}, {"expected NAME=VALUE"});
    expectSetError(base, {"N="}, {"is not a number"});
}

TEST(ConfigErrors, MissingFile) {
    try {
        loadConfig("/nonexistent/spikeforge.toml");
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_TRUE(contains(e.what(), "/nonexistent/spikeforge.toml: cannot open"));
    }
}

// A snippet the config loader cannot judge: Model::finalise rejects it, naming group and field.
TEST(ConfigErrors, BadSnippetIsReportedByFinalise) {
    const std::string text = R"([model]
dt = 0.1

[neuron_models.Broken]
params = ["tau"]
vars = ["v"]
sim_code = "v += dt * undefined_name / tau;"
threshold_condition_code = "v > 1.0"
reset_code = "v = 0.0;"

[[populations]]
name = "Pop"
size = 10
model = "Broken"
params = { tau = 10.0 }
vars = { v = 0.0 }
)";
    Config cfg = load(text);
    try {
        cfg.model->finalise();
        FAIL() << "finalise accepted an unknown name";
    } catch (const ModelError& e) {
        const std::string message = e.what();
        EXPECT_TRUE(contains(message, "Pop"));
        EXPECT_TRUE(contains(message, "undefined_name"));
        EXPECT_TRUE(contains(message, "simCode") || contains(message, "sim_code")) << message;
    }
}

// ---- well-formed configs ------------------------------------------------------------------

TEST(Config, BaseConfigBuildsTheModel) {
    const Config cfg = load(base);
    const Model& m = *cfg.model;
    EXPECT_EQ(m.name(), "test");
    EXPECT_DOUBLE_EQ(m.dt(), 0.1);
    ASSERT_TRUE(cfg.durationMs.has_value());
    EXPECT_DOUBLE_EQ(*cfg.durationMs, 20.0);
    EXPECT_EQ(m.precision(), Precision::Float);
    EXPECT_EQ(m.batchSize(), 1u);

    ASSERT_EQ(m.neuronGroups().size(), 2u);
    const NeuronGroup& exc = m.neuronGroup("Exc");
    EXPECT_EQ(exc.size(), 80u);
    EXPECT_TRUE(exc.spikeRecording());
    EXPECT_EQ(exc.model().vars.at(1).type, "unsigned int");
    EXPECT_DOUBLE_EQ(exc.bound().params.at("tau"), 20.0);
    const VarInit& v = exc.bound().varInits.at("v");
    EXPECT_FALSE(v.isConstant());
    EXPECT_DOUBLE_EQ(v.params().at("max"), 1.0);
    EXPECT_EQ(m.neuronGroup("Inh").size(), 20u);
    EXPECT_FALSE(m.neuronGroup("Inh").spikeRecording());

    ASSERT_EQ(m.synapseGroups().size(), 1u);
    const SynapseGroup& sg = *m.synapseGroups()[0];
    EXPECT_EQ(sg.matrixType(), MatrixType::Sparse);
    EXPECT_EQ(sg.axonalDelaySteps(), 2u);
    EXPECT_EQ(sg.source().name(), "Exc");
    EXPECT_EQ(sg.target().name(), "Inh");
    ASSERT_TRUE(sg.connectivity().has_value());
    EXPECT_DOUBLE_EQ(sg.connectivity()->params.at("prob"), 0.1);
    EXPECT_DOUBLE_EQ(sg.wu().varInits.at("g").constant(), 0.5);
    EXPECT_DOUBLE_EQ(sg.ps().params.at("E"), 0.0);

    ASSERT_EQ(m.currentSources().size(), 1u);
    EXPECT_DOUBLE_EQ(m.currentSources()[0]->bound().params.at("amp"), 0.1);
}

TEST(Config, CobaExampleHasTheBenchmarkStructure) {
    const Config cfg = loadConfig(cobaPath());
    const Model& m = *cfg.model;
    EXPECT_DOUBLE_EQ(m.dt(), 0.1);
    EXPECT_EQ(m.precision(), Precision::Float);
    ASSERT_TRUE(cfg.durationMs.has_value());
    EXPECT_DOUBLE_EQ(*cfg.durationMs, 1000.0);

    ASSERT_EQ(m.neuronGroups().size(), 2u);
    EXPECT_EQ(m.neuronGroup("E").size(), 3200u);
    EXPECT_EQ(m.neuronGroup("I").size(), 800u);
    for (const char* name : {"E", "I"}) {
        const NeuronGroup& g = m.neuronGroup(name);
        EXPECT_TRUE(g.spikeRecording());
        const ParamValues& p = g.bound().params;
        EXPECT_DOUBLE_EQ(p.at("taum"), 20.0);
        EXPECT_DOUBLE_EQ(p.at("Vt"), -50.0);
        EXPECT_DOUBLE_EQ(p.at("Vr"), -60.0);
        EXPECT_DOUBLE_EQ(p.at("El"), -60.0);
        EXPECT_DOUBLE_EQ(p.at("I"), 20.0);
        EXPECT_DOUBLE_EQ(p.at("tref"), 5.0);
        const VarInit& v = g.bound().varInits.at("v");
        ASSERT_FALSE(v.isConstant());
        EXPECT_DOUBLE_EQ(v.params().at("min"), -60.0);
        EXPECT_DOUBLE_EQ(v.params().at("max"), -50.0);
    }

    ASSERT_EQ(m.synapseGroups().size(), 4u);
    for (const auto& sg : m.synapseGroups()) {
        SCOPED_TRACE(sg->name());
        const bool excitatory = sg->source().name() == "E";
        EXPECT_EQ(sg->name(), sg->source().name() + sg->target().name());
        EXPECT_EQ(sg->matrixType(), MatrixType::Sparse);
        EXPECT_EQ(sg->axonalDelaySteps(), 0u);
        ASSERT_TRUE(sg->connectivity().has_value());
        EXPECT_DOUBLE_EQ(sg->connectivity()->params.at("prob"), 0.02);
        EXPECT_EQ(sg->wu().model.name, "StaticPulseConstantWeight");
        EXPECT_DOUBLE_EQ(sg->wu().params.at("g"), excitatory ? 0.6 : 6.7);
        EXPECT_DOUBLE_EQ(sg->ps().params.at("tau"), excitatory ? 5.0 : 10.0);
        EXPECT_DOUBLE_EQ(sg->ps().params.at("E"), excitatory ? 0.0 : -80.0);
    }
}

TEST(Config, SetOverridesChangeSizesAndProbability) {
    const Config cfg = loadConfig(cobaPath(), {"N=16000", "p=0.005"});
    EXPECT_EQ(cfg.model->neuronGroup("E").size(), 12800u);
    EXPECT_EQ(cfg.model->neuronGroup("I").size(), 3200u);
    for (const auto& sg : cfg.model->synapseGroups())
        EXPECT_DOUBLE_EQ(sg->connectivity()->params.at("prob"), 0.005);
    EXPECT_DOUBLE_EQ(cfg.parameters.at("N"), 16000.0);
    EXPECT_DOUBLE_EQ(cfg.parameters.at("p"), 0.005);
}

TEST(Config, ParametersMayDependOnParametersAndFollowOverrides) {
    const std::string text =
        replaced(replaced(base, "N = 100", "N = 100\nNE = \"0.8 * N\""), "\"0.8*N\"", "\"NE\"");
    EXPECT_EQ(load(text).model->neuronGroup("Exc").size(), 80u);
    const Config cfg = load(text, {"N = 200"});
    EXPECT_EQ(cfg.model->neuronGroup("Exc").size(), 160u);
    EXPECT_DOUBLE_EQ(cfg.parameters.at("NE"), 160.0);
}

TEST(Config, ModelSettingsAndConstantInitialiser) {
    std::string text = replaced(base, "dt = 0.1\n",
                                "dt = \"p / 2\"\nprecision = \"double\"\nbatch = 4\nseed = 99\n");
    text = replaced(text, "vars = { v = 0.0, count = 0 }",
                    "vars = { v = { init = \"Constant\", constant = \"-p\" }, count = 3 }");
    const Config cfg = load(text);
    EXPECT_DOUBLE_EQ(cfg.model->dt(), 0.05);
    EXPECT_EQ(cfg.model->precision(), Precision::Double);
    EXPECT_EQ(cfg.model->batchSize(), 4u);
    EXPECT_EQ(cfg.model->seed(), 99u);
    const VarInitMap& inits = cfg.model->neuronGroup("Inh").bound().varInits;
    ASSERT_TRUE(inits.at("v").isConstant());
    EXPECT_DOUBLE_EQ(inits.at("v").constant(), -0.1);
    EXPECT_DOUBLE_EQ(inits.at("count").constant(), 3.0);
}

TEST(Config, ProjectionsAndCurrentSourcesAreOptional) {
    std::string text = base.substr(0, base.find("[[projections]]"));
    const Config cfg = load(text);
    EXPECT_TRUE(cfg.model->synapseGroups().empty());
    EXPECT_TRUE(cfg.model->currentSources().empty());
}

// ---- toeplitz (convolution) projections -----------------------------------------------------

namespace {

const std::string convConfig = R"([model]
name = "conv"
dt = 1.0
duration_ms = 5.0

[[populations]]
name = "In"
size = 70
model = "LIF"
params = { C = 1.0, TauM = 20.0, Vrest = 0.0, Vreset = 0.0, Vthresh = 1.0, Ioffset = 0.0, TauRefrac = 0.0 }
vars = { V = 0.0, RefracTime = 0.0 }

[[populations]]
name = "Out"
size = 45
model = "LIF"
params = { C = 1.0, TauM = 20.0, Vrest = 0.0, Vreset = 0.0, Vthresh = 1.0, Ioffset = 0.0, TauRefrac = 0.0 }
vars = { V = 0.0, RefracTime = 0.0 }

[[projections]]
name = "Conv"
source = "In"
target = "Out"
matrix = "toeplitz"
connectivity = { init = "Conv2D", conv_kh = 3, conv_kw = 3, conv_ih = 5, conv_iw = 7, conv_ic = 2, conv_oc = 3 }
weight_update = { model = "StaticPulse", vars = { g = 0.5 } }
postsynaptic = { model = "DeltaCurr" }
)";

} // namespace

TEST(ConfigToeplitz, ConvolutionProjectionBuildsItsShape) {
    Config cfg = load(convConfig);
    cfg.model->finalise();
    const SynapseGroup& g = cfg.model->synapseGroup("Conv");
    EXPECT_EQ(g.matrixType(), MatrixType::Toeplitz);
    const ConvGeometry& c = g.convGeometry();
    EXPECT_EQ(c.outH, 3u);
    EXPECT_EQ(c.outW, 5u);
    EXPECT_EQ(c.kernelSize(), 3u * 3u * 2u * 3u);
    EXPECT_EQ(g.synapseVarElements(), c.kernelSize());
}

TEST(ConfigToeplitz, BadConvolutionsAreErrorsAtTheirPosition) {
    expectError(replaced(convConfig, "init = \"Conv2D\"", "init = \"Conv2d\""), "\"Conv2d\"",
                {"unknown convolution 'Conv2d'", "Conv2D"});
    expectError(replaced(convConfig, "conv_oc = 3", "conv_occ = 3"), "conv_occ",
                {"unknown parameter 'conv_occ' of Conv2D", "conv_oc"});
    expectError(replaced(convConfig, ", conv_oc = 3", ""), "{ init = \"Conv2D\"",
                {"missing parameter 'conv_oc' of Conv2D"});
    expectError(replaced(convConfig,
                         "connectivity = { init = \"Conv2D\", conv_kh = 3, conv_kw = 3, conv_ih = "
                         "5, conv_iw = 7, conv_ic = 2, conv_oc = 3 }\n",
                         ""),
                "[[projections]]", {"missing required key 'connectivity'", "Conv2D"});
}

// ---- block_sparse projections ---------------------------------------------------------------

namespace {

const std::string blockConfig = replaced(
    convConfig,
    "matrix = \"toeplitz\"\nconnectivity = { init = \"Conv2D\", conv_kh = 3, conv_kw = 3, conv_ih "
    "= 5, conv_iw = 7, conv_ic = 2, conv_oc = 3 }",
    "matrix = \"block_sparse\"\nconnectivity = { layout = \"random\", block_size = 16, density = "
    "0.5 }");

} // namespace

TEST(ConfigBlockSparse, BlockLayoutBuildsItsShape) {
    Config cfg = load(blockConfig);
    cfg.model->finalise();
    const SynapseGroup& g = cfg.model->synapseGroup("Conv");
    EXPECT_EQ(g.matrixType(), MatrixType::BlockSparse);
    ASSERT_TRUE(g.blockSparse().has_value());
    EXPECT_EQ(g.blockSparse()->blockSize, 16u);
    EXPECT_EQ(g.numBlockRows(), 5u); // ceil(70 / 16)
    EXPECT_EQ(g.numBlockCols(), 3u); // ceil(45 / 16)
    EXPECT_EQ(g.blocksPerRow(), 2u); // round(0.5 x 3)
    EXPECT_EQ(g.synapseVarElements(), 5u * 2u * 16u * 16u);
    // rewire defaults to 0 (the ring lattice)
    Config ws = load(replaced(blockConfig, "layout = \"random\"", "layout = \"watts_strogatz\""));
    EXPECT_EQ(ws.model->synapseGroup("Conv").blockSparse()->layout, BlockLayout::WattsStrogatz);
    Config rewired =
        load(replaced(blockConfig, "layout = \"random\", block_size = 16, density = 0.5",
                      "layout = \"watts_strogatz\", block_size = 16, density = 0.5, "
                      "rewire = 0.25"));
    EXPECT_EQ(rewired.model->synapseGroup("Conv").blockSparse()->rewire, 0.25);
    Config balanced = load(replaced(blockConfig, "layout = \"random\"", "layout = \"balanced\""));
    EXPECT_EQ(balanced.model->synapseGroup("Conv").blockSparse()->layout, BlockLayout::Balanced);
    Config mask = load(replaced(blockConfig, "layout = \"random\", block_size = 16, density = 0.5",
                                "layout = \"mask\", block_size = 16, blocks = [[0, 2], [4, 0], "
                                "[0, 1]]"));
    const auto& given = mask.model->synapseGroup("Conv").blockSparse();
    EXPECT_EQ(given->layout, BlockLayout::Mask);
    EXPECT_EQ(given->blocks, (std::vector<std::pair<uint32_t, uint32_t>>{{0, 2}, {4, 0}, {0, 1}}));
    mask.model->finalise();
    EXPECT_EQ(mask.model->synapseGroup("Conv").blocksPerRow(), 2u); // block-row 0 holds two
    EXPECT_EQ(mask.model->synapseGroup("Conv").numTiles(), 3u);
    Config scaleFree =
        load(replaced(blockConfig, "layout = \"random\", block_size = 16, density = 0.5",
                      "layout = \"barabasi_albert\", block_size = 16, attachments = 2"));
    const auto& ba = scaleFree.model->synapseGroup("Conv").blockSparse();
    EXPECT_EQ(ba->layout, BlockLayout::BarabasiAlbert);
    EXPECT_EQ(ba->attachments, 2u);
    Config mirror =
        load(replaced(blockConfig, "layout = \"random\", block_size = 16, density = 0.5",
                      "layout = \"transposed\", block_size = 16, transpose_of = \"Fwd\""));
    const auto& tr = mirror.model->synapseGroup("Conv").blockSparse();
    EXPECT_EQ(tr->layout, BlockLayout::Transposed);
    EXPECT_EQ(tr->transposeOf, "Fwd");
    // The propagation form: auto (the default) with an expected rate, or forced.
    EXPECT_EQ(load(blockConfig).model->synapseGroup("Conv").blockSparse()->propagation,
              Propagation::Auto);
    Config rated = load(replaced(blockConfig, "density = 0.5",
                                 "density = 0.5, propagation = \"auto\", expected_rate = 40"));
    EXPECT_EQ(rated.model->synapseGroup("Conv").blockSparse()->expectedRate, 40.0);
    for (const auto& [text, form] : {std::pair{"matrix", Propagation::Matrix},
                                     std::pair{"event_driven", Propagation::EventDriven}}) {
        Config forced =
            load(replaced(blockConfig, "density = 0.5",
                          std::string("density = 0.5, propagation = \"") + text + "\""));
        EXPECT_EQ(forced.model->synapseGroup("Conv").blockSparse()->propagation, form) << text;
    }
}

TEST(ConfigBlockSparse, BadLayoutsAreErrorsAtTheirPosition) {
    expectError(replaced(blockConfig, "layout = \"random\"", "layout = \"randm\""), "\"randm\"",
                {"unknown block layout 'randm'", "random"});
    expectError(replaced(blockConfig, "layout = \"random\"", "layout = \"balansed\""),
                "\"balansed\"", {"unknown block layout 'balansed'", "balanced"});
    expectError(replaced(blockConfig, "block_size = 16", "block_size = 12"), "12",
                {"block_size", "not one of 8, 16, 32"});
    expectError(replaced(blockConfig, "density = 0.5", "density = 1.5"), "1.5",
                {"density", "(0, 1]"});
    expectError(replaced(blockConfig, "density = 0.5", "densty = 0.5"), "densty", {"densty"});
    expectError(replaced(blockConfig, ", density = 0.5", ""), "{ layout", {"missing", "density"});
    expectError(replaced(blockConfig, "density = 0.5", "density = 0.5, rewire = 0.1"), "0.1",
                {"rewire", "watts_strogatz"});
    expectError(
        replaced(blockConfig, "layout = \"random\", block_size = 16, density = 0.5",
                 "layout = \"watts_strogatz\", block_size = 16, density = 0.5, rewire = 2.5"),
        "2.5", {"rewire", "[0, 1]"});
    const std::string maskKeys = "layout = \"random\", block_size = 16, density = 0.5";
    expectError(replaced(blockConfig, maskKeys,
                         "layout = \"mask\", block_size = 16, blocks = [[0, 1], [2]]"),
                "[2]", {"blocks[1]", "[block-row, block-column]", "got 1"});
    expectError(
        replaced(blockConfig, maskKeys, "layout = \"mask\", block_size = 16, blocks = [[0, -1]]"),
        "-1", {"blocks[0] block-column"});
    expectError(replaced(blockConfig, maskKeys, "layout = \"mask\", block_size = 16"), "{ layout",
                {"missing", "blocks"});
    expectError(replaced(blockConfig, maskKeys,
                         "layout = \"mask\", block_size = 16, density = 0.5, blocks = [[0, 1]]"),
                "0.5", {"density", "not used by layout \"mask\""});
    expectError(replaced(blockConfig, maskKeys,
                         "layout = \"random\", block_size = 16, density = 0.5, blocks = [[0, 1]]"),
                "[[0, 1]]", {"blocks", "layout \"mask\" only"});
    expectError(replaced(blockConfig, maskKeys, "layout = \"barabasi_albert\", block_size = 16"),
                "{ layout", {"missing", "attachments"});
    expectError(replaced(blockConfig, maskKeys,
                         "layout = \"barabasi_albert\", block_size = 16, attachments = -3"),
                "-3", {"attachments"});
    expectError(replaced(blockConfig, maskKeys,
                         "layout = \"barabasi_albert\", block_size = 16, attachments = 2, "
                         "density = 0.5"),
                "0.5", {"density", "not used by layout \"barabasi_albert\""});
    expectError(replaced(blockConfig, maskKeys, "layout = \"transposed\", block_size = 16"),
                "{ layout", {"missing", "transpose_of"});
    expectError(replaced(blockConfig, "density = 0.5", "density = 0.5, transpose_of = \"Zq\""),
                "\"Zq\"", {"transpose_of", "layout \"transposed\" only"});
    expectError(replaced(blockConfig, maskKeys,
                         "layout = \"transposed\", block_size = 16, transpose_of = \"Zq\", "
                         "density = 0.25"),
                "0.25", {"density", "not used by layout \"transposed\""});
    expectError(replaced(blockConfig, "density = 0.5", "density = 0.5, attachments = 417"), "417",
                {"attachments", "layout \"barabasi_albert\" only"});
    expectError(replaced(blockConfig, "density = 0.5", "density = 0.5, propagation = \"matrx\""),
                "\"matrx\"", {"unknown propagation 'matrx'", "matrix"});
    expectError(replaced(blockConfig, "density = 0.5", "density = 0.5, expected_rate = -2"), "-2",
                {"expected_rate", ">= 0 Hz"});
    expectError(replaced(blockConfig, "density = 0.5",
                         "density = 0.5, propagation = \"matrix\", expected_rate = 17.25"),
                "17.25", {"expected_rate", "propagation = \"auto\" only"});
    expectError(replaced(blockConfig, "matrix = \"block_sparse\"", "matrix = \"block_sparce\""),
                "\"block_sparce\"", {"unknown matrix type 'block_sparce'", "block_sparse"});
}
