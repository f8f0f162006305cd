// Custom connectivity updates (structural plasticity): a row code that removes several synapses
// per row (by weight, by target), stops its walk with `break`, rescales some kept weights and
// adds several synapses per row, and a column code that does the like from the targets' side,
// each run twice, against a host model of the same edits applied to what the device held
// before: row lengths, targets and order, every per-synapse variable in every batch copy (those
// the update names and those it does not), a custom update's per-synapse state, and then spike
// propagation and postsynaptic learning through the new rows (the column index rebuilt). On
// every backend at batch 1 and 4.
#include "backend_fixture.hpp"

#include "spikeforge/models.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace {

using namespace spikeforge;

constexpr unsigned kPre = 6, kPost = 10, kMaxRow = 14;
constexpr double kThresh = 1.5;

// Spikes every step; `rank` (its index, shared by the batch) is what the row code reads.
NeuronModel always() {
    NeuronModel m;
    m.name = "Always";
    m.vars = {{"acc"}, {"rank", "scalar", VarAccess::ReadOnly}};
    m.simCode = "acc += Isyn;";
    m.thresholdConditionCode = "true";
    return m;
}

InitSnippet indexInit() {
    InitSnippet s;
    s.name = "Rank";
    s.code = "value = (scalar)id;";
    return s;
}

// Row i holds the targets j with (i + 2 j) % 3 == 0, in ascending order.
SparseInitSnippet thirds() {
    SparseInitSnippet s;
    s.name = "Thirds";
    s.rowBuildCode = "for (unsigned int j = 0u; j < num_post; j++) {\n"
                     "    if ((id_pre + 2u * j) % 3u == 0u) addSynapse(j);\n}";
    s.calcMaxRowLength = [](unsigned, unsigned, const ParamValues&) { return kMaxRow; };
    return s;
}

InitSnippet pairInit(const std::string& name, const std::string& code) {
    InitSnippet s;
    s.name = name;
    s.code = code;
    return s;
}

WeightUpdateModel plastic() {
    WeightUpdateModel w;
    w.name = "Plastic";
    w.vars = {{"g", "scalar", VarAccess::ReadOnly}, {"tag"}, {"hits"}};
    w.preSpikeSynCode = "addToPost(g);";
    w.postSpikeSynCode = "hits += 1.0;";
    return w;
}

CustomConnectivityUpdateModel rewire() {
    CustomConnectivityUpdateModel c;
    c.name = "Rewire";
    c.params = {"thresh"};
    c.vars = {{"age"}};
    c.preVars = {{"nkept"}};
    c.postVars = {{"cap"}};
    c.varRefs = {{"g", "scalar", CustomUpdateVarAccess::ReadWrite}};
    c.preVarRefs = {{"rank", "scalar", CustomUpdateVarAccess::ReadOnly}};
    c.postVarRefs = {{"prank", "scalar", CustomUpdateVarAccess::ReadOnly}};
    c.rowUpdateCode = "unsigned int kept = 0u;\n"
                      "for_each_synapse {\n"
                      "    if (g < thresh || ((uint32_t)g + (uint32_t)rank) % 4u == 0u || "
                      "id_post == 7u) {\n"
                      "        remove_synapse();\n"
                      "        continue;\n"
                      "    }\n"
                      "    if (prank > 8.5) break;\n"
                      "    if ((id_post & 1u) == 0u) g *= 2.0;\n"
                      "    age += cap;\n"
                      "    kept++;\n"
                      "}\n"
                      "nkept = (scalar)kept;\n"
                      "const unsigned int adds = id_pre % 3u + 1u;\n"
                      "for (unsigned int k = 0u; k < adds; k++) {\n"
                      "    add_synapse((id_pre * 7u + k * 3u + kept) % num_post, 7.0 + (scalar)k, "
                      "100.0 + (scalar)(id_pre * 10u + k));\n"
                      "}\n";
    return c;
}

// Column code: in each column, remove the first two synapses (by source) whose weight and
// source rank meet a condition, stop at source 4, raise the other weights; even targets add a
// synapse from two sources.
CustomConnectivityUpdateModel thin() {
    CustomConnectivityUpdateModel c;
    c.name = "Thin";
    c.varRefs = {{"g", "scalar", CustomUpdateVarAccess::ReadWrite}};
    c.preVarRefs = {{"rank", "scalar", CustomUpdateVarAccess::ReadOnly}};
    c.postVarRefs = {{"prank", "scalar", CustomUpdateVarAccess::ReadOnly}};
    c.columnUpdateCode = "unsigned int seen = 0u;\n"
                         "for_each_synapse {\n"
                         "    if (((uint32_t)g + (uint32_t)rank) % 3u == 1u && seen < 2u) {\n"
                         "        remove_synapse();\n"
                         "        seen++;\n"
                         "        continue;\n"
                         "    }\n"
                         "    if (id_pre == 4u) break;\n"
                         "    g += 0.25;\n"
                         "}\n"
                         "if (id_post % 2u == 0u) {\n"
                         "    add_synapse((uint32_t)prank % num_pre, 50.0 + prank);\n"
                         "    add_synapse((id_post + 1u) % num_pre, 60.0 + prank);\n"
                         "}\n";
    return c;
}

// The host's copy of the group: each row's synapses with their values (batch copies of the
// batched ones).
struct HostSynapse {
    uint32_t post;
    double g;
    std::vector<double> tag, hits, m; // per batch element
    double age = 0.0;                 // Edit's own per-synapse variable
};
using HostRows = std::vector<std::vector<HostSynapse>>;
// Edit's own presynaptic variable: the synapses each row's last walk kept.
using HostKept = std::vector<double>;

// The row code above, on the host (Post's cap is 0.5 x its index).
void rewireOnHost(HostRows& rows, unsigned batch, HostKept& nkept) {
    for (uint32_t i = 0; i < kPre; i++) {
        std::vector<HostSynapse> out;
        unsigned kept = 0;
        bool stop = false;
        for (HostSynapse s : rows[i]) {
            if (!stop) {
                const bool remove =
                    s.g < kThresh || (static_cast<uint32_t>(s.g) + i) % 4u == 0u || s.post == 7u;
                if (remove) continue;
                if (s.post > 8.5) {
                    stop = true;
                } else {
                    if ((s.post & 1u) == 0u) s.g *= 2.0;
                    s.age += 0.5 * s.post;
                    kept++;
                }
            }
            out.push_back(s);
        }
        for (unsigned k = 0; k < i % 3u + 1u; k++) {
            const std::vector<double> zeros(batch, 0.0);
            out.push_back({(i * 7u + k * 3u + kept) % kPost, 100.0 + (i * 10.0 + k), zeros, zeros,
                           zeros, 7.0 + k});
        }
        nkept[i] = kept;
        rows[i] = std::move(out);
    }
}

// The column code above, on the host: each column walks its synapses by (source, slot); the rows
// then keep their unremoved synapses in order and take the added ones by ascending target.
void thinOnHost(HostRows& rows, unsigned batch, HostKept&) {
    std::vector<std::vector<bool>> removed(kPre);
    std::vector<std::vector<HostSynapse>> added(kPre);
    for (size_t i = 0; i < kPre; i++)
        removed[i].assign(rows[i].size(), false);
    for (uint32_t j = 0; j < kPost; j++) {
        unsigned seen = 0;
        bool stop = false;
        for (uint32_t i = 0; i < kPre && !stop; i++)
            for (size_t k = 0; k < rows[i].size() && !stop; k++) {
                HostSynapse& s = rows[i][k];
                if (s.post != j) continue;
                if ((static_cast<uint32_t>(s.g) + i) % 3u == 1u && seen < 2u) {
                    removed[i][k] = true;
                    seen++;
                    continue;
                }
                if (i == 4u) {
                    stop = true;
                    break;
                }
                s.g += 0.25;
            }
        if (j % 2u == 0u) {
            const std::vector<double> zeros(batch, 0.0);
            added[j % kPre].push_back({j, 50.0 + j, zeros, zeros, zeros});
            added[(j + 1u) % kPre].push_back({j, 60.0 + j, zeros, zeros, zeros});
        }
    }
    for (size_t i = 0; i < kPre; i++) {
        std::vector<HostSynapse> out;
        for (size_t k = 0; k < rows[i].size(); k++)
            if (!removed[i][k]) out.push_back(rows[i][k]);
        std::stable_sort(
            added[i].begin(), added[i].end(),
            [](const HostSynapse& a, const HostSynapse& b) { return a.post < b.post; });
        out.insert(out.end(), added[i].begin(), added[i].end());
        rows[i] = std::move(out);
    }
}

class ConnectivityUpdate : public ::testing::TestWithParam<std::tuple<std::string, unsigned>> {
protected:
    unsigned batch() const { return std::get<1>(GetParam()); }
    BackendPreferences prefs() const { return sftest::preferencesFor(std::get<0>(GetParam())); }

    void build(Model& m, bool columns) {
        m.setDT(1.0);
        m.setBatchSize(batch());
        m.setPrecision(Precision::Double);
        const VarInitMap neurons = {{"acc", 0.0}, {"rank", VarInit(indexInit(), {})}};
        m.addNeuronGroup("Pre", kPre, always(), {}, neurons);
        m.addNeuronGroup("Post", kPost, always(), {}, neurons);
        const VarInitMap wuInits = {
            {"g", VarInit(pairInit("G", "value = (scalar)(id_pre * 10u + id_post);"), {})},
            {"tag",
             VarInit(pairInit("Tag", "value = (scalar)(id_pre * 100u + id_post) + 1000.0 * batch;"),
                     {})},
            {"hits", 0.0}};
        m.addSynapseGroup("Syn", MatrixType::Sparse, 0, "Pre", "Post",
                          {plastic(), {}, wuInits, {}, {}}, {models::DeltaCurr(), {}, {}},
                          SparseConnectivityInit{thirds(), {}});
        // Per-synapse state of a custom update over the group: m = tag + 0.5 per batch copy.
        CustomUpdateModel tick;
        tick.name = "Tick";
        tick.vars = {{"m"}};
        tick.varRefs = {{"tag", "scalar", CustomUpdateVarAccess::ReadOnly}};
        tick.updateCode = "m = tag + 0.5;";
        m.addCustomUpdateWU("Mom", "Tick", tick, {}, {{"m", 0.0}}, {{"tag", {"Syn", "tag"}}});
        // Edit (row code, own variables) runs as "Rewire"; with `columns`, Thin does instead and
        // Edit's own per-synapse variable must move with Thin's edits.
        m.addCustomConnectivityUpdate(
            "Edit", columns ? "Unused" : "Rewire", "Syn", rewire(), {{"thresh", kThresh}},
            {{"age",
              VarInit(pairInit("Age", "value = (scalar)id_pre + 0.01 * (scalar)id_post;"), {})}},
            {{"nkept", 0.0}}, {{"cap", VarInit(pairInit("Cap", "value = 0.5 * (scalar)id;"), {})}},
            {{"g", {"Syn", "g"}}}, {{"rank", {"Pre", "rank"}}}, {{"prank", {"Post", "rank"}}});
        if (columns)
            m.addCustomConnectivityUpdate("Thin", "Rewire", "Syn", thin(), {}, {}, {}, {},
                                          {{"g", {"Syn", "g"}}}, {{"rank", {"Pre", "rank"}}},
                                          {{"prank", {"Post", "rank"}}});
    }

    // Everything the device holds for the group, row by row (Mom.m read raw from its rows).
    HostRows read(Simulation& sim) {
        const auto pairs = sim.synapses("Syn");
        const auto g = sim.synapseValues("Syn", "g");
        std::vector<std::vector<double>> tag, hits;
        for (unsigned b = 0; b < batch(); b++) {
            tag.push_back(sim.synapseValues("Syn", "tag", b));
            hits.push_back(sim.synapseValues("Syn", "hits", b));
        }
        sim.pull("Mom", "m");
        const auto m = sim.view<double>("Mom", "m");
        sim.pull("Edit", "age");
        const auto age = sim.view<double>("Edit", "age");
        const size_t stride = sim.rowStride("Syn"), slots = size_t(kPre) * stride;
        EXPECT_EQ(m.size(), slots * batch());
        HostRows rows(kPre);
        for (size_t s = 0; s < pairs.size(); s++) {
            const size_t slot = pairs[s].pre * stride + rows[pairs[s].pre].size();
            HostSynapse h{pairs[s].post, g[s], {}, {}, {}, age[slot]};
            for (unsigned b = 0; b < batch(); b++) {
                h.tag.push_back(tag[b][s]);
                h.hits.push_back(hits[b][s]);
                h.m.push_back(m[b * slots + slot]);
            }
            rows[pairs[s].pre].push_back(h);
        }
        return rows;
    }

    static void expectSame(const HostRows& got, const HostRows& want, const std::string& when) {
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < want.size(); i++) {
            ASSERT_EQ(got[i].size(), want[i].size()) << when << ": row " << i;
            for (size_t k = 0; k < want[i].size(); k++) {
                const auto &a = got[i][k], &b = want[i][k];
                const std::string at =
                    when + ": row " + std::to_string(i) + " slot " + std::to_string(k);
                EXPECT_EQ(a.post, b.post) << at;
                EXPECT_EQ(a.g, b.g) << at;
                EXPECT_EQ(a.tag, b.tag) << at;
                EXPECT_EQ(a.hits, b.hits) << at;
                EXPECT_EQ(a.m, b.m) << at;
                EXPECT_DOUBLE_EQ(a.age, b.age) << at;
            }
        }
    }

    // Runs the update twice against `onHost`, then two steps through the new rows.
    void editAndCompare(bool columns, void (*onHost)(HostRows&, unsigned, HostKept&));
};

TEST_P(ConnectivityUpdate, EditsRowsAsTheHostModelAndTheNewRowsCarrySpikes) {
    editAndCompare(false, rewireOnHost);
}

TEST_P(ConnectivityUpdate, EditsColumnsAsTheHostModelAndTheNewRowsCarrySpikes) {
    editAndCompare(true, thinOnHost);
}

void ConnectivityUpdate::editAndCompare(bool columns,
                                        void (*onHost)(HostRows&, unsigned, HostKept&)) {
    Model m;
    build(m, columns);
    Simulation sim(m, prefs());
    sim.customUpdate("Tick");
    // Postsynaptic learning in a step runs for the target spikes of the step before, and every
    // target spikes every step: two steps from the start give each synapse one hit, every two
    // steps after that two.
    sim.run(2);
    HostRows host = read(sim);
    const double c0 = 1.0;
    size_t before = 0;
    for (const auto& row : host) {
        before += row.size();
        for (const auto& s : row)
            for (unsigned b = 0; b < batch(); b++) {
                ASSERT_EQ(s.hits[b], c0);
                ASSERT_EQ(s.m[b], s.tag[b] + 0.5);
            }
    }
    ASSERT_GT(before, 0u);

    HostKept nkept(kPre, 0.0);
    for (int call = 1; call <= 2; call++) {
        sim.customUpdate("Rewire");
        onHost(host, batch(), nkept);
        expectSame(read(sim), host, "after call " + std::to_string(call));
        sim.pull("Edit", "nkept");
        const auto got = sim.view<double>("Edit", "nkept");
        EXPECT_EQ(std::vector<double>(got.begin(), got.end()), nkept) << "call " << call;
    }
    // Both calls removed several synapses from some row and added several to others.
    size_t after = 0;
    for (const auto& row : host)
        after += row.size();
    EXPECT_NE(after, before);

    // Through the new rows: each target's input is the sum of its synapses' g (every source
    // spikes every step), and postsynaptic learning reaches exactly the synapses there are now.
    sim.pull("Post", "acc");
    const auto acc0 = std::vector<double>(sim.view<double>("Post", "acc").begin(),
                                          sim.view<double>("Post", "acc").end());
    sim.run(2);
    std::vector<double> input(kPost, 0.0);
    for (auto& row : host)
        for (auto& s : row) {
            input[s.post] += s.g;
            for (auto& h : s.hits)
                h += 2.0;
        }
    expectSame(read(sim), host, "after two more steps");
    sim.pull("Post", "acc");
    const auto acc = sim.view<double>("Post", "acc");
    for (unsigned b = 0; b < batch(); b++)
        for (unsigned j = 0; j < kPost; j++)
            EXPECT_DOUBLE_EQ(acc[b * kPost + j] - acc0[b * kPost + j], 2.0 * input[j])
                << "batch " << b << " target " << j;
}

TEST_P(ConnectivityUpdate, AFullRowOrANeuronOutOfRangeIsReportedAndAddsNothing) {
    for (const int kind : {0, 1, 2, 3}) { // full row, target out of range; from rows, columns
        const bool full = kind % 2 == 0, columns = kind >= 2;
        SCOPED_TRACE(std::string(columns ? "column" : "row") + (full ? " full" : " out of range"));
        Model m;
        m.setBatchSize(batch());
        m.addNeuronGroup("Pre", 2, always(), {}, {{"acc", 0.0}, {"rank", 0.0}});
        m.addNeuronGroup("Post", 4, always(), {}, {{"acc", 0.0}, {"rank", 0.0}});
        auto& sg =
            m.addSynapseGroup("Syn", MatrixType::Sparse, 0, "Pre", "Post",
                              {plastic(), {}, {{"g", 1.0}, {"tag", 0.0}, {"hits", 0.0}}, {}, {}},
                              {models::DeltaCurr(), {}, {}}, SparseConnectivityInit{thirds(), {}});
        sg.setMaxConnections(3);
        CustomConnectivityUpdateModel grow;
        grow.name = "Grow";
        if (columns)
            grow.columnUpdateCode =
                full ? "add_synapse(0u);\nadd_synapse(1u);" : "add_synapse(num_pre + id_post);";
        else
            grow.rowUpdateCode = full
                                     ? "for (unsigned int k = 0u; k < 5u; k++) add_synapse(k % 4u);"
                                     : "add_synapse(num_post + id_pre);";
        m.addCustomConnectivityUpdate("G", "Grow", "Syn", grow, {}, {}, {}, {}, {});
        Simulation sim(m, prefs());
        const auto before = sim.synapses("Syn");
        sim.customUpdate("Grow");
        sftest::expectError<ModelError>([&] { sim.checkErrors(); },
                                        {"synapse group 'Syn'", "add_synapse",
                                         full ? "row full" : "outside its group",
                                         full ? "3" : "sources are below 2, targets below 4"});
        const auto after = sim.synapses("Syn");
        if (full) {
            // Rows: both rows filled to 3, the rest refused. Columns: every target adds one
            // synapse to each row; the first to come take the free slots (row 0 holds 2, row 1
            // holds 1), so rows end full with their old synapses first.
            ASSERT_EQ(after.size(), 6u);
            for (size_t k = 0; k < before.size(); k++)
                EXPECT_TRUE(std::find(after.begin(), after.end(), before[k]) != after.end());
        } else {
            EXPECT_EQ(after, before);
        }
    }
}

// Random row and column code: two simulations of one model and seed make the same edits, and a
// second call draws afresh (its stream is keyed by the call).
TEST_P(ConnectivityUpdate, RandomEditsRepeatWithTheSeedAndDifferByCall) {
    auto run = [&] {
        Model m;
        m.setBatchSize(batch());
        m.setSeed(11);
        m.addNeuronGroup("Pre", 8, always(), {}, {{"acc", 0.0}, {"rank", 0.0}});
        m.addNeuronGroup("Post", 8, always(), {}, {{"acc", 0.0}, {"rank", 0.0}});
        m.addSynapseGroup("Syn", MatrixType::Sparse, 0, "Pre", "Post",
                          {plastic(), {}, {{"g", 1.0}, {"tag", 0.0}, {"hits", 0.0}}, {}, {}},
                          {models::DeltaCurr(), {}, {}}, SparseConnectivityInit{thirds(), {}});
        CustomConnectivityUpdateModel shuffle;
        shuffle.name = "Shuffle";
        shuffle.rowUpdateCode = "for_each_synapse {\n    if (rand_uniform() < 0.5) "
                                "remove_synapse();\n}\n"
                                "add_synapse((uint32_t)(rand_uniform() * 7.99));";
        shuffle.columnUpdateCode = "if (rand_uniform() < 0.5) add_synapse(id_post % num_pre);";
        m.addCustomConnectivityUpdate("S", "Shuffle", "Syn", shuffle, {}, {}, {}, {}, {});
        Simulation sim(m, prefs());
        std::vector<std::vector<SynapsePair>> calls;
        for (int call = 0; call < 2; call++) {
            sim.customUpdate("Shuffle");
            calls.push_back(sim.synapses("Syn"));
        }
        sim.checkErrors();
        return calls;
    };
    const auto a = run(), b = run();
    EXPECT_EQ(a, b);
    EXPECT_NE(a[0], a[1]);
}

SF_INSTANTIATE_BACKEND_BATCH_TESTS(ConnectivityUpdate, 1u, 4u);

// ---- the model's checks (no backend) ----

struct Refused {
    std::string what;
    std::function<void(Model&, CustomConnectivityUpdateModel&, VarReferenceMap&)> change;
    std::vector<std::string> fragments;
};

TEST(ConnectivityUpdateModel, BadUpdatesAreClearErrors) {
    const std::vector<Refused> cases = {
        {"a Dense group",
         [](Model& m, CustomConnectivityUpdateModel&, VarReferenceMap&) {
             m.addSynapseGroup("Dense", MatrixType::Dense, 0, "Pre", "Post",
                               {plastic(), {}, {{"g", 1.0}, {"tag", 0.0}, {"hits", 0.0}}, {}, {}},
                               {models::DeltaCurr(), {}, {}});
             m.addCustomConnectivityUpdate("OnDense", "X", "Dense", {}, {}, {}, {}, {}, {});
         },
         {"custom connectivity update 'OnDense'", "Dense", "Sparse"}},
        {"an unknown reference",
         [](Model&, CustomConnectivityUpdateModel&, VarReferenceMap& refs) {
             refs["gg"] = {"Syn", "g"};
         },
         {"varRefs", "no reference 'gg'", "did you mean 'g'"}},
        {"a batched reference at batch 4",
         [](Model& m, CustomConnectivityUpdateModel&, VarReferenceMap& refs) {
             m.setBatchSize(4);
             refs["g"] = {"Syn", "tag"};
         },
         {"varRefs 'g'", "Syn.tag", "copy per batch element"}},
        {"a neuron variable as a per-synapse reference",
         [](Model&, CustomConnectivityUpdateModel&, VarReferenceMap& refs) {
             refs["g"] = {"Post", "acc"};
         },
         {"varRefs 'g'", "Post.acc", "not a per-synapse variable of synapse group 'Syn'"}},
        {"a writable postsynaptic reference",
         [](Model&, CustomConnectivityUpdateModel& c, VarReferenceMap&) {
             c.postVarRefs = {{"prank", "scalar", CustomUpdateVarAccess::ReadWrite}};
         },
         {"postVarRefs 'prank'", "read-only"}},
        {"a writable presynaptic reference with column code",
         [](Model&, CustomConnectivityUpdateModel& c, VarReferenceMap&) {
             c.columnUpdateCode = "add_synapse(0u, 1.0, 1.0);";
             c.preVarRefs = {{"rank", "scalar", CustomUpdateVarAccess::ReadWrite}};
         },
         {"preVarRefs 'rank'", "column code is read-only"}},
        {"a source outside the loop of column code",
         [](Model&, CustomConnectivityUpdateModel& c, VarReferenceMap&) {
             c.rowUpdateCode = "";
             c.columnUpdateCode = "scalar x = (scalar)id_pre;";
         },
         {"Edit.columnUpdateCode line 1", "'id_pre'"}},
        {"add_synapse inside the loop",
         [](Model&, CustomConnectivityUpdateModel& c, VarReferenceMap&) {
             c.rowUpdateCode = "for_each_synapse {\n  add_synapse(0u, 1.0, 1.0);\n}";
         },
         {"Edit.rowUpdateCode line 2", "'add_synapse' cannot be called inside"}},
        {"remove_synapse outside the loop",
         [](Model&, CustomConnectivityUpdateModel& c, VarReferenceMap&) {
             c.rowUpdateCode = "remove_synapse();";
         },
         {"Edit.rowUpdateCode line 1", "only be called inside 'for_each_synapse"}},
        {"a per-synapse name outside the loop",
         [](Model&, CustomConnectivityUpdateModel& c, VarReferenceMap&) {
             c.rowUpdateCode = "scalar x = g;";
         },
         {"Edit.rowUpdateCode line 1", "unknown identifier 'g'"}},
        {"nested loops",
         [](Model&, CustomConnectivityUpdateModel& c, VarReferenceMap&) {
             c.rowUpdateCode = "for_each_synapse {\n  for_each_synapse { }\n}";
         },
         {"Edit.rowUpdateCode line 2", "cannot be nested"}},
        {"add_synapse without the reference's value",
         [](Model&, CustomConnectivityUpdateModel& c, VarReferenceMap&) {
             c.rowUpdateCode = "add_synapse(1u);";
         },
         {"Edit.rowUpdateCode line 1", "'add_synapse' takes 3 arguments, not 1"}},
        {"an own variable without an initialiser",
         [](Model&, CustomConnectivityUpdateModel& c, VarReferenceMap&) {
             c.vars.push_back({"extra"});
         },
         {"Edit", "extra"}},
        {"a write to the target's own variable in row code",
         [](Model&, CustomConnectivityUpdateModel& c, VarReferenceMap&) {
             c.rowUpdateCode = "for_each_synapse {\n  cap = 1.0;\n}";
         },
         {"Edit.rowUpdateCode line 2", "'cap'"}},
        {"for_each_synapse in neuron code",
         [](Model& m, CustomConnectivityUpdateModel&, VarReferenceMap&) {
             NeuronModel n = always();
             n.simCode = "for_each_synapse { }";
             m.addNeuronGroup("Odd", 1, n, {}, {{"acc", 0.0}, {"rank", 0.0}});
         },
         {"Odd.simCode line 1",
          "only available in the row or column code of a custom connectivity update"}},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.what);
        Model m;
        m.addNeuronGroup("Pre", 2, always(), {}, {{"acc", 0.0}, {"rank", 0.0}});
        m.addNeuronGroup("Post", 3, always(), {}, {{"acc", 0.0}, {"rank", 0.0}});
        m.addSynapseGroup("Syn", MatrixType::Sparse, 0, "Pre", "Post",
                          {plastic(), {}, {{"g", 1.0}, {"tag", 0.0}, {"hits", 0.0}}, {}, {}},
                          {models::DeltaCurr(), {}, {}}, SparseConnectivityInit{thirds(), {}});
        CustomConnectivityUpdateModel model = rewire();
        VarReferenceMap refs = {{"g", {"Syn", "g"}}};
        c.change(m, model, refs);
        m.addCustomConnectivityUpdate("Edit", "Rewire", "Syn", model, {{"thresh", 1.0}},
                                      {{"age", 0.0}}, {{"nkept", 0.0}}, {{"cap", 0.0}}, refs,
                                      {{"rank", {"Pre", "rank"}}}, {{"prank", {"Post", "rank"}}});
        const std::string msg = sftest::errorOf<ModelError>([&] { m.finalise(); });
        for (const auto& f : c.fragments)
            EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
    }
}

} // namespace
