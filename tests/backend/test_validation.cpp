// Every validation path: the error type and the part of the message that names the group,
// the field and (for code) the line and column.
#include "backend_fixture.hpp"
#include "spikeforge/models.hpp"

using namespace spikeforge;

namespace {

ParamValues lifParams() {
    return {{"C", 1.0},         {"TauM", 20.0},   {"Vrest", -70.0},  {"Vreset", -70.0},
            {"Vthresh", -50.0}, {"Ioffset", 0.0}, {"TauRefrac", 2.0}};
}
VarInitMap lifVars() {
    return {{"V", -70.0}, {"RefracTime", 0.0}};
}

// Runs f, expects exception E whose message contains every fragment.
template <typename E, typename F>
void expectError(F&& f, std::initializer_list<std::string> fragments) {
    try {
        f();
        FAIL() << "no exception";
    } catch (const E& e) {
        const std::string msg = e.what();
        for (const auto& frag : fragments)
            EXPECT_NE(msg.find(frag), std::string::npos) << "'" << frag << "' not in: " << msg;
    }
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
