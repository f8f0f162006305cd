// Every validation path: the error type and the part of the message that names the group,
// the field and (for code) the line and column.
#include "backend_fixture.hpp"
#include "spikeforge/models.hpp"

#include <limits>
#include <tuple>
#include <utility>

using namespace spikeforge;
using sftest::expectError;

namespace {

ParamValues lifParams() {
    return {{"C", 1.0},         {"TauM", 20.0},   {"Vrest", -70.0},  {"Vreset", -70.0},
            {"Vthresh", -50.0}, {"Ioffset", 0.0}, {"TauRefrac", 2.0}};
}
VarInitMap lifVars() {
    return {{"V", -70.0}, {"RefracTime", 0.0}};
}

TEST(Validation, MissingParameter) {
    Model m;
    auto p = lifParams();
    p.erase("TauM");
    m.addNeuronGroup("Exc", 10, models::LIF(), p, lifVars());
    expectError<ModelError>([&] { m.finalise(); }, {"Exc", "params", "TauM", "missing"});
}

TEST(Validation, UnknownParameterWithSuggestion) {
    Model m;
    auto p = lifParams();
    p["Vthres"] = 1.0;
    m.addNeuronGroup("Exc", 10, models::LIF(), p, lifVars());
    expectError<ModelError>([&] { m.finalise(); }, {"Exc", "Vthres", "did you mean 'Vthresh'"});
}

TEST(Validation, MissingVariableInitialiser) {
    Model m;
    m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), {{"V", 0.0}});
    expectError<ModelError>([&] { m.finalise(); }, {"Exc", "RefracTime", "initialiser"});
}

TEST(Validation, UnknownVariableInitialiser) {
    Model m;
    auto v = lifVars();
    v["Vm"] = 0.0;
    m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), v);
    expectError<ModelError>([&] { m.finalise(); }, {"Exc", "no variable 'Vm'", "did you mean 'V'"});
}

TEST(Validation, InitialiserParameters) {
    Model m;
    auto v = lifVars();
    v["V"] = init::Uniform(0.0, 1.0);
    v["V"] = VarInit(v["V"].snippet(), {{"min", 0.0}}); // "max" missing
    m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), v);
    expectError<ModelError>([&] { m.finalise(); }, {"Exc", "vars.V", "max"});
}

TEST(Validation, DuplicateAndInvalidNames) {
    Model m;
    m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), lifVars());
    expectError<ModelError>(
        [&] { m.addNeuronGroup("Exc", 5, models::LIF(), lifParams(), lifVars()); },
        {"'Exc'", "already used"});
    expectError<ModelError>(
        [&] { m.addNeuronGroup("my group", 5, models::LIF(), lifParams(), lifVars()); },
        {"'my group'", "identifier"});
    expectError<ModelError>(
        [&] { m.addNeuronGroup("Empty", 0, models::LIF(), lifParams(), lifVars()); },
        {"Empty", "at least 1"});
}

TEST(Validation, SynapseGroupEndpointsAndMatrixType) {
    Model m;
    m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), lifVars());
    const WeightUpdateInit wu{models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}};
    const PostsynapticInit ps{models::DeltaCurr(), {}, {}};
    expectError<ModelError>(
        [&] { m.addSynapseGroup("S", MatrixType::Dense, 0, "Ecx", "Exc", wu, ps); },
        {"S", "source", "no neuron group 'Ecx'", "did you mean 'Exc'"});
    expectError<ModelError>(
        [&] {
            m.addSynapseGroup("S", MatrixType::Dense, 0, "Exc", "Exc", wu, ps, init::OneToOne());
        },
        {"S", "Dense", "no connectivity"});
    expectError<ModelError>(
        [&] { m.addSynapseGroup("S", MatrixType::Sparse, 0, "Exc", "Exc", wu, ps); },
        {"S", "Sparse", "needs a connectivity"});
}

TEST(Validation, UnknownIdentifierInCodeNamesLineAndColumn) {
    NeuronModel nm = models::LIF();
    nm.simCode = "V += 0.0;\nV = Vrest + Isin;";
    Model m;
    m.addNeuronGroup("Exc", 10, nm, lifParams(), lifVars());
    expectError<ModelError>([&] { m.finalise(); },
                            {"Exc.simCode", "line 2", "column 13", "Isin", "did you mean 'Isyn'"});
}

TEST(Validation, WriteToParameter) {
    NeuronModel nm = models::LIF();
    nm.resetCode = "V = Vreset;\nTauM = 3.0;";
    Model m;
    m.addNeuronGroup("Exc", 10, nm, lifParams(), lifVars());
    expectError<ModelError>([&] { m.finalise(); }, {"Exc.resetCode", "line 2", "TauM"});
}

TEST(Validation, ThresholdMayNotAssign) {
    NeuronModel nm = models::LIF();
    nm.thresholdConditionCode = "(V = Vthresh) > 0";
    Model m;
    m.addNeuronGroup("Exc", 10, nm, lifParams(), lifVars());
    expectError<ModelError>([&] { m.finalise(); }, {"Exc.thresholdConditionCode", "V"});
}

TEST(Validation, DynamicParameterFeedingDerivedParameter) {
    Model m;
    auto& ng = m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), lifVars());
    ng.setParamDynamic("TauM");
    expectError<ModelError>([&] { m.finalise(); }, {"Exc", "TauM", "derived"});
    ng.setParamDynamic("TauM", false);
    ng.setParamDynamic("Ioffset"); // feeds no derived parameter: allowed
    EXPECT_NO_THROW(m.finalise());
    ng.setParamDynamic("Ioffst");
    expectError<ModelError>([&] { m.finalise(); }, {"Exc", "Ioffst", "did you mean 'Ioffset'"});
}

TEST(Validation, ModelSettings) {
    Model m("bad");
    m.setDT(0.0);
    expectError<ModelError>([&] { m.finalise(); }, {"bad", "dt"});
    m.setDT(0.1);
    m.setBatchSize(0);
    expectError<ModelError>([&] { m.finalise(); }, {"bad", "batch"});
}

TEST(Validation, SynapseVariableAccessMode) {
    WeightUpdateModel wu = models::StaticPulse();
    wu.vars[0].access = VarAccess::ReadOnlySharedNeuron;
    Model m;
    m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), lifVars());
    m.addSynapseGroup("S", MatrixType::Dense, 0, "Exc", "Exc", {wu, {}, {{"g", 1.0}}, {}, {}},
                      {models::DeltaCurr(), {}, {}});
    expectError<ModelError>([&] { m.finalise(); }, {"S", "g", "ReadOnlySharedNeuron"});
}

// ---- names (docs/names.md) ----

TEST(Validation, ModelNameMustBeASafeIdentifier) {
    // A newline in the name once ended a comment of the generated code and injected the rest.
    const std::vector<std::string> bad = {"x\nstatic int i = system(\"touch pwned\");",
                                          "",
                                          "9lives",
                                          "int",
                                          "sfModel",
                                          "SF_X",
                                          "_model",
                                          "my__model",
                                          "kernel",
                                          "threadIdx",
                                          std::string(65, 'a')};
    for (const std::string& name : bad)
        expectError<ModelError>([&] { Model m(name); }, {"model name"});
    // the refused name is shown escaped, so the message itself stays on one line
    expectError<ModelError>([] { Model m("a\nb\x1b[2J"); }, {"'a\\x0ab\\x1b[2J'"});
    EXPECT_NO_THROW(Model m(std::string(64, 'a')));
    EXPECT_NO_THROW(Model m("sweep_2"));
    EXPECT_EQ(identifierProblem("model"), "");
    EXPECT_NE(identifierProblem("while").find("reserved word"), std::string::npos);
    EXPECT_NE(identifierProblem("a__b").find("'__'"), std::string::npos);
}

TEST(Validation, GroupNamesObeyTheRule) {
    Model m;
    for (const char* name : {"while", "Exc__1", "sfPop", "_Pop", "id", "exp", "half4"})
        expectError<ModelError>(
            [&] { m.addNeuronGroup(name, 5, models::LIF(), lifParams(), lifVars()); },
            {"neuron group name", name});
    m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), lifVars());
    expectError<ModelError>(
        [&] {
            m.addCustomUpdate("CU", "for", models::Transpose(), {}, {},
                              {{"variable", {"Exc", "V"}}});
        },
        {"custom update 'CU'", "update group name 'for'", "reserved word"});
}

TEST(Validation, VariableShadowingABuiltIn) {
    NeuronModel nm = models::LIF();
    nm.vars.push_back({"id"});
    auto vars = lifVars();
    vars["id"] = 0.0;
    Model m;
    m.addNeuronGroup("Exc", 10, nm, lifParams(), vars);
    expectError<ModelError>([&] { m.finalise(); },
                            {"group 'Exc'", "variable 'id' shadows the built-in 'id'"});
}

TEST(Validation, ParameterShadowingABuiltInOrMathsFunction) {
    // Built-in functions and maths functions come from the snippet's function table; `rsqrt` is
    // reserved for a future maths function.
    for (const char* name : {"dt", "t", "Isyn", "rand_normal", "exp", "sqrt", "int", "sfK",
                             "injectCurrent", "addSynapse", "fmin", "abs", "rsqrt"}) {
        NeuronModel nm = models::LIF();
        nm.params.push_back(name);
        auto p = lifParams();
        p[name] = 1.0;
        Model m;
        m.addNeuronGroup("Exc", 10, nm, p, lifVars());
        expectError<ModelError>([&] { m.finalise(); },
                                {"group 'Exc'", std::string("parameter '") + name + "'"});
    }
}

TEST(Validation, NamesClashWithinAScope) {
    {
        NeuronModel nm = models::LIF();
        nm.egps.push_back({"Vrest"});
        Model m;
        m.addNeuronGroup("Exc", 10, nm, lifParams(), lifVars());
        expectError<ModelError>([&] { m.finalise(); },
                                {"'Exc'", "extra global parameter 'Vrest'", "parameter 'Vrest'"});
    }
    {
        // a weight-update parameter named like the source's V as synapse code reads it
        WeightUpdateModel wu = models::StaticPulseConstantWeight();
        wu.params = {"V_pre"};
        Model m;
        m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), lifVars());
        m.addSynapseGroup("S", MatrixType::Dense, 0, "Exc", "Exc",
                          {wu, {{"V_pre", 1.0}}, {}, {}, {}}, {models::DeltaCurr(), {}, {}});
        expectError<ModelError>([&] { m.finalise(); },
                                {"group 'S'", "parameter 'V_pre'", "read as 'V_pre'"});
    }
    {
        // A postsynaptic variable named like a variable of the target is its own (GeNN's
        // namespaces, docs/models.md): accepted, and the target's stays readable as
        // RefracTime_post.
        PostsynapticModel ps = models::DeltaCurr();
        ps.vars = {{"RefracTime"}};
        ps.simCode = "RefracTime = RefracTime_post;\ninjectCurrent(inSyn);\ninSyn = 0.0;";
        Model m;
        m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), lifVars());
        m.addSynapseGroup("S", MatrixType::Dense, 0, "Exc", "Exc",
                          {models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}},
                          {ps, {}, {{"RefracTime", 0.0}}});
        EXPECT_NO_THROW(m.finalise());
    }
    {
        // neuron variable `num` would be read as the built-in num_pre by synapse code
        NeuronModel nm = models::LIF();
        nm.vars.push_back({"num"});
        auto vars = lifVars();
        vars["num"] = 0.0;
        Model m;
        m.addNeuronGroup("Exc", 10, nm, lifParams(), vars);
        m.addSynapseGroup("S", MatrixType::Dense, 0, "Exc", "Exc",
                          {models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}},
                          {models::DeltaCurr(), {}, {}});
        expectError<ModelError>([&] { m.finalise(); },
                                {"group 'S'", "variable 'num'", "built-in 'num_pre'"});
    }
}

TEST(Validation, InitialiserAndCustomUpdateNames) {
    {
        InitSnippet bad;
        bad.name = "Bad";
        bad.params = {"value"};
        bad.code = "value = 1.0;";
        auto vars = lifVars();
        vars["V"] = VarInit(bad, {{"value", 1.0}});
        Model m;
        m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), vars);
        expectError<ModelError>([&] { m.finalise(); },
                                {"group 'Exc'", "'Bad'", "variable 'V'", "parameter 'value'"});
    }
    {
        CustomUpdateModel cu = models::Transpose();
        cu.varRefs[0].name = "exp";
        Model m;
        m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), lifVars());
        m.addCustomUpdate("CU", "Step", cu, {}, {}, {{"exp", {"Exc", "V"}}});
        expectError<ModelError>([&] { m.finalise(); },
                                {"group 'CU'", "variable reference 'exp'", "maths function"});
    }
    {
        // min and max stay legal parameter names (Uniform), not variable names
        NeuronModel nm = models::LIF();
        nm.vars.push_back({"max"});
        auto vars = lifVars();
        vars["V"] = init::Uniform(-70.0, -60.0);
        vars["max"] = 0.0;
        Model m;
        m.addNeuronGroup("Exc", 10, nm, lifParams(), vars);
        expectError<ModelError>([&] { m.finalise(); }, {"variable 'max'", "maths function"});
    }
}

// ---- parameter values and domains ----

TEST(Validation, ValuesMustFitThePrecision) {
    for (const Precision prec : {Precision::Float, Precision::Double}) {
        Model m;
        m.setPrecision(prec);
        auto p = lifParams();
        p["Vthresh"] = 1e39;
        m.addNeuronGroup("Exc", 10, models::LIF(), p, lifVars());
        if (prec == Precision::Float)
            expectError<ModelError>([&] { m.finalise(); },
                                    {"group 'Exc'", "parameter 'Vthresh'", "single precision"});
        else
            EXPECT_NO_THROW(m.finalise());
    }
    {
        // a derived parameter that overflows: Rmembrane = TauM / C
        Model m;
        auto p = lifParams();
        p["C"] = 1e-300;
        m.addNeuronGroup("Exc", 10, models::LIF(), p, lifVars());
        expectError<ModelError>([&] { m.finalise(); },
                                {"group 'Exc'", "derived parameter 'Rmembrane'", "single"});
    }
    {
        Model m;
        auto v = lifVars();
        v["V"] = 1e40;
        m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), v);
        expectError<ModelError>([&] { m.finalise(); },
                                {"group 'Exc'", "vars.V", "initial value", "single"});
    }
    {
        Model m;
        m.addNeuronGroup("Src", 1, models::SpikeSourceArray(), {},
                         {{"startSpike", -1.0}, {"endSpike", 1.0}});
        expectError<ModelError>([&] { m.finalise(); },
                                {"group 'Src'", "startSpike", "unsigned int"});
    }
    {
        Model m;
        auto v = lifVars();
        v["V"] = init::Uniform(-std::numeric_limits<double>::infinity(), 0.0);
        m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), v);
        expectError<ModelError>([&] { m.finalise(); }, {"group 'Exc'", "vars.V", "min", "finite"});
    }
}

struct InitCase {
    VarInit init;
    std::vector<std::string> fragments;
    Precision precision = Precision::Float;
};

TEST(Validation, VariableInitialiserDomains) {
    const InitCase bad[] = {
        {init::Uniform(1.0, 0.0), {"'min'", "at most 'max'"}},
        {init::Normal(0.0, -1.0), {"'sd'", ">= 0"}},
        {init::NormalClipped(0.0, -1.0, -1.0, 1.0), {"'sd'", ">= 0"}},
        {init::NormalClipped(0.0, 1.0, 1.0, 1.0), {"'min'", "less than 'max'"}},
        {init::NormalClipped(0.0, 1.0, 2.0, 1.0), {"'min'", "less than 'max'"}},
        {init::NormalClipped(0.0, 1.0, 25.0, 30.0), {"20 standard deviations"}},
        {init::NormalClipped(0.0, 1e-10, 1.0, 2.0), {"20 standard deviations"}},
        {init::NormalClipped(5.0, 0.0, 0.0, 1.0), {"sd = 0", "outside"}},
        {init::Exponential(0.0), {"'lambda'", "> 0"}},
        {init::Exponential(-2.0), {"'lambda'", "> 0"}},
        {init::Gamma(0.0, 1.0), {"'a'", "> 0"}},
        {init::Gamma(1.0, -1.0), {"'b'", "> 0"}},
        {init::Binomial(-1.0, 0.5), {"'n'", "whole number"}},
        {init::Binomial(2.5, 0.5), {"'n'", "whole number"}},
        {init::Binomial(5e9, 0.5), {"'n'", "whole number"}},
        {init::Binomial(10.0, 1.5), {"'p'", "[0, 1]"}},
        {init::Binomial(10.0, -0.1), {"'p'", "[0, 1]"}},
        {init::Binomial(4294967295.0, 0.5), {"'n'", "single precision"}},
    };
    for (const auto& c : bad) {
        SCOPED_TRACE(c.fragments.front());
        Model m;
        m.setPrecision(c.precision);
        auto v = lifVars();
        v["V"] = c.init;
        m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), v);
        try {
            m.finalise();
            ADD_FAILURE() << "accepted";
        } catch (const ModelError& e) {
            const std::string msg = e.what();
            EXPECT_NE(msg.find("group 'Exc', vars.V"), std::string::npos) << msg;
            for (const auto& f : c.fragments)
                EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
        }
    }
    const VarInit good[] = {init::Uniform(1.0, 1.0),
                            init::Normal(0.0, 0.0),
                            init::NormalClipped(0.0, 0.0, 0.0, 1.0),
                            init::NormalClipped(0.0, 1.0, 19.0, 1e30),
                            init::NormalClipped(0.0, 1.0, -1e30, 1e30),
                            init::Binomial(0.0, 0.0),
                            init::Binomial(4e9, 1.0)};
    for (const auto& g : good) {
        Model m;
        auto v = lifVars();
        v["V"] = g;
        m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), v);
        EXPECT_NO_THROW(m.finalise()) << g.snippet().name;
    }
    // n = 2^32 - 1 is exact in double precision
    Model m;
    m.setPrecision(Precision::Double);
    auto v = lifVars();
    v["V"] = init::Binomial(4294967295.0, 0.5);
    m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), v);
    EXPECT_NO_THROW(m.finalise());
}

TEST(Validation, ConnectivityDomains) {
    auto withParam = [](const char* snippet, const char* param, double value) {
        return SparseConnectivityInit{*init::findSparseInitSnippet(snippet), {{param, value}}};
    };
    const std::pair<SparseConnectivityInit, std::string> bad[] = {
        {init::FixedProbability(1.5), "'prob'"},
        {init::FixedProbability(-0.1), "'prob'"},
        {init::FixedProbabilityNoAutapse(2.0), "'prob'"},
        {withParam("FixedNumberPostWithReplacement", "rowLength", -1.0), "'rowLength'"},
        {withParam("FixedNumberPostWithReplacement", "rowLength", 2.5), "'rowLength'"},
        {withParam("FixedNumberTotalWithReplacement", "total", 1e10), "'total'"},
    };
    for (const auto& [conn, fragment] : bad) {
        Model m;
        m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), lifVars());
        m.addSynapseGroup("S", MatrixType::Sparse, 0, "Exc", "Exc",
                          {models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}},
                          {models::DeltaCurr(), {}, {}}, conn);
        expectError<ModelError>([&] { m.finalise(); }, {"group 'S', connectivity", fragment});
    }
    for (const double prob : {0.0, 1.0}) {
        Model m;
        m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), lifVars());
        m.addSynapseGroup("S", MatrixType::Sparse, 0, "Exc", "Exc",
                          {models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}},
                          {models::DeltaCurr(), {}, {}}, init::FixedProbability(prob));
        EXPECT_NO_THROW(m.finalise()) << prob;
    }
}

TEST(Validation, BuiltinModelDomains) {
    auto lifWith = [](const char* name, double value) {
        auto p = lifParams();
        p[name] = value;
        return p;
    };
    for (const auto& [p, fragment] :
         {std::pair{lifWith("C", 0.0), "'C'"}, std::pair{lifWith("TauM", -1.0), "'TauM'"},
          std::pair{lifWith("TauRefrac", -0.5), "'TauRefrac'"}}) {
        Model m;
        m.addNeuronGroup("Exc", 10, models::LIF(), p, lifVars());
        expectError<ModelError>([&] { m.finalise(); }, {"group 'Exc', params", "LIF", fragment});
    }
    {
        Model m;
        m.addNeuronGroup("In", 10, models::Poisson(), {{"rate", -5.0}}, {{"timeStepToSpike", 0.0}});
        expectError<ModelError>([&] { m.finalise(); }, {"group 'In'", "'rate'", ">= 0"});
    }
    for (const auto& [c, tauM, fragment] :
         {std::tuple{1.0, 0.0, "'TauM'"}, std::tuple{-1.0, 10.0, "'C'"}}) {
        Model m;
        m.addNeuronGroup("Out", 10, models::LeakyIntegrate(),
                         {{"C", c}, {"TauM", tauM}, {"Vrest", 0.0}}, {{"V", 0.0}});
        expectError<ModelError>([&] { m.finalise(); }, {"group 'Out'", fragment});
    }
    const std::pair<PostsynapticInit, std::string> badPs[] = {
        {{models::ExpCurr(), {{"tau", 0.0}}, {}}, "'tau'"},
        {{models::ExpCond(), {{"tau", -1.0}, {"E", 0.0}}, {}}, "'tau'"}};
    for (const auto& [ps, fragment] : badPs) {
        Model m;
        m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), lifVars());
        m.addSynapseGroup("S", MatrixType::Dense, 0, "Exc", "Exc",
                          {models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}}, ps);
        expectError<ModelError>([&] { m.finalise(); }, {"group 'S', postsynaptic", fragment});
    }
    ParamValues stdp = {{"tauPlus", 20.0}, {"tauMinus", 20.0}, {"Aplus", 0.01},
                        {"Aminus", 0.01},  {"Wmin", 0.0},      {"Wmax", 1.0}};
    for (const auto& [name, value, fragment] :
         {std::tuple{"tauPlus", 0.0, "'tauPlus'"}, std::tuple{"tauMinus", -1.0, "'tauMinus'"},
          std::tuple{"Wmin", 2.0, "'Wmin'"}}) {
        auto p = stdp;
        p[name] = value;
        Model m;
        m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), lifVars());
        m.addSynapseGroup("S", MatrixType::Dense, 0, "Exc", "Exc",
                          {models::STDPNearest(), p, {{"g", 0.5}}, {}, {}},
                          {models::DeltaCurr(), {}, {}});
        expectError<ModelError>([&] { m.finalise(); }, {"group 'S', weight update", fragment});
    }
    {
        Model m;
        m.addNeuronGroup("Exc", 10, models::LIF(), lifParams(), lifVars());
        m.addCurrentSource("Noise", models::GaussianNoise(), "Exc", {{"mean", 0.0}, {"sd", -1.0}},
                           {});
        expectError<ModelError>([&] { m.finalise(); }, {"group 'Noise'", "'sd'"});
    }
    for (const auto& [name, value] :
         {std::pair{"beta1", 1.0}, std::pair{"beta2", -0.1}, std::pair{"epsilon", 0.0}}) {
        ParamValues adam = {{"beta1", 0.9}, {"beta2", 0.999}, {"epsilon", 1e-8}, {"alpha", 1e-3}};
        adam[name] = value;
        Model m;
        NeuronModel nm = models::LIF();
        nm.vars.push_back({"Grad"});
        auto vars = lifVars();
        vars["Grad"] = 0.0;
        m.addNeuronGroup("Exc", 10, nm, lifParams(), vars);
        m.addCustomUpdate("Opt", "Step", models::Adam(), adam, {{"m", 0.0}, {"v", 0.0}},
                          {{"gradient", {"Exc", "Grad"}}, {"variable", {"Exc", "V"}}});
        expectError<ModelError>([&] { m.finalise(); }, {"group 'Opt'", name});
    }
}

// ---- sizes ----

TEST(Validation, SizeProductsThatOverflowTheirIndexTypes) {
    {
        Model m;
        m.addNeuronGroup("Huge", 4294967295u, models::LIF(), lifParams(), lifVars());
        expectError<ModelError>([&] { m.finalise(); }, {"group 'Huge'", "size"});
    }
    {
        Model m;
        m.setBatchSize(4294967295u);
        m.addNeuronGroup("Exc", 4294967000u, models::LIF(), lifParams(), lifVars());
        expectError<ModelError>([&] { m.finalise(); }, {"group 'Exc'", "batch", "overflows"});
    }
    const WeightUpdateInit wu{models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}};
    const PostsynapticInit ps{models::DeltaCurr(), {}, {}};
    {
        Model m;
        m.addNeuronGroup("A", 100000, models::LIF(), lifParams(), lifVars());
        m.addSynapseGroup("S", MatrixType::Sparse, 0, "A", "A", wu, ps,
                          init::FixedNumberPostWithReplacement(50000));
        expectError<ModelError>([&] { m.finalise(); },
                                {"group 'S', connectivity", "rows x maximum row length"});
    }
    {
        Model m;
        m.addNeuronGroup("A", 4, models::LIF(), lifParams(), lifVars());
        m.addSynapseGroup("S", MatrixType::Dense, 4294967295u, "A", "A", wu, ps);
        expectError<ModelError>([&] { m.finalise(); }, {"group 'S', axonal delay"});
    }
    {
        Model m;
        m.addNeuronGroup("A", 4, models::LIF(), lifParams(), lifVars());
        m.addSynapseGroup("S", MatrixType::Dense, 0, "A", "A", wu, ps)
            .setMaxDendriticDelaySteps(2000000000u);
        expectError<ModelError>([&] { m.finalise(); }, {"group 'S', max dendritic delay"});
    }
    {
        Model m;
        m.addNeuronGroup("A", 2000000000u, models::LIF(), lifParams(), lifVars());
        m.addSynapseGroup("S", MatrixType::Dense, 0, "A", "A", wu, ps);
        expectError<ModelError>([&] { m.finalise(); }, {"group 'S', size", "synapse variables"});
    }
    {
        // Without a delay the source's queue still has two slots (NeuronGroup::slotsForDelay).
        Model m;
        m.addNeuronGroup("A", 4000000000u, models::LIF(), lifParams(), lifVars());
        m.addSynapseGroup("S", MatrixType::Dense, 0, "A", "A", wu, ps);
        expectError<ModelError>([&] { m.finalise(); },
                                {"group 'S', axonal delay", "2 x 4000000000"});
    }
}

// ---- errors found when building or running: written once, run on every backend ----

class RuntimeValidation : public sftest::BackendTest {};

TEST_P(RuntimeValidation, CompilerErrorPointsAtSnippetLine) {
    NeuronModel nm = models::LIF();
    // The checker knows every function's arity, so a wrong call never reaches the compiler.
    nm.simCode = "V = V;\nV = fmin(V);";
    Model m("compile_error");
    m.addNeuronGroup("Cell", 4, nm, lifParams(), lifVars());
    expectError<ModelError>([&] { Simulation sim(m, prefs()); },
                            {"Cell.simCode line 2, column 5", "'fmin' takes 2 arguments"});
}

TEST_P(RuntimeValidation, AccessErrors) {
    Model m("access");
    auto& ng = m.addNeuronGroup("Cell", 4, models::LIF(), lifParams(), lifVars());
    ng.setParamDynamic("Ioffset");
    Simulation sim(m, prefs());
    expectError<ModelError>([&] { sim.setDynamicParam("Cell", "Vrest", 1.0); },
                            {"Cell", "Vrest", "not dynamic"});
    expectError<ModelError>([&] { sim.view<double>("Cell", "V"); }, {"Cell", "V", "float"});
    expectError<ModelError>([&] { sim.pull("Cell", "W"); }, {"Cell", "no variable 'W'"});
    expectError<ModelError>([&] { sim.pull("Nope", "V"); }, {"Nope"});
    expectError<ModelError>([&] { sim.spikes("Cell"); }, {"Cell", "record"});
    EXPECT_NO_THROW(sim.setDynamicParam("Cell", "Ioffset", 2.0));
}

TEST_P(RuntimeValidation, RowOverflowIsReportedNotTruncated) {
    SparseInitSnippet tooLong;
    tooLong.name = "TwoPerRow";
    tooLong.rowBuildCode = "addSynapse(0);\naddSynapse(1);";
    tooLong.calcMaxRowLength = [](unsigned, unsigned, const ParamValues&) { return 1u; };
    Model m("overflow");
    m.addNeuronGroup("A", 4, models::LIF(), lifParams(), lifVars());
    m.addSynapseGroup("S", MatrixType::Sparse, 0, "A", "A",
                      {models::StaticPulse(), {}, {{"g", 1.0}}, {}, {}},
                      {models::DeltaCurr(), {}, {}}, SparseConnectivityInit{tooLong, {}});
    expectError<ModelError>([&] { Simulation sim(m, prefs()); },
                            {"'S'", "row", "maximum row length 1"});
}

TEST_P(RuntimeValidation, DendriticDelayBeyondMaximumIsReported) {
    Model m("dendritic");
    m.setDT(1.0);
    m.addNeuronGroup("Src", 1, models::SpikeSourceArray(), {},
                     {{"startSpike", 0.0}, {"endSpike", 1.0}});
    m.addNeuronGroup("Tgt", 1, models::LIF(), lifParams(), lifVars());
    auto& sg = m.addSynapseGroup(
        "S", MatrixType::Dense, 0, "Src", "Tgt",
        {models::StaticPulseDendriticDelay(), {}, {{"g", 1.0}, {"d", 5.0}}, {}, {}},
        {models::DeltaCurr(), {}, {}});
    sg.setMaxDendriticDelaySteps(3);
    Simulation sim(m, prefs());
    sim.setEGP("Src", "spikeTimes", std::vector<double>{0.5});
    expectError<ModelError>([&] { sim.run(5); }, {"'S'", "addToPostDelay", "3 steps"});
}

SF_INSTANTIATE_BACKEND_TESTS(RuntimeValidation);

} // namespace
