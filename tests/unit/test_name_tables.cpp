// The name tables of docs/snippets.md ("Names each field sees") against the contexts the checker
// uses: each listed built-in name is accepted in its field, and every other built-in name is
// refused there saying it belongs to other fields. A model with every kind of code field walks
// the whole table; a row no field matches, or a field no row documents, fails.
#include "model/contexts.hpp"
#include "model/names.hpp"
#include "snippet/scanner.hpp"
#include "spikeforge/models.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>

using namespace spikeforge;

namespace {

using Table = std::map<std::string, std::set<std::string>>;

// Rows of the table headed "| field | built-in names |": the field label (column 1, as
// written) and the back-quoted names of column 2.
Table documentedTable() {
    std::ifstream in(std::string(SPIKEFORGE_SOURCE_DIR) + "/docs/snippets.md");
    EXPECT_TRUE(in) << "docs/snippets.md not found";
    Table t;
    std::string line;
    bool inTable = false;
    while (std::getline(in, line)) {
        if (line == "| field | built-in names |") {
            inTable = true;
            continue;
        }
        if (!inTable) continue;
        if (line.rfind("|---", 0) == 0) continue;
        if (line.empty() || line[0] != '|') break;
        const size_t bar = line.find(" | ", 1);
        EXPECT_NE(bar, std::string::npos) << line;
        const std::string label = line.substr(2, bar - 2);
        std::set<std::string> names;
        const std::regex quoted("`([A-Za-z_]+)`");
        const std::string rest = line.substr(bar);
        for (std::sregex_iterator it(rest.begin(), rest.end(), quoted), end; it != end; ++it)
            names.insert((*it)[1]);
        EXPECT_TRUE(t.emplace(label, names).second) << "row '" << label << "' twice";
    }
    EXPECT_FALSE(t.empty()) << "no built-in names table in docs/snippets.md";
    return t;
}

NeuronModel neuron() {
    NeuronModel nm;
    nm.name = "Names";
    nm.vars = {{"V"}};
    nm.simCode = "V += Isyn;";
    nm.thresholdConditionCode = "V > 1.0";
    nm.resetCode = "V = 0.0;";
    return nm;
}

WeightUpdateModel weightUpdate() {
    WeightUpdateModel wu;
    wu.name = "NamesWU";
    wu.vars = {{"g"}};
    wu.preVars = {{"a"}};
    wu.postVars = {{"b"}};
    wu.preSpikeSynCode = "addToPost(g);";
    wu.postSpikeSynCode = "g += 0.0;";
    wu.synapseDynamicsCode = "addToPost(g * V_pre);";
    wu.preSpikeCode = "a += 1.0;";
    wu.preDynamicsCode = "a *= 0.5;";
    wu.postSpikeCode = "b += 1.0;";
    wu.postDynamicsCode = "b *= 0.5;";
    wu.preEventThresholdConditionCode = "V_pre > a";
    wu.preEventSynCode = "addToPost(g);";
    wu.postEventThresholdConditionCode = "V_post > b";
    wu.postEventSynCode = "g -= 0.0;";
    return wu;
}

PostsynapticModel postsynaptic() {
    PostsynapticModel ps;
    ps.name = "NamesPS";
    ps.vars = {{"h"}};
    ps.simCode = "injectCurrent(inSyn + h);\ninSyn = 0.0;";
    return ps;
}

// Every kind of code field, with a non-constant initialiser on every kind of variable (the
// connectivity has a preCalcRowLengthCode, so rowBuildCode sees preCalcRowLength).
std::unique_ptr<Model> everyField() {
    auto owned = std::make_unique<Model>("name_tables");
    Model& m = *owned;
    const VarInit u = init::Uniform(0.0, 1.0);
    m.addNeuronGroup("N", 8, neuron(), {}, {{"V", u}});
    m.addSynapseGroup("S", MatrixType::Sparse, 0, "N", "N",
                      {weightUpdate(), {}, {{"g", u}}, {{"a", u}}, {{"b", u}}},
                      {postsynaptic(), {}, {{"h", u}}}, init::FixedNumberTotalWithReplacement(12));
    m.addNeuronGroup("Img", 16, neuron(), {}, {{"V", 0.0}});
    m.addNeuronGroup("Map", 9, neuron(), {}, {{"V", 0.0}});
    WeightUpdateModel kernel;
    kernel.name = "Kernel";
    kernel.vars = {{"k"}};
    kernel.preSpikeSynCode = "addToPost(k);";
    m.addSynapseGroup("T", MatrixType::Toeplitz, 0, "Img", "Map", {kernel, {}, {{"k", u}}, {}, {}},
                      {models::DeltaCurr(), {}, {}},
                      init::Conv2D({{"conv_kh", 2},
                                    {"conv_kw", 2},
                                    {"conv_oc", 1},
                                    {"conv_sh", 1},
                                    {"conv_sw", 1},
                                    {"conv_padh", 0},
                                    {"conv_padw", 0},
                                    {"conv_oh", 3},
                                    {"conv_ow", 3},
                                    {"conv_ih", 4},
                                    {"conv_iw", 4},
                                    {"conv_ic", 1}}));
    CurrentSourceModel cs;
    cs.name = "NamesCS";
    cs.vars = {{"c"}};
    cs.injectionCode = "injectCurrent(c);";
    m.addCurrentSource("C", cs, "N", {}, {{"c", u}});
    CustomUpdateModel scale;
    scale.name = "Scale";
    scale.vars = {{"s"}};
    scale.varRefs = {{"x"}};
    scale.updateCode = "x *= s;";
    CustomUpdateModel scaleShared = scale;
    scaleShared.name = "ScaleShared";
    scaleShared.vars.push_back({"k", "scalar", CustomUpdateVarAccess::ReadOnlySharedNeuron});
    scaleShared.updateCode = "x *= s * k;";
    m.addCustomUpdate("CUN", "Update", scaleShared, {}, {{"s", u}, {"k", u}}, {{"x", {"N", "V"}}});
    m.addCustomUpdate("CUS", "Update", scale, {}, {{"s", u}}, {{"x", {"S", "g"}}});
    CustomConnectivityUpdateModel rewire;
    rewire.name = "Rewire";
    rewire.varRefs = {{"w"}};
    rewire.rowUpdateCode = "for_each_synapse {\n    if (w < 0.1) remove_synapse();\n}";
    rewire.vars = {{"age"}};
    m.addCustomConnectivityUpdate("CC", "Rewire", "S", rewire, {}, {{"age", u}}, {}, {},
                                  {{"w", {"S", "g"}}});
    m.finalise();
    return owned;
}

// The table row documenting a code field of everyField().
std::string rowOf(const contexts::CodeField& f) {
    static const std::map<std::string, std::string> fixed = {
        {"N.simCode", "neuron `simCode`"},
        {"N.thresholdConditionCode", "neuron `thresholdConditionCode`"},
        {"N.resetCode", "neuron `resetCode`"},
        {"N.init.V", "initialiser of a neuron-shaped variable"},
        {"S.ps.simCode", "postsynaptic `simCode`"},
        {"S.preSpikeSynCode", "weight update `preSpikeSynCode`"},
        {"S.postSpikeSynCode", "weight update `postSpikeSynCode`"},
        {"S.synapseDynamicsCode", "weight update `synapseDynamicsCode`"},
        {"S.preEventThresholdConditionCode", "weight update `preEventThresholdConditionCode`"},
        {"S.preEventSynCode", "weight update `preEventSynCode`"},
        {"S.postEventThresholdConditionCode", "weight update `postEventThresholdConditionCode`"},
        {"S.postEventSynCode", "weight update `postEventSynCode`"},
        {"S.preSpikeCode", "weight update `preSpikeCode`"},
        {"S.preDynamicsCode", "weight update `preDynamicsCode`"},
        {"S.postSpikeCode", "weight update `postSpikeCode`"},
        {"S.postDynamicsCode", "weight update `postDynamicsCode`"},
        {"S.init.g", "initialiser of a per-synapse variable"},
        {"S.init.a", "initialiser of a neuron-shaped variable"},
        {"S.init.b", "initialiser of a neuron-shaped variable"},
        {"S.init.h", "initialiser of a neuron-shaped variable"},
        {"S.connectivity.rowBuildCode", "connectivity `rowBuildCode`"},
        {"S.connectivity.preCalcRowLengthCode", "connectivity `preCalcRowLengthCode`"},
        {"T.init.k", "initialiser of a Toeplitz kernel variable"},
        {"C.injectionCode", "current source `injectionCode`"},
        {"C.init.c", "initialiser of a neuron-shaped variable"},
        {"CUN.updateCode", "custom update `updateCode` over neurons"},
        {"CUN.init.s", "initialiser of a neuron-shaped variable"},
        {"CUN.init.k", "initialiser of a custom-update variable without elements"},
        {"CUS.updateCode", "custom update `updateCode` over synapses"},
        {"CUS.init.s", "initialiser of a per-synapse variable"},
        {"CC.rowUpdateCode", "custom connectivity update `rowUpdateCode`"},
        {"CC.columnUpdateCode", "custom connectivity update `columnUpdateCode`"},
        {"CC.init.age", "initialiser of a per-synapse variable"},
    };
    // The three neuron groups have the same fields, and so have the two synapse groups but for
    // the Toeplitz group's kernel variable.
    std::string group = f.group;
    if (group == "Img" || group == "Map") group = "N";
    if (group == "T" && f.field != "init.k") group = "S";
    const auto it = fixed.find(group + "." + f.field);
    return it == fixed.end() ? "" : it->second;
}

// Built-in names the context offers (functions have their own table).
std::set<std::string> builtinsOf(const snippet::Context& c) {
    std::set<std::string> out;
    for (const auto& [name, symbol] : c.names)
        if (names::builtinNames().count(name) && symbol.kind != snippet::NameKind::Function)
            out.insert(name);
    return out;
}

// Code reading `name` in a field of this context.
std::string reading(const snippet::Context& c, const std::string& name) {
    const auto it = c.names.find(name);
    const bool array = name == "preCalcRowLength" || (it != c.names.end() && it->second.array);
    const std::string value = array ? name + "[0]" : name;
    return c.expression ? "(scalar)(" + value + ") > 0.0"
                        : "scalar probe = (scalar)(" + value + ");";
}

} // namespace

TEST(NameTables, EveryFieldHasExactlyTheDocumentedBuiltinNames) {
    const Table table = documentedTable();
    const auto owned = everyField();
    const Model& m = *owned;
    std::set<std::string> rowsSeen;
    for (const auto& f : contexts::allCodeFields(m)) {
        const std::string row = rowOf(f);
        ASSERT_FALSE(row.empty()) << f.group << "." << f.field << " has no row in this test";
        const auto it = table.find(row);
        ASSERT_NE(it, table.end()) << "docs/snippets.md has no row '" << row << "'";
        rowsSeen.insert(row);
        EXPECT_EQ(builtinsOf(f.context), it->second) << f.group << "." << f.field;
    }
    for (const auto& [row, names] : table)
        EXPECT_TRUE(rowsSeen.count(row)) << "row '" << row << "' documents no field";
}

TEST(NameTables, ListedNamesAreAcceptedAndTheOthersRefusedSayingWhy) {
    const auto owned = everyField();
    const Model& m = *owned;
    std::set<std::string> all;
    for (const auto& n : names::builtinNames())
        if (!snippet::functionInfo(n)) all.insert(n);
    for (const auto& f : contexts::allCodeFields(m)) {
        const auto mine = builtinsOf(f.context);
        for (const auto& name : all) {
            const std::string code = reading(f.context, name);
            SCOPED_TRACE(f.group + "." + f.field + ": " + code);
            if (mine.count(name)) {
                EXPECT_NO_THROW(snippet::scan(code, f.context));
                continue;
            }
            try {
                snippet::scan(code, f.context);
                ADD_FAILURE() << "accepted";
            } catch (const ModelError& e) {
                const std::string what = e.what();
                EXPECT_NE(what.find("unknown identifier '" + name + "': '" + name +
                                    "' is a built-in name of other code fields, not of " + f.field),
                          std::string::npos)
                    << what;
            }
        }
    }
}
