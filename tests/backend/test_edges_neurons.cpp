// Neuron-level edges:
//  - the LIF refractory period is exact to the step: under a constant drive strong enough to
//    spike, the interspike interval is (refractory steps + integration steps) exactly, for dt = 1
//    and for the common dt = 0.1 ms (where TauRefrac / dt is not exact in binary);
//  - groups that differ only in a parameter value, or only in a variable's initial constant, are
//    merged into one kernel table, and each still behaves with its own value;
//  - every neuron of a group whose size is not a multiple of the work-group size updates and
//    spikes as itself, in merged tables of groups all at least a work-group large and of groups
//    smaller than one (the SIMT update's two ways of keeping work-items past a group's end
//    harmless), and the spike queue of each step holds exactly that step's spikes.
#include "backend_fixture.hpp"
#include "codegen/lower.hpp"
#include "spikeforge/models.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace spikeforge;

namespace {

constexpr double kTauM = 20.0, kC = 1.0, kVrest = -70.0, kVth = -50.0; // [ms] [nF] [mV] [mV]

ParamValues lifParams(double ioffset, double vthresh, double tauRefrac) {
    return {{"C", kC},
            {"TauM", kTauM},
            {"Vrest", kVrest},
            {"Vreset", kVrest},
            {"Vthresh", vthresh},
            {"Ioffset", ioffset},
            {"TauRefrac", tauRefrac}};
}

// ---- LIF refractory period ----

class LIFRefractoryEdgeTest : public sftest::BackendTest {};

struct RefracCase {
    double dt, tauRefrac, drive; // [ms] [ms] [nA]
    Precision precision;
};

TEST_P(LIFRefractoryEdgeTest, InterspikeIntervalIsExactInSteps) {
    const RefracCase cases[] = {
        {1.0, 4.0, 5.0, Precision::Float},
        {0.1, 5.0, 2.0, Precision::Float}, // Vogels-Abbott's TauRefrac at the usual dt
        {0.1, 5.0, 2.0, Precision::Double},
        {0.1, 2.0, 1.5, Precision::Float},
        {0.01, 2.0, 4.0, Precision::Float},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE("dt " + std::to_string(c.dt) + " TauRefrac " + std::to_string(c.tauRefrac) +
                     (c.precision == Precision::Float ? " float" : " double"));
        // Closed form: from Vreset the membrane needs k integration steps to reach threshold,
        // k = ceil(t*/dt) with t* = τm·ln((V∞ − Vreset)/(V∞ − Vth)); after a spike it is clamped
        // for TauRefrac/dt steps (without integrating), then integrates k steps again.
        const double vInf = kVrest + c.drive * kTauM / kC;
        const double tStar = kTauM * std::log((vInf - kVrest) / (vInf - kVth));
        const double kReal = tStar / c.dt;
        // Far enough from a whole number that rounding cannot move the crossing by a step (in
        // float, ExpTC's rounding alone shifts t* by up to ~0.1 step at dt = 0.01 ms).
        ASSERT_GT(std::abs(kReal - std::round(kReal)), 0.25);
        const long kIntegrate = static_cast<long>(std::ceil(kReal));
        const long kRefrac = std::lround(c.tauRefrac / c.dt);
        const long isi = kRefrac + kIntegrate;

        Model m("lif_refractory_edge");
        m.setDT(c.dt);
        m.setPrecision(c.precision);
        m.addNeuronGroup("Cell", 1, models::LIF(), lifParams(c.drive, kVth, c.tauRefrac),
                         {{"V", kVrest}, {"RefracTime", 0.0}})
            .setSpikeRecording(true);
        Simulation sim(m, prefs());
        const uint64_t steps = static_cast<uint64_t>(5 * isi);
        sim.setRecordingWindow(steps);
        sim.run(steps);
        sim.pullRecording();
        const auto spikes = sim.spikes("Cell");
        ASSERT_GE(spikes.size(), 4u);
        // The first spike: the k-th integration step is step k − 1 (steps count from 0).
        EXPECT_EQ(std::lround(spikes[0].time / c.dt), kIntegrate - 1);
        for (size_t i = 1; i < spikes.size(); i++)
            EXPECT_EQ(std::lround((spikes[i].time - spikes[i - 1].time) / c.dt), isi)
                << "interval " << i;
    }
}

SF_INSTANTIATE_BACKEND_TESTS(LIFRefractoryEdgeTest);

// ---- merging of groups that differ in one value ----

class MergeEdgeTest : public sftest::BackendTest {};

const codegen::MergedGroupTable* tableWith(const codegen::Plan& plan, const std::string& phase,
                                           const std::string& a, const std::string& b) {
    for (const auto& t : plan.mergedGroups) {
        if (t.symbol.rfind("merged" + phase, 0) != 0) continue;
        const auto& g = t.groupNames;
        if (std::find(g.begin(), g.end(), a) != g.end() &&
            std::find(g.begin(), g.end(), b) != g.end())
            return &t;
    }
    return nullptr;
}

// True if some field of `table` holds `va` for group a and `vb` for group b: the differing value
// is stored per group, not folded into the shared code.
bool storesPerGroup(const codegen::MergedGroupTable& table, const std::string& a, double va,
                    const std::string& b, double vb) {
    const auto& g = table.groupNames;
    const size_t ia = std::find(g.begin(), g.end(), a) - g.begin();
    const size_t ib = std::find(g.begin(), g.end(), b) - g.begin();
    for (size_t f = 0; f < table.fields.size(); f++) {
        const auto& ba = table.bindings[ia][f];
        const auto& bb = table.bindings[ib][f];
        if (ba.kind == codegen::FieldBinding::Kind::Number &&
            bb.kind == codegen::FieldBinding::Kind::Number && ba.number == va && bb.number == vb)
            return true;
    }
    return false;
}

TEST_P(MergeEdgeTest, GroupsDifferingInOneValueMergeAndKeepTheirValues) {
    constexpr double kDt = 0.5, kOffA = 0.5, kOffB = 0.8, kV0C = -70.0, kV0D = -60.0;
    constexpr unsigned kN = 7, kSteps = 40;
    Model m("merge_edge");
    m.setDT(kDt);
    m.setPrecision(Precision::Double);
    // A and B differ only in Ioffset; C and D only in V's initial constant. Thresholds are out of
    // reach, so every membrane relaxes along its closed form.
    const VarInitMap restInit = {{"V", kV0C}, {"RefracTime", 0.0}};
    m.addNeuronGroup("A", kN, models::LIF(), lifParams(kOffA, 1000.0, 2.0), restInit);
    m.addNeuronGroup("B", kN, models::LIF(), lifParams(kOffB, 1000.0, 2.0), restInit);
    m.addNeuronGroup("C", kN, models::LIF(), lifParams(kOffA, 1000.0, 2.0), restInit);
    m.addNeuronGroup("D", kN, models::LIF(), lifParams(kOffA, 1000.0, 2.0),
                     {{"V", kV0D}, {"RefracTime", 0.0}});
    Simulation sim(m, prefs()); // finalises the model

    const auto plan = codegen::lowerModel(m);
    const auto* update = tableWith(plan, "NeuronUpdate", "A", "B");
    ASSERT_NE(update, nullptr) << "A and B (one parameter apart) were not merged";
    EXPECT_TRUE(storesPerGroup(*update, "A", kOffA, "B", kOffB));
    const auto* init = tableWith(plan, "NeuronInit", "C", "D");
    ASSERT_NE(init, nullptr) << "C and D (one initial value apart) were not merged";
    EXPECT_TRUE(storesPerGroup(*init, "C", kV0C, "D", kV0D));

    sim.run(kSteps);
    auto expected = [&](double ioffset, double v0) {
        const double vInf = kVrest + ioffset * kTauM / kC;
        return vInf + (v0 - vInf) * std::exp(-(kSteps * kDt) / kTauM);
    };
    const std::pair<const char*, double> groups[] = {{"A", expected(kOffA, kV0C)},
                                                     {"B", expected(kOffB, kV0C)},
                                                     {"C", expected(kOffA, kV0C)},
                                                     {"D", expected(kOffA, kV0D)}};
    for (const auto& [name, v] : groups) {
        sim.pull(name, "V");
        for (double x : sim.view<double>(name, "V"))
            EXPECT_NEAR(x, v, 1e-9) << "group " << name;
    }
    // The closed forms really differ, so a shared value could not pass.
    EXPECT_GT(std::abs(expected(kOffA, kV0C) - expected(kOffB, kV0C)), 1.0);
    EXPECT_GT(std::abs(expected(kOffA, kV0C) - expected(kOffA, kV0D)), 1.0);
}

SF_INSTANTIATE_BACKEND_TESTS(MergeEdgeTest);

// ---- group sizes around the work-group size ----

class GroupTailEdgeTest : public sftest::BackendTest {};

// Counts its steps in n and its spikes in c; spikes when (n + 7 id + 3 batch) mod period is 0,
// so each neuron and batch element has its own phase.
NeuronModel phaseModel() {
    NeuronModel n;
    n.name = "Phase";
    n.params = {"period"};
    n.vars = {{"n"}, {"c"}};
    n.simCode = "n += 1.0;";
    n.thresholdConditionCode = "fmod(n + 7.0 * id + 3.0 * batch, period) == 0.0";
    n.resetCode = "c += 1.0;";
    return n;
}

bool phaseSpikes(unsigned step, unsigned id, unsigned batch) { // step: 0-based
    return (step + 1 + 7 * id + 3 * batch) % 5 == 0;
}

// Runs groups of `sizes` (one merged table) for kSteps, checking each step's queue, then the
// recorded spikes and the spike counts against phaseSpikes.
void checkTails(const std::string& backend, const BackendPreferences& prefs,
                const std::vector<unsigned>& sizes, unsigned batch) {
    constexpr unsigned kSteps = 23;
    Model m("tails");
    m.setDT(1.0);
    m.setBatchSize(batch);
    for (size_t g = 0; g < sizes.size(); g++) {
        auto& ng = m.addNeuronGroup("G" + std::to_string(g), sizes[g], phaseModel(),
                                    {{"period", 5.0}}, {{"n", 0.0}, {"c", 0.0}});
        ng.setSpikeRecording(true);
    }
    Simulation sim(m, prefs);
    sim.setRecordingWindow(kSteps);
    for (unsigned step = 0; step < kSteps; step++) {
        sim.step();
        for (size_t g = 0; g < sizes.size(); g++) {
            const std::string name = "G" + std::to_string(g);
            const auto queued = sim.currentSpikes(name); // the queue slot of this step
            ASSERT_EQ(queued.size(), batch);
            for (unsigned b = 0; b < batch; b++) {
                std::vector<uint32_t> expected;
                for (unsigned i = 0; i < sizes[g]; i++)
                    if (phaseSpikes(step, i, b)) expected.push_back(i);
                ASSERT_EQ(queued[b], expected) << backend << " " << name << " (" << sizes[g]
                                               << " neurons) batch " << b << " step " << step;
            }
        }
    }
    sim.pullRecording();
    for (size_t g = 0; g < sizes.size(); g++) {
        const std::string name = "G" + std::to_string(g);
        std::vector<SpikeEvent> expected;
        for (unsigned step = 0; step < kSteps; step++)
            for (unsigned b = 0; b < batch; b++)
                for (unsigned i = 0; i < sizes[g]; i++)
                    if (phaseSpikes(step, i, b)) expected.push_back({double(step), i, b});
        EXPECT_EQ(sim.spikes(name), expected) << backend << " " << name;
        sim.pull(name, "c");
        const auto c = sim.view<float>(name, "c");
        for (unsigned b = 0; b < batch; b++)
            for (unsigned i = 0; i < sizes[g]; i++) {
                unsigned n = 0;
                for (unsigned step = 0; step < kSteps; step++)
                    n += phaseSpikes(step, i, b);
                ASSERT_EQ(c[size_t(b) * sizes[g] + i], float(n))
                    << backend << " " << name << " neuron " << i << " batch " << b;
            }
    }
}

TEST_P(GroupTailEdgeTest, EveryNeuronUpdatesAsItselfWhateverTheGroupSize) {
    for (unsigned batch : {1u, 3u}) {
        SCOPED_TRACE("batch " + std::to_string(batch));
        checkTails(GetParam(), prefs(), {64, 65, 100, 129, 200}, batch); // all >= a work-group
        checkTails(GetParam(), prefs(), {1, 31, 33, 100}, batch);        // some below one
    }
}

SF_INSTANTIATE_BACKEND_TESTS(GroupTailEdgeTest);

} // namespace
