#pragma once
// BlockSparse connectivity: the pre x post matrix cut into b x b blocks, of which each block-row
// holds `blocksPerRow` dense tiles at distinct block-columns, drawn at initialisation (blockCol,
// [block-row][tile], ascending); a layout the host builds (Mask, BarabasiAlbert) is block-CSR
// instead: rows of their own lengths, blockRowStart[br] the first tile of block-row br, and
// block-row br's panel at element blockRowStart[br] x b^2 (below, m is then the row's length).
// Per-synapse variables hold each block-row as a dense panel of b rows by m * b columns (its tiles
// side by side): element ((br * b + r) * m + j) * b + c is row r, column c of tile j of block-row
// br, i.e. the synapse from source br * b + r onto target blockCol[br * m + j] * b + c. So a
// spike's row is m * b contiguous weights (storing tile after tile instead made it m pieces of b
// weights b * b apart: event-driven delivery ran 4x slower), and a tile is b runs of b weights m *
// b apart (a GEMM's leading dimension). Elements past a group's end (rows or columns of an edge
// tile beyond the last neuron) are padding: no synapse. A spike of source i adds row i mod b of
// each of its block-row's tiles to b consecutive targets.
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
          m_rows(sg.numBlockRows()), m_cols(sg.numBlockCols()), m_tiles(sg.numTiles()) {}
    size_t synapseCount() const override { return m_sg.synapseVarElements(); }
    std::vector<ConnectivityArray> arrays() const override {
        std::vector<ConnectivityArray> a = {{"blockCol", "uint32_t", {m_tiles}}};
        if (ragged()) { // block-CSR: each block-row's first tile, and each tile's block-row
            a.push_back({"blockRowStart", "uint32_t", {size_t(m_rows) + 1}});
            a.push_back({"tileRow", "uint32_t", {m_tiles}});
        }
        if (transposed()) // the tile here of each tile of the mirrored group
            a.push_back({"fromTile", "uint32_t", {m_tiles}});
        if (needsColumnIndex()) { // the transposed block index: tiles by block-column
            a.push_back({"blockColStart", "uint32_t", {size_t(m_cols) + 1}});
            a.push_back({"blockColTiles", "uint32_t", {m_tiles}});
        }
        if (prunable()) { // block_prune.cpp
            a.push_back({"tileKey", "uint32_t", {m_tiles}});
            a.push_back({"tileMoved", "uint32_t", {m_tiles}});
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
        const std::string iterations = env.number("blockRowSlots", "uint32_t", double(m_m) * m_b);
        if (ragged()) return raggedRowLoop(env, iterations);
        std::string setup = "const uint32_t sfBr = id_pre / " + b + ", sfBrow = id_pre % " + b +
                            ";\nconst " + globalPointer("uint32_t") +
                            " sfBsTiles = " + blockCol(env) + " + (size_t)sfBr * " + m + ";\n";
        const std::string body = "const uint32_t sfTj = sfK / " + b + ", sfTc = sfK % " + b +
                                 ";\nconst uint32_t id_post = sfBsTiles[sfTj] * " + b +
                                 " + sfTc;\nif (id_post >= sfNpost) continue;\n"
                                 "const size_t sfSyn = (((size_t)sfBr * " +
                                 b + " + sfBrow) * " + m + " + sfTj) * " + b + " + sfTc;\n";
        SynapseLoop loop{setup, "0u", iterations, body, "id_post", false, iterations};
        // Each tile's row is a run of b consecutive targets (fewer in the last block-column).
        loop.runs = m;
        loop.runSetup = "const uint32_t sfRunPost = sfBsTiles[sfR] * " + b +
                        ";\nconst size_t sfRunSyn = (((size_t)sfBr * " + b + " + sfBrow) * " + m +
                        " + sfR) * " + b + ";\nconst uint32_t sfRunLen = sfNpost - sfRunPost < " +
                        b + " ? sfNpost - sfRunPost : " + b + ";\n";
        loop.runLength = m_b;
        loop.runRowStride = "((size_t)" + m + " * " + b + ")";
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
        std::string body = "const uint32_t sfTile = sfBsColTiles[sfK / " + b +
                           "];\nconst uint32_t sfTr = sfK % " + b + ";\n";
        if (ragged())
            body += rowSpanOf(env, tileRow(env) + "[sfTile]", "sfTBr", "sfT0", "sfTLen") +
                    "const uint32_t id_pre = sfTBr * " + b +
                    " + sfTr;\nif (id_pre >= sfNpre) continue;\nconst size_t sfSyn = ((sfT0 * " +
                    b + " + (size_t)sfTr * sfTLen + (sfTile - sfT0)) * " + b + ") + sfBcol;\n";
        else
            body += "const uint32_t id_pre = sfTile / " + m + " * " + b +
                    " + sfTr;\nif (id_pre >= sfNpre) continue;\nconst size_t sfSyn = "
                    "(((size_t)(sfTile / " +
                    m + ") * " + b + " + sfTr) * " + m + " + sfTile % " + m + ") * " + b +
                    " + sfBcol;\n";
        return {setup,
                start + "[sfBc] * " + b,
                start + "[sfBc + 1u] * " + b,
                body,
                "id_post",
                false,
                env.number("blockColumnBound", "uint32_t", double(m_rows) * m_b)};
    }
    // Element `id` as (id_pre, id_post) (pairOf); the edge tiles' rows and columns past the
    // groups' ends are skipped.
    std::string decode(Env& env) const override {
        return pairOf(env, "id") + "if (id_pre >= " + numPre(env) +
               " || id_post >= " + numPost(env) + ") continue;\n";
    }
    std::string paddingSkip(Env& env) const override {
        return "{\n" + pairOf(env, "i") + "if (id_pre >= " + numPre(env) +
               " || id_post >= " + numPost(env) + ") continue;\n}\n";
    }
    // A host-built layout (Mask, BarabasiAlbert) as block-CSR: each block-row's first tile
    // (blockRowStart, block-rows + 1 of them), the tiles' block-columns (ascending per row) and
    // each tile's block-row.
    std::vector<std::pair<std::string, std::vector<uint64_t>>> hostBuiltArrays() const override {
        if (m_sg.hostBuiltTiles().empty()) return {};
        std::vector<uint64_t> starts(size_t(m_rows) + 1, 0), cols, rows;
        for (const auto& [r, c] : m_sg.hostBuiltTiles()) { // sorted by finalise
            starts.at(size_t(r) + 1)++;
            cols.push_back(c);
            rows.push_back(r);
        }
        for (size_t r = 0; r < m_rows; r++)
            starts[r + 1] += starts[r];
        return {{"blockRowStart", std::move(starts)},
                {"blockCol", std::move(cols)},
                {"tileRow", std::move(rows)}};
    }
    // Postsynaptic learning walks a target's column, and so does a SIMT backend's matrix form.
    bool needsColumnIndex() const override { return m_sg.learnsPost() || m_sg.matrixPropagation(); }
    std::vector<BuildStep> build(Lowerer& e) const override;
    bool buildReadsEarlierGroups() const override { return transposed(); }
    // The element, in `target` (the Transposed group mirroring this one), of the synapse
    // (id_post, id_pre) mirroring the one of tile sfBsTile (decode's) here: its tile is
    // fromTile[sfBsTile] in target's block-row id_post / b, at row id_post % b, column
    // id_pre % b of it.
    std::string transposedElementOf(Env& env, const SynapseGroup& target) const override {
        const std::string b = blockSize(env), n = target.name();
        const std::string start =
            env.array("tr_blockRowStart", "uint32_t", n + ".blockRowStart", Use::Read);
        const std::string from = env.array("tr_fromTile", "uint32_t", n + ".fromTile", Use::Read);
        const std::string row = "(id_post / " + b + ")";
        return "(((size_t)" + start + "[" + row + "] * " + b + " + (size_t)(id_post % " + b +
               ") * (" + start + "[" + row + " + 1u] - " + start + "[" + row + "]) + (" + from +
               "[sfBsTile] - " + start + "[" + row + "])) * " + b + " + id_pre % " + b + ")";
    }
    std::optional<PruneProgram> pruning(Lowerer& e) const override; // block_prune.cpp

    std::vector<std::string> codecArrays() const override {
        return ragged() ? std::vector<std::string>{"blockCol", "blockRowStart"}
                        : std::vector<std::string>{"blockCol"};
    }
    // Every tile holds (its rows within the source group) x (its columns within the target
    // group) synapses: counted without listing them.
    uint64_t countSynapses(const HostArrayReader& read) const override {
        const std::vector<uint64_t> cols = checkedBlockColumns(read);
        const std::vector<uint64_t> starts = rowStarts(read);
        const uint64_t numPre = m_sg.source().size(), numPost = m_sg.target().size();
        uint64_t total = 0;
        for (uint64_t br = 0; br < m_rows; br++) {
            uint64_t width = 0;
            for (uint64_t t = starts[br]; t < starts[br + 1]; t++)
                width += std::min<uint64_t>(m_b, numPost - cols[t] * m_b);
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
    // Source by source, each row in the device's order: tile by tile, column by column. Block-row
    // br's panel starts at element start(br) x b^2 and is b rows of len(br) x b elements.
    std::vector<SynapseEntry> synapseEntries(const HostArrayReader& read) const override {
        const std::vector<uint64_t> cols = checkedBlockColumns(read);
        const std::vector<uint64_t> starts = rowStarts(read);
        const size_t numPre = m_sg.source().size(), numPost = m_sg.target().size();
        std::vector<SynapseEntry> out;
        for (size_t pre = 0; pre < numPre; pre++) {
            const size_t br = pre / m_b, r = pre % m_b;
            const size_t t0 = starts[br], len = starts[br + 1] - t0;
            for (size_t j = 0; j < len; j++) {
                const uint64_t col = cols[t0 + j];
                for (size_t c = 0; c < m_b; c++) {
                    const size_t post = col * m_b + c;
                    if (post >= numPost) break;
                    out.push_back({pre * numPost + post, ((t0 * m_b + r * len + j) * m_b) + c});
                }
            }
        }
        return out;
    }

private:
    // Block-CSR (rows of their own lengths): the layouts the host builds and transposes.
    bool ragged() const {
        switch (m_sg.blockSparse()->layout) {
        case BlockLayout::Random:
        case BlockLayout::WattsStrogatz:
        case BlockLayout::Balanced:
            return false;
        case BlockLayout::Mask:
        case BlockLayout::BarabasiAlbert:
        case BlockLayout::Transposed:
            return true;
        }
        return false;
    }
    bool transposed() const { return m_sg.blockSparse()->layout == BlockLayout::Transposed; }
    std::vector<BuildStep> transposeBuild(Lowerer& e) const; // block_sparse.cpp
    bool prunable() const { return !m_sg.blockSparse()->prunedBy.empty(); }
    // block_prune.cpp: the round counter zeroed at initialisation, and the pruning's steps.
    BuildStep pruneRoundReset(Env& env) const;
    std::string pruneScore(Lowerer& e) const;
    std::string pruneSelect(Env& env) const;
    std::string pruneRegrow(Env& env) const;
    // A block-CSR spike row: the block-row's tiles from blockRowStart, elements at
    // (t0 x b + r x len + j) x b + c.
    SynapseLoop raggedRowLoop(Env& env, const std::string& bound) const {
        const std::string b = blockSize(env);
        const std::string setup = "const uint32_t sfBrow = id_pre % " + b + ";\n" +
                                  rowSpanOf(env, "id_pre / " + b, "sfBr", "sfT0", "sfBsLen") +
                                  "const " + globalPointer("uint32_t") +
                                  " sfBsTiles = " + blockCol(env) + " + sfT0;\n";
        const std::string panel = "(sfT0 * " + b + " + (size_t)sfBrow * sfBsLen";
        const std::string body = "const uint32_t sfTj = sfK / " + b + ", sfTc = sfK % " + b +
                                 ";\nconst uint32_t id_post = sfBsTiles[sfTj] * " + b +
                                 " + sfTc;\nif (id_post >= sfNpost) continue;\n"
                                 "const size_t sfSyn = (" +
                                 panel + " + sfTj) * " + b + ") + sfTc;\n";
        SynapseLoop loop{setup, "0u", "sfBsLen * " + b, body, "id_post", false, bound};
        loop.runs = "sfBsLen";
        loop.runSetup = "const uint32_t sfRunPost = sfBsTiles[sfR] * " + b +
                        ";\nconst size_t sfRunSyn = (" + panel + " + sfR) * " + b +
                        ");\nconst uint32_t sfRunLen = sfNpost - sfRunPost < " + b +
                        " ? sfNpost - sfRunPost : " + b + ";\n";
        loop.runLength = m_b;
        loop.runRowStride = "((size_t)sfBsLen * " + b + ")";
        loop.prefetch = rowSpanOf(env, "sfNextPre / " + b, "sfPfBr", "sfPfT0", "sfPfN") +
                        "const size_t sfPfRow = (sfPfT0 * " + b + " + (size_t)(sfNextPre % " + b +
                        ") * sfPfN) * " + b + ";\nconst uint32_t sfPfLen = sfPfN * " + b + ";\n" +
                        hookName(Hook::Prefetch) + "(" + blockCol(env) + " + sfPfT0);\n";
        return loop;
    }
    // Statements defining block-row `br` (uint32_t, from the expression), its first tile `t0`
    // (size_t) and its tile count `len` (uint32_t).
    std::string rowSpanOf(Env& env, const std::string& row, const std::string& br,
                          const std::string& t0, const std::string& len) const {
        if (!ragged()) {
            const std::string m = tilesPerRow(env);
            return "const uint32_t " + br + " = " + row + ";\nconst size_t " + t0 + " = (size_t)" +
                   br + " * " + m + ";\nconst uint32_t " + len + " = " + m + ";\n";
        }
        const std::string start = rowStart(env);
        return "const uint32_t " + br + " = " + row + ";\nconst size_t " + t0 + " = " + start +
               "[" + br + "];\nconst uint32_t " + len + " = " + start + "[" + br +
               " + 1u] - (uint32_t)" + t0 + ";\n";
    }
    std::string rowStart(Env& env) const {
        return env.array("blockRowStart", "uint32_t", m_sg.name() + ".blockRowStart", Use::Read);
    }
    std::string tileRow(Env& env) const {
        return env.array("tileRow", "uint32_t", m_sg.name() + ".tileRow", Use::Read);
    }
    std::string tileCount(Env& env) const {
        return env.number("numTiles", "uint64_t", double(m_tiles));
    }
    // Each block-row's first tile read back (block-CSR), or r x m; checked.
    std::vector<uint64_t> rowStarts(const HostArrayReader& read) const {
        std::vector<uint64_t> starts(size_t(m_rows) + 1);
        if (!ragged()) {
            for (size_t r = 0; r <= m_rows; r++)
                starts[r] = r * m_m;
            return starts;
        }
        starts = read("blockRowStart");
        if (starts.size() != size_t(m_rows) + 1 || starts[0] != 0 || starts.back() != m_tiles ||
            !std::is_sorted(starts.begin(), starts.end()))
            throw InternalError("synapse group '" + m_sg.name() + "': a block-row index of " +
                                std::to_string(starts.size()) + " entries is not block-CSR");
        return starts;
    }
    // The block index read back, every entry checked to name a block-column.
    std::vector<uint64_t> checkedBlockColumns(const HostArrayReader& read) const {
        std::vector<uint64_t> cols = read("blockCol");
        if (cols.size() != m_tiles)
            throw InternalError("synapse group '" + m_sg.name() + "': block index of " +
                                std::to_string(cols.size()) + " entries");
        for (size_t k = 0; k < cols.size(); k++)
            if (cols[k] >= m_cols)
                throw ModelError("synapse group '" + m_sg.name() + "': tile " + std::to_string(k) +
                                 " names block-column " + std::to_string(cols[k]) + " of " +
                                 std::to_string(m_cols));
        return cols;
    }
    // Statements defining sfBsTile (the tile, size_t), id_pre and id_post of element `e` (a
    // size_t expression). Fixed rows: column c = e % b, tile j = e / b % m, row r = e / (b m) %
    // b, block-row e / (b m b). Block-CSR: e / b^2 lies in its block-row's tiles, so tileRow
    // gives the row in O(1); the panel's offset then gives r, j and c.
    std::string pairOf(Env& env, const std::string& e) const {
        const std::string b = blockSize(env), m = tilesPerRow(env);
        if (ragged())
            return rowSpanOf(env, tileRow(env) + "[" + e + " / ((size_t)" + b + " * " + b + ")]",
                             "sfPBr", "sfPT0", "sfPLen") +
                   "const size_t sfPOff = " + e + " - sfPT0 * " + b + " * " + b +
                   ";\nconst size_t sfBsTile = sfPT0 + sfPOff % ((size_t)sfPLen * " + b + ") / " +
                   b + ";\nconst uint32_t id_pre = sfPBr * " + b +
                   " + (uint32_t)(sfPOff / ((size_t)sfPLen * " + b +
                   "));\nconst uint32_t id_post = " + blockCol(env) + "[sfBsTile] * " + b +
                   " + (uint32_t)(sfPOff % " + b + ");\n";
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
    uint64_t m_tiles; // all tiles: block-rows x m, or a host-built layout's count
};

} // namespace spikeforge::codegen::block_sparse
