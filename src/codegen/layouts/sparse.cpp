// Sparse connectivity: rows of at most maxRowLength targets (rowLength, ind), padded to that
// stride, built at initialisation by the connectivity initialiser's row code; a column index
// (colStart, colSyn) when postsynaptic learning walks columns.
#include "codegen/layouts/layouts.hpp"

#include "codegen/arrays.hpp"
#include "codegen/checked_size.hpp"
#include "codegen/lowerer.hpp"
#include "model/analysis.hpp"
#include "model/contexts.hpp"

namespace spikeforge::codegen {

namespace {

class Sparse final : public Connectivity {
public:
    explicit Sparse(const SynapseGroup& sg) : m_sg(sg) {}
    size_t synapseCount() const override {
        return checkedMul(m_sg.source().size(), m_sg.maxRowLength(),
                          "synapse group '" + m_sg.name() + "': synapses");
    }
    std::vector<ConnectivityArray> arrays() const override {
        const size_t pre = m_sg.source().size(), post = m_sg.target().size();
        std::vector<ConnectivityArray> a = {
            {"rowLength", "uint32_t", {pre}},
            {"ind", indexType(m_sg.target().size()), {pre, m_sg.maxRowLength()}}};
        if (!m_sg.connectivity()->snippet.preCalcRowLengthCode.empty())
            a.push_back({"preCalcRowLength", "uint32_t", {pre}});
        if (needsColumnIndex()) {
            a.push_back({"colStart", "uint32_t", {post + 1}});
            a.push_back({"colSyn", "uint32_t", {pre, m_sg.maxRowLength()}});
        }
        return a;
    }
    SynapseLoop rowLoop(Lowerer& e) const override {
        Env& env = e.env;
        const std::string stride = this->stride(env);
        SynapseLoop loop{"const uint32_t sfLen = " + rowLength(env) + "[id_pre];\nconst " +
                             globalPointer(indType()) + " sfRow = " + ind(env) +
                             " + (size_t)id_pre * " + stride + ";\n",
                         "0u",
                         "sfLen",
                         "const uint32_t id_post = sfRow[sfK];\nconst size_t sfSyn = "
                         "(size_t)id_pre * " +
                             stride + " + sfK;\n",
                         "id_post",
                         false,
                         stride};
        // The whole stride (the row's length is one more miss away), its length and indices.
        loop.prefetch = "const size_t sfPfRow = (size_t)sfNextPre * " + stride +
                        ";\nconst uint32_t sfPfLen = " + stride + ";\n" + hookName(Hook::Prefetch) +
                        "(" + rowLength(env) + " + sfNextPre);\n" +
                        prefetchRange(ind(env), indType());
        return loop;
    }
    SynapseLoop columnLoop(Env& env) const override {
        const std::string n = m_sg.name();
        return {"const " + globalPointer("uint32_t") + " sfColStart = " +
                    env.array("colStart", "uint32_t", n + ".colStart", Use::Read) + ";\nconst " +
                    globalPointer("uint32_t") + " sfColSyn = " +
                    env.array("colSyn", "uint32_t", n + ".colSyn", Use::Read) + ";\n",
                "sfColStart[id_post]",
                "sfColStart[id_post + 1]",
                "const size_t sfSyn = sfColSyn[sfK];\nconst uint32_t id_pre = (uint32_t)(sfSyn / " +
                    stride(env) + ");\n",
                "id_post",
                false,
                "sfNpre"};
    }
    std::string decode(Env& env) const override {
        return paddingSkip(env, "id") + "const uint32_t id_pre = (uint32_t)(id / " + stride(env) +
               "); (void)id_pre;\nconst uint32_t id_post = " + ind(env) + "[id]; (void)id_post;\n";
    }
    std::string paddingSkip(Env& env) const override { return paddingSkip(env, "i"); }
    bool needsColumnIndex() const override { return m_sg.walkedByColumns(); }
    std::vector<BuildStep> build(Lowerer& e) const override;
    std::optional<RowEditing> rowEditing(Env& env) const override {
        RowEditing r;
        r.setup =
            "const uint32_t id_pre = (uint32_t)sfI;\nconst uint32_t sfStride = " + stride(env) +
            ";\nconst size_t sfRow0 = (size_t)id_pre * sfStride;\n" + globalPointer(indType()) +
            " sfTargets = " + ind(env, Use::ReadWrite) +
            " + sfRow0;\nuint32_t sfLen = " + rowLength(env, Use::ReadWrite) + "[id_pre];\n";
        r.finish = rowLength(env, Use::ReadWrite) + "[id_pre] = sfLen;\n";
        r.lengths = rowLength(env, Use::ReadWrite);
        r.targets = ind(env, Use::ReadWrite);
        r.stride = stride(env);
        if (needsColumnIndex())
            r.after =
                columnIndexBuild(env, rowLength(env, Use::ReadWrite), ind(env, Use::ReadWrite));
        return r;
    }
    std::vector<std::string> codecArrays() const override { return {"rowLength", "ind"}; }
    uint64_t countSynapses(const HostArrayReader& read) const override {
        uint64_t total = 0;
        for (uint64_t length : read("rowLength"))
            total += length;
        return total;
    }
    EncodedSynapses encode(std::span<const std::pair<uint32_t, uint32_t>> list) const override;
    // Row i holds rowLength[i] targets in ind[i * stride ...]; the rest of the row is padding.
    std::vector<SynapseEntry> synapseEntries(const HostArrayReader& read) const override {
        const size_t numPre = m_sg.source().size(), numPost = m_sg.target().size();
        const size_t stride = m_sg.maxRowLength();
        const std::vector<uint64_t> lengths = read("rowLength"), ind = read("ind");
        if (lengths.size() != numPre || ind.size() != numPre * stride)
            throw InternalError("synapse group '" + m_sg.name() + "': sparse arrays of " +
                                std::to_string(lengths.size()) + " and " +
                                std::to_string(ind.size()) + " elements");
        std::vector<SynapseEntry> out;
        for (size_t i = 0; i < numPre; i++) {
            if (lengths[i] > stride)
                throw ModelError("synapse group '" + m_sg.name() + "': row " + std::to_string(i) +
                                 " holds " + std::to_string(lengths[i]) +
                                 " synapses, more than its maximum row length " +
                                 std::to_string(stride));
            for (size_t k = 0; k < lengths[i]; k++) {
                const uint64_t post = ind[i * stride + k];
                if (post >= numPost)
                    throw ModelError("synapse group '" + m_sg.name() + "': row " +
                                     std::to_string(i) + " names target " + std::to_string(post) +
                                     " of a target group of " + std::to_string(numPost));
                out.push_back({i * numPost + post, i * stride + k});
            }
        }
        return out;
    }

private:
    std::string indType() const { return indexType(m_sg.target().size()); }
    std::string stride(Env& env) const {
        return env.number("rowStride", "uint32_t", m_sg.maxRowLength());
    }
    std::string rowLength(Env& env, Use use = Use::Read) const {
        return env.array("rowLength", "uint32_t", m_sg.name() + ".rowLength", use);
    }
    std::string ind(Env& env, Use use = Use::Read) const {
        return env.array("ind", indType(), m_sg.name() + ".ind", use);
    }
    std::vector<BuildStep> columnIndexBuild(Env& env, const std::string& lengths,
                                            const std::string& targets) const;
    std::string paddingSkip(Env& env, const std::string& i) const {
        const std::string s = stride(env);
        return "if (" + i + " % " + s + " >= " + rowLength(env) + "[" + i + " / " + s +
               "]) continue;\n";
    }
    const SynapseGroup& m_sg;
};

Connectivity::EncodedSynapses
Sparse::encode(std::span<const std::pair<uint32_t, uint32_t>> list) const {
    const size_t numPre = m_sg.source().size(), numPost = m_sg.target().size();
    const size_t stride = m_sg.maxRowLength();
    const std::string group = "synapse group '" + m_sg.name() + "'";
    std::vector<uint64_t> lengths(numPre, 0), ind(numPre * stride, 0);
    EncodedSynapses out;
    out.elementOf.reserve(list.size());
    for (size_t k = 0; k < list.size(); k++) {
        const auto [pre, post] = list[k];
        if (pre >= numPre || post >= numPost)
            throw ModelError(group + ": synapse " + std::to_string(k) + " (" + std::to_string(pre) +
                             ", " + std::to_string(post) + ") names a neuron out of range (" +
                             std::to_string(numPre) + " sources, " + std::to_string(numPost) +
                             " targets)");
        if (lengths[pre] == stride)
            throw ModelError(group + ": row " + std::to_string(pre) + " is given more than " +
                             std::to_string(stride) +
                             " synapses, its maximum row length (SynapseGroup::setMaxConnections)");
        const size_t element = size_t(pre) * stride + lengths[pre]++;
        ind[element] = post;
        out.elementOf.push_back(element);
    }
    out.arrays.emplace_back("rowLength", std::move(lengths));
    out.arrays.emplace_back("ind", std::move(ind));
    if (needsColumnIndex()) { // as the build's counting sort: by target, then element
        const std::vector<uint64_t>& rows = out.arrays[0].second;
        const std::vector<uint64_t>& targets = out.arrays[1].second;
        std::vector<uint64_t> colStart(numPost + 1, 0), colSyn(numPre * stride, 0);
        for (size_t i = 0; i < numPre; i++)
            for (size_t k = 0; k < rows[i]; k++)
                colStart[targets[i * stride + k] + 1]++;
        for (size_t j = 0; j < numPost; j++)
            colStart[j + 1] += colStart[j];
        std::vector<uint64_t> fill(colStart.begin(), colStart.end() - 1);
        for (size_t i = 0; i < numPre; i++)
            for (size_t k = 0; k < rows[i]; k++)
                colSyn[fill[targets[i * stride + k]]++] = i * stride + k;
        out.arrays.emplace_back("colStart", std::move(colStart));
        out.arrays.emplace_back("colSyn", std::move(colSyn));
    }
    return out;
}

std::vector<BuildStep> Sparse::build(Lowerer& e) const {
    using Step = BuildStep;
    const Model& m = e.model;
    const auto& conn = *m_sg.connectivity();
    const std::string& n = m_sg.name();
    const std::string S = stride(e.env);
    // The build writes the rows; building the column index reads them back.
    const Use rows = needsColumnIndex() ? Use::ReadWrite : Use::Write;
    const std::string lengths = rowLength(e.env, rows), targets = ind(e.env, rows);
    const std::string error = e.errorWord(m_sg);
    const auto values = contexts::evaluateParams(conn.snippet, conn.params, m.dt());
    auto bindPreCalc = [&](const snippet::Scanned& scanned) {
        e.subs["preCalcRowLength"] =
            e.env.array("preCalcRowLength", "uint32_t", n + ".preCalcRowLength",
                        useOf(scanned, "preCalcRowLength"));
        e.subs["#size:preCalcRowLength"] = "sfNpre";
    };
    std::vector<Step> steps;
    if (!conn.snippet.preCalcRowLengthCode.empty()) {
        const auto& scanned = analysis::of(m, n, "connectivity.preCalcRowLengthCode");
        e.subs.clear();
        e.bindParams(scanned, values, {}, n, "cp_");
        bindPreCalc(scanned);
        steps.push_back(
            {Step::Kind::Serial, Step::Extent::One, "1u",
             std::string(hookName(Hook::RngState)) + " sfRng; " + hookName(Hook::RngInit) +
                 "(&sfRng, seed, " +
                 e.env.number("streamPreCalc", "uint32_t", streamId(n, "connectivity.preCalc")) +
                 ", 0u, 0u, 0u);\n" + e.render(n, "connectivity.preCalcRowLengthCode"),
             "", ""});
    }
    const auto& scanned = analysis::of(m, n, "connectivity.rowBuildCode");
    e.subs.clear();
    if (scanned.referencedNames.count("preCalcRowLength")) bindPreCalc(scanned);
    // Row sfI: its targets appended into its stride, its length stored; a row the bound cannot
    // hold is reported, never truncated silently.
    steps.push_back({Step::Kind::ForEach, Step::Extent::Pre, "sfNpre",
                     "const uint32_t id_pre = (uint32_t)sfI;\nconst uint32_t sfStride = " + S +
                         ";\n" + globalPointer(indType()) + " sfRow = " + targets +
                         " + (size_t)id_pre * sfStride;\nuint32_t sfLen = 0;\n{\n" +
                         rowBuildCode(e, m_sg, "seed") + "}\nif (sfLen > sfStride) {\n" +
                         hookName(Hook::ReportError) + "(" + error +
                         ", SF_ERROR_ROW_OVERFLOW);\nsfLen = sfStride;\n}\n" + lengths +
                         "[id_pre] = sfLen;\n",
                     "", ""});
    if (!needsColumnIndex()) return steps;
    for (Step& s : columnIndexBuild(e.env, lengths, targets))
        steps.push_back(std::move(s));
    return steps;
}

std::vector<BuildStep> Sparse::columnIndexBuild(Env& env, const std::string& lengths,
                                                const std::string& targets) const {
    using Step = BuildStep;
    const std::string& n = m_sg.name();
    const std::string S = stride(env);
    std::vector<Step> steps;
    // The column index, a counting sort over colStart (numPost + 1 words): zero; count (column
    // j in colStart[j + 2]); an inclusive scan, leaving colStart[j + 1] = start of column j;
    // fill (each synapse takes colStart[its target + 1]++ as its place, which leaves
    // colStart[j] = start of column j); then each column sorted ascending, so the index is the
    // same whatever order the fill ran in. Counts, sums and places are read back.
    const std::string colStart = env.array("colStart", "uint32_t", n + ".colStart", Use::ReadWrite);
    const std::string colSyn = env.array("colSyn", "uint32_t", n + ".colSyn", Use::ReadWrite);
    const std::string slots = "(uint64_t)sfNpre * " + S;
    const std::string eachSynapse = "const uint32_t sfStride = " + S + ";\nif (sfI % sfStride < " +
                                    lengths + "[sfI / sfStride]) {\nconst uint32_t j = (uint32_t)" +
                                    targets + "[sfI];\n";
    const std::string add = hookName(Hook::AtomicAddU32);
    steps.push_back({Step::Kind::ForEach, Step::Extent::PostPlusOne, "(uint64_t)sfNpost + 1u",
                     colStart + "[sfI] = 0u;\n", "", ""});
    steps.push_back({Step::Kind::ForEach, Step::Extent::RowSlots, slots,
                     eachSynapse + "if (j + 2u <= sfNpost) (void)" + add + "(&" + colStart +
                         "[j + 2u], 1u);\n}\n",
                     "", ""});
    steps.push_back({Step::Kind::InclusiveScan, Step::Extent::PostPlusOne, "(uint64_t)sfNpost + 1u",
                     "", colStart, ""});
    steps.push_back({Step::Kind::ForEach, Step::Extent::RowSlots, slots,
                     eachSynapse + colSyn + "[" + add + "(&" + colStart +
                         "[j + 1u], 1u)] = (uint32_t)sfI;\n}\n",
                     "", ""});
    steps.push_back(
        {Step::Kind::SortSegments, Step::Extent::Post, "(uint64_t)sfNpost", "", colSyn, colStart});
    return steps;
}

} // namespace

std::string rowBuildCode(Lowerer& e, const SynapseGroup& sg, const std::string& seed) {
    const std::string& n = sg.name();
    const auto& conn = *sg.connectivity();
    const auto& scanned = analysis::of(e.model, n, "connectivity.rowBuildCode");
    Subs saved = e.subs;
    e.subs.clear();
    if (saved.count("preCalcRowLength")) { // bound by the caller
        e.subs["preCalcRowLength"] = saved.at("preCalcRowLength");
        e.subs["#size:preCalcRowLength"] = saved.at("#size:preCalcRowLength");
    }
    e.bindParams(scanned, contexts::evaluateParams(conn.snippet, conn.params, e.model.dt()), {}, n,
                 "cp_");
    e.subs["addSynapse"] = hookName(Hook::AddSynapse);
    e.subs["num_pre"] = "sfNpre";
    e.subs["num_post"] = "sfNpost";
    // The append is the layout's (the same on every backend), defined beside the locals it uses.
    const std::string add = hookName(Hook::AddSynapse);
    const std::string code =
        "#define " + add +
        "(j) do { if (sfLen < sfStride) sfRow[sfLen] = (j); sfLen++; } while (0)\n" +
        hookName(Hook::RngState) + " sfRng; " + hookName(Hook::RngInit) + "(&sfRng, " + seed +
        ", " + e.env.number("streamConn", "uint32_t", streamId(n, "connectivity")) +
        ", id_pre, 0u, 0u);\n" + e.render(n, "connectivity.rowBuildCode") + "\n#undef " + add +
        "\n";
    e.subs = saved;
    return code;
}

std::unique_ptr<Connectivity> sparseLayout(const SynapseGroup& sg) {
    return std::make_unique<Sparse>(sg);
}

} // namespace spikeforge::codegen
