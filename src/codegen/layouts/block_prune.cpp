// Block pruning and regrowth on a BlockSparse group (RigL and Deep R at block level), on the
// device between batches, without rebuilding the model:
//   score    every tile's squared Frobenius norm in the prunedBy variable (all batch copies),
//            kept as the bits of a float: for norms >= 0 they order as the values do
//   select   the pruneCount tiles of smallest norm, ties to the lower tile number, by a radix
//            select on one work-item (four passes of a 256-bin histogram over the tiles:
//            O(tiles), no sort, no scratch beyond the keys), each marked with its old column
//   regrow   per block-row: each marked tile moves to a block-column drawn uniformly among those
//            the row does not hold and did not just lose (when the row has that many free; else
//            among those it does not hold; a row holding every column keeps them), from the
//            row's stream keyed by the round, so every backend grows the same tiles
//   index    the transposed index built again (groups with postsynaptic learning)
// then the lowering initialises the moved tiles' variables (and the per-synapse state of the
// custom updates on the group: optimiser moments) again from their initialisers, keyed by the
// round. Rows keep their tile count, so the block count never changes; a row's tiles are no
// longer in ascending column order afterwards (nothing depends on it).
#include "codegen/layouts/block_sparse.hpp"

#include "codegen/layout.hpp"
#include "spikeforge/errors.hpp"

namespace spikeforge::codegen::block_sparse {

namespace {

// tileMoved of a tile that stays where it is.
constexpr const char* kStays = "0xFFFFFFFFu";

} // namespace

BuildStep BlockSparse::pruneRoundReset(Env& env) const {
    return {BuildStep::Kind::Serial,
            BuildStep::Extent::One,
            "1u",
            env.array("pruneRound", "uint32_t", m_sg.name() + ".pruneRound", Use::Write) +
                "[0] = 0u;\n",
            "",
            ""};
}

// ForEach over the tiles: tileKey = bits of the tile's sum of squares, tileMoved = stays.
std::string BlockSparse::pruneScore(Lowerer& e) const {
    Env& env = e.env;
    const std::string& n = m_sg.name();
    const std::string& var = m_sg.blockSparse()->prunedBy;
    const auto& vars = m_sg.wu().model.vars;
    const auto found =
        std::find_if(vars.begin(), vars.end(), [&](const VarDecl& v) { return v.name == var; });
    if (found == vars.end()) throw InternalError("synapse group '" + n + "': no variable " + var);
    const std::string ctype = resolveType(found->type, e.model.precision());
    const unsigned copies = hasBatchDim(found->access) ? e.model.batchSize() : 1u;
    const std::string b = blockSize(env), m = tilesPerRow(env);
    const std::string weights = env.array("score_" + var, ctype, n + "." + var, Use::Read);
    const std::string row = ragged() ? tileRow(env) + "[sfI]" : "(uint32_t)(sfI / " + m + ")";
    return rowSpanOf(env, row, "sfBr", "sfT0", "sfLen") + "const size_t sfJ = sfI - sfT0;\n" +
           env.array("tileMoved", "uint32_t", n + ".tileMoved", Use::Write) + "[sfI] = " + kStays +
           ";\n" + ctype + " sfSum = (" + ctype + ")0;\nconst uint32_t sfPost0 = " + blockCol(env) +
           "[sfI] * " + b + ";\nconst uint32_t sfRowsIn = sfNpre - sfBr * " + b + " < " + b +
           " ? sfNpre - sfBr * " + b + " : " + b +
           ";\nconst uint32_t sfColsIn = sfNpost - sfPost0 < " + b + " ? sfNpost - sfPost0 : " + b +
           ";\nfor (uint32_t sfCopy = 0u; sfCopy < " + std::to_string(copies) +
           "u; sfCopy++)\nfor (uint32_t sfR = 0u; sfR < sfRowsIn; sfR++) {\nconst " +
           globalPointer(ctype) + " sfW = " + weights + " + (size_t)sfCopy * " +
           env.number("numSynInit", "uint64_t", double(synapseCount())) + " + (sfT0 * " + b +
           " + (size_t)sfR * sfLen + sfJ) * " + b +
           ";\nfor (uint32_t sfC = 0u; sfC < sfColsIn; sfC++) sfSum += sfW[sfC] * sfW[sfC];\n}\n" +
           env.array("tileKey", "uint32_t", n + ".tileKey", Use::Write) +
           "[sfI] = " + hookName(Hook::FloatBits) + "(sfSum);\n";
}

// Serial: the pruneCount smallest keys marked (tileMoved = their old column). sfPrefix is built
// digit by digit (most significant first) as the sfWant-th smallest key; sfNeed ends as how
// many of the tiles holding exactly that key are taken, the lowest-numbered ones.
std::string BlockSparse::pruneSelect(Env& env) const {
    const std::string& n = m_sg.name();
    const std::string key = env.array("tileKey", "uint32_t", n + ".tileKey", Use::Read);
    const std::string moved = env.array("tileMoved", "uint32_t", n + ".tileMoved", Use::Write);
    return "const uint64_t sfTiles = " + tileCount(env) + ";\nconst uint32_t sfWant = " +
           env.array("pruneCount", "uint32_t", n + ".pruneCount", Use::Read) +
           "[0];\nif (sfWant > 0u) {\nuint32_t sfPrefix = 0u, sfMask = 0u, sfNeed = sfWant;\n"
           "for (uint32_t sfShift = 32u; sfShift > 0u;) {\nsfShift -= 8u;\nuint32_t sfHist[256];\n"
           "for (uint32_t sfD = 0u; sfD < 256u; sfD++) sfHist[sfD] = 0u;\n"
           "for (uint64_t sfT = 0u; sfT < sfTiles; sfT++) {\nconst uint32_t sfKey = " +
           key +
           "[sfT];\nif ((sfKey & sfMask) == sfPrefix) sfHist[(sfKey >> sfShift) & 255u]++;\n}\n"
           "uint32_t sfD = 0u;\nwhile (sfD < 255u && sfHist[sfD] < sfNeed) {\nsfNeed -= "
           "sfHist[sfD];\nsfD++;\n}\nsfPrefix |= sfD << sfShift;\nsfMask |= 255u << sfShift;\n}\n"
           "for (uint64_t sfT = 0u; sfT < sfTiles; sfT++) {\nconst uint32_t sfKey = " +
           key +
           "[sfT];\nif (sfKey < sfPrefix || (sfKey == sfPrefix && sfNeed > 0u)) {\nif (sfKey == "
           "sfPrefix) sfNeed--;\n" +
           moved + "[sfT] = " + blockCol(env) + "[sfT];\n}\n}\n}\n" +
           env.array("pruneRound", "uint32_t", n + ".pruneRound", Use::ReadWrite) + "[0] += 1u;\n";
}

// ForEach over the block-rows: each marked tile of the row moves to a free block-column.
std::string BlockSparse::pruneRegrow(Env& env) const {
    const std::string& n = m_sg.name();
    const std::string cols = env.number("numBlockCols", "uint32_t", m_cols);
    const std::string moved = env.array("tileMoved", "uint32_t", n + ".tileMoved", Use::Read);
    const std::string round = env.array("pruneRound", "uint32_t", n + ".pruneRound", Use::Read);
    return rowSpanOf(env, "(uint32_t)sfI", "sfBr", "sfT0", "sfLen") + globalPointer("uint32_t") +
           " sfBsTiles = " + blockCol(env, Use::ReadWrite) + " + sfT0;\nconst " +
           globalPointer("uint32_t") + " sfOld = " + moved +
           " + sfT0;\nuint32_t sfMovedHere = 0u;\nfor (uint32_t sfJ = 0u; sfJ < sfLen; sfJ++) "
           "sfMovedHere += sfOld[sfJ] != " +
           kStays + " ? 1u : 0u;\nif (sfMovedHere > 0u && sfLen < " + cols + ") {\n" +
           hookName(Hook::RngState) + " sfRng; " + hookName(Hook::RngInit) + "(&sfRng, seed, " +
           env.number("streamPrune", "uint32_t", streamId(n, "blockPrune")) + ", sfBr, 0u, " +
           round + "[0]);\nconst bool sfAvoidOld = " + cols +
           " - sfLen >= sfMovedHere;\nfor (uint32_t sfJ = 0u; sfJ < sfLen; sfJ++) {\n"
           "if (sfOld[sfJ] == " +
           kStays +
           ") continue;\nfor (;;) {\nconst uint32_t sfNew = (uint32_t)(((uint64_t)"
           "sf_next_u32(&sfRng) * " +
           cols +
           ") >> 32);\nbool sfTaken = false;\nfor (uint32_t sfQ = 0u; sfQ < sfLen; sfQ++)\n"
           "sfTaken = sfTaken || sfBsTiles[sfQ] == sfNew || (sfAvoidOld && sfOld[sfQ] == "
           "sfNew);\nif (!sfTaken) {\nsfBsTiles[sfJ] = sfNew;\nbreak;\n}\n}\n}\n}\n";
}

std::optional<Connectivity::PruneProgram> BlockSparse::pruning(Lowerer& e) const {
    if (!prunable()) return std::nullopt;
    Env& env = e.env;
    using Step = BuildStep;
    const std::string tiles = tileCount(env);
    PruneProgram p;
    p.steps = {{Step::Kind::ForEach, Step::Extent::RowSlots, tiles, pruneScore(e), "", ""},
               {Step::Kind::Serial, Step::Extent::One, "1u", pruneSelect(env), "", ""},
               {Step::Kind::ForEach, Step::Extent::Pre,
                "(uint64_t)" + env.number("numBlockRows", "uint32_t", m_rows), pruneRegrow(env), "",
                ""}};
    if (needsColumnIndex())
        for (Step& s : columnIndexBuild(env))
            p.steps.push_back(std::move(s));
    const std::string& n = m_sg.name();
    p.movedOnly = "{\n" + pairOf(env, "i") + "if (id_pre >= " + numPre(env) +
                  " || id_post >= " + numPost(env) + " || " +
                  env.array("tileMoved", "uint32_t", n + ".tileMoved", Use::Read) +
                  "[sfBsTile] == " + kStays + ") continue;\n}\n";
    p.round = env.array("pruneRound", "uint32_t", n + ".pruneRound", Use::Read) + "[0]";
    return p;
}

} // namespace spikeforge::codegen::block_sparse
