#pragma once
// BlockSparse connectivity: the pre x post matrix cut into b x b blocks, of which each block-row
// holds `blocksPerRow` dense tiles at distinct block-columns, drawn at initialisation (blockCol,
// [block-row][tile], ascending). Per-synapse variables hold each block-row as a dense panel of b
// rows by m * b columns (its tiles side by side): element ((br * b + r) * m + j) * b + c is row
// r, column c of tile j of block-row br, i.e. the synapse from source br * b + r onto target
// blockCol[br * m + j] * b + c. So a spike's row is m * b contiguous weights (storing tile after
// tile instead made it m pieces of b weights b * b apart: event-driven delivery ran 4x slower),
// and a tile is b runs of b weights m * b apart (a GEMM's leading dimension). Elements past a
// group's end (rows or columns of an edge tile beyond the last neuron) are padding: no synapse.
// A spike of source i adds row i mod b of each of its block-row's tiles to b consecutive
// targets.
//
// The class is shared by block_sparse.cpp (storage, delivery, the layouts' builds) and
// block_prune.cpp (pruning and regrowth).
#include "codegen/layouts/layouts.hpp"

#include "codegen/arrays.hpp"
#include "codegen/lowerer.hpp"

#include <algorithm>
#include <cmath>

namespace spikeforge::codegen::block_sparse {

class BlockSparse final : public Connectivity {
public:
    explicit BlockSparse(const SynapseGroup& sg)
        : m_sg(sg), m_b(sg.blockSparse()->blockSize), m_m(sg.blocksPerRow()),
          m_rows(sg.numBlockRows()), m_cols(sg.numBlockCols()) {}
    size_t synapseCount() const override { return m_sg.synapseVarElements(); }
    std::vector<ConnectivityArray> arrays() const override {
        std::vector<ConnectivityArray> a = {{"blockCol", "uint32_t", {m_rows, m_m}}};
        if (ragged()) a.push_back({"blockRowLen", "uint32_t", {m_rows}});
        if (needsColumnIndex()) { // the transposed block index: tiles by block-column
            a.push_back({"blockColStart", "uint32_t", {size_t(m_cols) + 1}});
            a.push_back({"blockColTiles", "uint32_t", {m_rows, m_m}});
        }
        if (prunable()) { // block_prune.cpp
            a.push_back({"tileKey", "uint32_t", {m_rows, m_m}});
            a.push_back({"tileMoved", "uint32_t", {m_rows, m_m}});
            a.push_back({"pruneCount", "uint32_t", {1}});
            a.push_back({"pruneRound", "uint32_t", {1}});
        }
        return a;
    }

    // Iteration sfK of a spike's row is column sfK mod b of its block-row's tile sfK / b.
    // Targets as block-column x b + column fit 32 bits: a group holds at most 2^32 - 32 neurons,
    // so the block-columns span at most 2^32 - 1.
    SynapseLoop rowLoop(Lowerer& e) const override {
        Env& env = e.env;
        const std::string b = blockSize(env), m = tilesPerRow(env);
        std::string setup = "const uint32_t sfBr = id_pre / " + b + ", sfBrow = id_pre % " + b +
                            ";\nconst " + globalPointer("uint32_t") +
                            " sfBsTiles = " + blockCol(env) + " + (size_t)sfBr * " + m + ";\n";
        // A given mask's rows hold rowLen tiles each, then padding slots.
        if (ragged()) setup += "const uint32_t sfBsLen = " + rowLen(env) + "[sfBr];\n";
        const std::string body = "const uint32_t sfTj = sfK / " + b + ", sfTc = sfK % " + b +
                                 ";\nconst uint32_t id_post = sfBsTiles[sfTj] * " + b +
                                 " + sfTc;\nif (id_post >= sfNpost) continue;\n"
                                 "const size_t sfSyn = (((size_t)sfBr * " +
                                 b + " + sfBrow) * " + m + " + sfTj) * " + b + " + sfTc;\n";
        const std::string iterations = env.number("blockRowSlots", "uint32_t", double(m_m) * m_b);
        SynapseLoop loop{setup,     "0u",      ragged() ? "sfBsLen * " + b : iterations,
                         body,      "id_post", false,
                         iterations};
        // Each tile's row is a run of b consecutive targets (fewer in the last block-column).
        loop.runs = ragged() ? "sfBsLen" : m;
        loop.runSetup = "const uint32_t sfRunPost = sfBsTiles[sfR] * " + b +
                        ";\nconst size_t sfRunSyn = (((size_t)sfBr * " + b + " + sfBrow) * " + m +
                        " + sfR) * " + b + ";\nconst uint32_t sfRunLen = sfNpost - sfRunPost < " +
                        b + " ? sfNpost - sfRunPost : " + b + ";\n";
        loop.runLength = m_b;
        // A source's row is m x b consecutive elements from source x m x b; its tiles' columns.
        loop.prefetch = "const size_t sfPfRow = (size_t)sfNextPre * " + iterations +
                        ";\nconst uint32_t sfPfLen = " + iterations + ";\n" +
                        hookName(Hook::Prefetch) + "(" + blockCol(env) +
                        " + (size_t)(sfNextPre / " + b + ") * " + m + ");\n";
        return loop;
    }
    // A target's synapses: column id_post mod b of every tile in its block-column, tile by tile
    // (the transposed index lists them by block-row), row by row: iteration sfK is row sfK mod b
    // of the column's tile sfK / b. Finalise keeps tiles x b within 32 bits.
    SynapseLoop columnLoop(Env& env) const override {
        const std::string b = blockSize(env), m = tilesPerRow(env);
        const std::string start = columnStart(env, Use::Read);
        const std::string setup = "const uint32_t sfBc = id_post / " + b + ", sfBcol = id_post % " +
                                  b + ";\nconst " + globalPointer("uint32_t") +
                                  " sfBsColTiles = " + columnTiles(env, Use::Read) + ";\n";
        const std::string body =
            "const uint32_t sfTile = sfBsColTiles[sfK / " + b + "];\nconst uint32_t sfTr = sfK % " +
            b + ";\nconst uint32_t id_pre = sfTile / " + m + " * " + b +
            " + sfTr;\nif (id_pre >= sfNpre) continue;\nconst size_t sfSyn = (((size_t)(sfTile / " +
            m + ") * " + b + " + sfTr) * " + m + " + sfTile % " + m + ") * " + b + " + sfBcol;\n";
        return {setup,
                start + "[sfBc] * " + b,
                start + "[sfBc + 1u] * " + b,
                body,
                "id_post",
                false,
                env.number("blockColumnBound", "uint32_t", double(m_rows) * m_b)};
    }
    // Element `id` as (id_pre, id_post): column c = id % b, tile j = id / b % m, row
    // r = id / (b m) % b, block-row id / (b m b).
    std::string decode(Env& env) const override {
        return pairOf(env, "id") + "if (id_pre >= " + numPre(env) +
               " || id_post >= " + numPost(env) + padding(env) + ") continue;\n";
    }
    std::string paddingSkip(Env& env) const override {
        return "{\n" + pairOf(env, "i") + "if (id_pre >= " + numPre(env) +
               " || id_post >= " + numPost(env) + padding(env) + ") continue;\n}\n";
    }
    // A given mask's padding slots (their tiles past the row's length), a condition after ||.
    std::string padding(Env& env) const {
        if (!ragged()) return "";
        const std::string m = tilesPerRow(env);
        return " || sfBsTile % " + m + " >= " + rowLen(env) + "[sfBsTile / " + m + "]";
    }
    // The tiles the user gave (Mask): block-columns ascending per block-row, the rest padding.
    std::vector<std::pair<std::string, std::vector<uint64_t>>> hostBuiltArrays() const override {
        if (!ragged()) return {};
        std::vector<uint64_t> cols(size_t(m_rows) * m_m, 0), lengths(m_rows, 0);
        std::vector<std::vector<uint32_t>> byRow(m_rows);
        for (const auto& [r, c] : m_sg.blockSparse()->blocks)
            byRow.at(r).push_back(c); // checked by finalise
        for (size_t r = 0; r < m_rows; r++) {
            std::sort(byRow[r].begin(), byRow[r].end());
            lengths[r] = byRow[r].size();
            for (size_t j = 0; j < byRow[r].size(); j++)
                cols[r * m_m + j] = byRow[r][j];
        }
        return {{"blockCol", std::move(cols)}, {"blockRowLen", std::move(lengths)}};
    }
    bool needsColumnIndex() const override { return !m_sg.wu().model.postSpikeSynCode.empty(); }
    std::vector<BuildStep> build(Lowerer& e) const override;
    std::optional<PruneProgram> pruning(Lowerer& e) const override; // block_prune.cpp

    std::vector<std::string> codecArrays() const override {
        return ragged() ? std::vector<std::string>{"blockCol", "blockRowLen"}
                        : std::vector<std::string>{"blockCol"};
    }
    // Every tile holds (its rows within the source group) x (its columns within the target
    // group) synapses: counted without listing them.
    uint64_t countSynapses(const HostArrayReader& read) const override {
        const std::vector<uint64_t> cols = checkedBlockColumns(read);
        const std::vector<uint64_t> lengths = rowLengths(read);
        const uint64_t numPre = m_sg.source().size(), numPost = m_sg.target().size();
        uint64_t total = 0;
        for (uint64_t br = 0; br < m_rows; br++) {
            uint64_t width = 0;
            for (uint64_t j = 0; j < lengths[br]; j++)
                width += std::min<uint64_t>(m_b, numPost - cols[br * m_m + j] * m_b);
            total += std::min<uint64_t>(m_b, numPre - br * m_b) * width;
        }
        return total;
    }
    EncodedSynapses encode(std::span<const std::pair<uint32_t, uint32_t>>) const override {
        throw ModelError("synapse group '" + m_sg.name() +
                         "' is BlockSparse: its synapses are the whole tiles of its block "
                         "layout, so they cannot be given as a list (set their values with "
                         "setSynapseValues or setSynapseMatrix)");
    }
    // Source by source, each row in the device's order: tile by tile, column by column.
    std::vector<SynapseEntry> synapseEntries(const HostArrayReader& read) const override {
        const std::vector<uint64_t> cols = checkedBlockColumns(read);
        const std::vector<uint64_t> lengths = rowLengths(read);
        const size_t numPre = m_sg.source().size(), numPost = m_sg.target().size();
        std::vector<SynapseEntry> out;
        for (size_t pre = 0; pre < numPre; pre++) {
            const size_t br = pre / m_b, r = pre % m_b;
            for (size_t j = 0; j < lengths[br]; j++) {
                const uint64_t col = cols[br * m_m + j];
                for (size_t c = 0; c < m_b; c++) {
                    const size_t post = col * m_b + c;
                    if (post >= numPost) break;
                    out.push_back({pre * numPost + post, ((br * m_b + r) * m_m + j) * m_b + c});
                }
            }
        }
        return out;
    }

private:
    bool ragged() const { return m_sg.blockSparse()->layout == BlockLayout::Mask; }
    bool prunable() const { return !m_sg.blockSparse()->prunedBy.empty(); }
    // block_prune.cpp: the round counter zeroed at initialisation, and the pruning's steps.
    BuildStep pruneRoundReset(Env& env) const;
    std::string pruneScore(Lowerer& e) const;
    std::string pruneSelect(Env& env) const;
    std::string pruneRegrow(Env& env) const;
    std::string rowLen(Env& env) const {
        return env.array("blockRowLen", "uint32_t", m_sg.name() + ".blockRowLen", Use::Read);
    }
    // Tiles per block-row read back (a Mask's), or m for every row; each checked.
    std::vector<uint64_t> rowLengths(const HostArrayReader& read) const {
        if (!ragged()) return std::vector<uint64_t>(m_rows, m_m);
        std::vector<uint64_t> lengths = read("blockRowLen");
        if (lengths.size() != m_rows)
            throw InternalError("synapse group '" + m_sg.name() +
                                "': " + std::to_string(lengths.size()) + " block-row lengths");
        for (size_t r = 0; r < lengths.size(); r++)
            if (lengths[r] > m_m)
                throw ModelError("synapse group '" + m_sg.name() + "': block-row " +
                                 std::to_string(r) + " holds " + std::to_string(lengths[r]) +
                                 " tiles, more than its " + std::to_string(m_m) + " slots");
        return lengths;
    }
    // The block index read back, every entry checked to name a block-column.
    std::vector<uint64_t> checkedBlockColumns(const HostArrayReader& read) const {
        std::vector<uint64_t> cols = read("blockCol");
        if (cols.size() != size_t(m_rows) * m_m)
            throw InternalError("synapse group '" + m_sg.name() + "': block index of " +
                                std::to_string(cols.size()) + " entries");
        for (size_t k = 0; k < cols.size(); k++)
            if (cols[k] >= m_cols)
                throw ModelError("synapse group '" + m_sg.name() + "': block-row " +
                                 std::to_string(k / m_m) + " names block-column " +
                                 std::to_string(cols[k]) + " of " + std::to_string(m_cols));
        return cols;
    }
    // Statements defining id_pre and id_post of element `e` (a size_t expression).
    std::string pairOf(Env& env, const std::string& e) const {
        const std::string b = blockSize(env), m = tilesPerRow(env);
        return "const size_t sfBsTile = (" + e + " / ((size_t)" + b + " * " + m + " * " + b +
               ")) * " + m + " + " + e + " / " + b + " % " + m +
               ";\nconst uint32_t id_pre = (uint32_t)(" + e + " / ((size_t)" + b + " * " + m +
               " * " + b + ")) * " + b + " + (uint32_t)(" + e + " / ((size_t)" + b + " * " + m +
               ") % " + b + ");\nconst uint32_t id_post = " + blockCol(env) + "[sfBsTile] * " + b +
               " + (uint32_t)(" + e + " % " + b + ");\n";
    }
    std::string blockSize(Env& env) const { return env.number("blockSize", "uint32_t", m_b); }
    std::string tilesPerRow(Env& env) const { return env.number("blocksPerRow", "uint32_t", m_m); }
    std::string numPre(Env& env) const {
        return env.number("numPre", "uint32_t", m_sg.source().size());
    }
    std::string numPost(Env& env) const {
        return env.number("numPost", "uint32_t", m_sg.target().size());
    }
    std::string blockCol(Env& env, Use use = Use::Read) const {
        return env.array("blockCol", "uint32_t", m_sg.name() + ".blockCol", use);
    }
    std::string columnStart(Env& env, Use use) const {
        return env.array("blockColStart", "uint32_t", m_sg.name() + ".blockColStart", use);
    }
    std::string columnTiles(Env& env, Use use) const {
        return env.array("blockColTiles", "uint32_t", m_sg.name() + ".blockColTiles", use);
    }
    std::vector<BuildStep> columnIndexBuild(Env& env) const;

    const SynapseGroup& m_sg;
    unsigned m_b, m_m, m_rows, m_cols;
};

} // namespace spikeforge::codegen::block_sparse
