// BlockSparse connectivity (block_sparse.hpp): storage, delivery and the builds of its layouts.
#include "codegen/layouts/block_sparse.hpp"

namespace spikeforge::codegen {

namespace block_sparse {

namespace {

// Statements sorting the row's m block-columns ascending: Shell sort with Knuth's gaps (1, 4,
// 13, ...), O(m^1.5), in place and without recursion on every backend; a rotated ring lattice
// (Watts-Strogatz rows near the ring's end) costs insertion sort O(m^2).
std::string sortTiles(const std::string& m) {
    return "{\nuint32_t sfGap = 1u;\nwhile (sfGap < " + m +
           " / 3u) sfGap = 3u * sfGap + 1u;\nfor (; sfGap > 0u; sfGap /= 3u)\n"
           "for (uint32_t sfJ = sfGap; sfJ < " +
           m +
           "; sfJ++) {\nconst uint32_t sfV = sfBsTiles[sfJ];\nuint32_t sfQ = sfJ;\n"
           "while (sfQ >= sfGap && sfBsTiles[sfQ - sfGap] > sfV) {\nsfBsTiles[sfQ] = "
           "sfBsTiles[sfQ - sfGap];\nsfQ -= sfGap;\n}\nsfBsTiles[sfQ] = sfV;\n}\n}\n";
}

// Statements writing m distinct block-columns in [0, cols) to sfBsTiles from sfRng, decided in
// integers from 32-bit draws. Where m^2 is small against the columns, Floyd's algorithm (m
// draws, each checked against the columns taken: O(m^2)), then sorted; else selection sampling
// (Knuth's algorithm S: column c joins with probability needed / left, one draw per column,
// ascending already). Which one is decided here from the shape, so every backend draws the same
// layout; a million-neuron layer at 1 % would otherwise cost 10^10 draws.
std::string distinctColumns(uint64_t mValue, uint64_t colsValue, const std::string& m,
                            const std::string& cols) {
    if (mValue * mValue < colsValue)
        return "for (uint32_t sfJ = 0u; sfJ < " + m + "; sfJ++) {\nconst uint32_t sfTop = " + cols +
               " - " + m +
               " + sfJ;\nuint32_t sfNew = (uint32_t)(((uint64_t)sf_next_u32(&sfRng) * "
               "((uint64_t)sfTop + 1u)) >> 32);\nfor (uint32_t sfQ = 0u; sfQ < sfJ; sfQ++)\n"
               "if (sfBsTiles[sfQ] == sfNew) sfNew = sfTop;\nsfBsTiles[sfJ] = sfNew;\n}\n" +
               sortTiles(m);
    return "uint32_t sfNeed = " + m + ", sfOut = 0u;\nfor (uint32_t sfC = 0u; sfC < " + cols +
           " && sfNeed > 0u; sfC++) {\nif ((uint64_t)sf_next_u32(&sfRng) * (uint64_t)(" + cols +
           " - sfC) < ((uint64_t)sfNeed << 32)) {\nsfBsTiles[sfOut++] = sfC;\nsfNeed--;\n}\n}\n";
}

// Statements replacing uint32_t `x`, in [0, n), by its image under a keyed permutation of
// [0, n): a four-round Feistel network on the smallest even number of bits covering n, with
// murmur3's finaliser as round function and cycle walking (the network is applied again while
// the value is >= n; the domain is under 4n, so under four times on average). Integer arithmetic
// only, so every backend computes the same permutation; `keys` names four uint32_t keys.
std::string feistelPermute(const std::string& x, uint64_t n, const std::string& keys) {
    unsigned bits = 2;
    while ((uint64_t(1) << bits) < n)
        bits += 2;
    const std::string half = std::to_string(bits / 2) + "u";
    const std::string mask = std::to_string((uint64_t(1) << (bits / 2)) - 1) + "u";
    return "do {\nuint32_t sfL = " + x + " >> " + half + ", sfR = " + x + " & " + mask +
           ";\nfor (uint32_t sfRound = 0u; sfRound < 4u; sfRound++) {\nuint32_t sfH = sfR ^ " +
           keys +
           "[sfRound];\nsfH ^= sfH >> 16;\nsfH *= 0x85ebca6bu;\nsfH ^= sfH >> 13;\nsfH *= "
           "0xc2b2ae35u;\nsfH ^= sfH >> 16;\nconst uint32_t sfNext = sfL ^ (sfH & " +
           mask + ");\nsfL = sfR;\nsfR = sfNext;\n}\n" + x + " = (sfL << " + half +
           ") | sfR;\n} while (" + x + " >= " + std::to_string(n) + "u);\n";
}

} // namespace

// Block-row sfI's tiles, drawn from its own stream (the same on every backend), ascending.
std::vector<BuildStep> BlockSparse::build(Lowerer& e) const {
    Env& env = e.env;
    // A host-built layout's tiles come from the host (hostBuiltArrays, uploaded before this runs).
    if (ragged()) {
        std::vector<BuildStep> steps = transposed() ? transposeBuild(e) : std::vector<BuildStep>{};
        if (needsColumnIndex())
            for (BuildStep& s : columnIndexBuild(env))
                steps.push_back(std::move(s));
        if (prunable()) steps.push_back(pruneRoundReset(env));
        return steps;
    }
    const std::string& n = m_sg.name();
    const std::string rows = env.number("numBlockRows", "uint32_t", m_rows);
    const std::string cols = env.number("numBlockCols", "uint32_t", m_cols);
    const std::string m = tilesPerRow(env);
    std::string body =
        "const uint32_t sfBr = (uint32_t)sfI;\n" + globalPointer("uint32_t") +
        " sfBsTiles = " + blockCol(env, needsColumnIndex() ? Use::ReadWrite : Use::Write) +
        " + (size_t)sfBr * " + m + ";\n" + hookName(Hook::RngState) + " sfRng; " +
        hookName(Hook::RngInit) + "(&sfRng, seed, " +
        env.number("streamBlocks", "uint32_t", streamId(n, "blockLayout")) + ", sfBr, 0u, 0u);\n";
    switch (m_sg.blockSparse()->layout) {
    case BlockLayout::Mask:
    case BlockLayout::BarabasiAlbert:
    case BlockLayout::Transposed:
        throw InternalError("synapse group '" + n + "': its layout is block-CSR");
    case BlockLayout::Random:
        body += distinctColumns(m_m, m_cols, m, cols);
        break;
    case BlockLayout::Balanced:
        // A circulant relabelled at random: one m-subset K of the block-columns, drawn from a
        // stream every block-row shares, is the offsets; block-row r holds the columns
        // sigma((rho(r) + k) mod cols) for k in K, with rho and sigma keyed permutations of
        // the rows and the columns (rows == cols, checked by finalise). Each block-column c is
        // then held by the m rows with rho(r) = sigma^-1(c) - k: exactly m per row and per
        // column, built row by row in parallel with no scratch memory.
        body += std::string(hookName(Hook::RngInit)) + "(&sfRng, seed, " +
                env.number("streamBlocks", "uint32_t", streamId(n, "blockLayout")) + ", " + rows +
                ", 0u, 0u);\nuint32_t sfRowKeys[4], sfColKeys[4];\nfor (uint32_t sfQ = 0u; sfQ "
                "< 4u; sfQ++) {\nsfRowKeys[sfQ] = sf_next_u32(&sfRng);\nsfColKeys[sfQ] = "
                "sf_next_u32(&sfRng);\n}\n" +
                distinctColumns(m_m, m_cols, m, cols) + "uint32_t sfPlace = sfBr;\n" +
                feistelPermute("sfPlace", m_rows, "sfRowKeys") + "for (uint32_t sfJ = 0u; sfJ < " +
                m +
                "; sfJ++) {\nuint32_t sfCol = (uint32_t)(((uint64_t)sfPlace + sfBsTiles[sfJ]) % " +
                cols + ");\n" + feistelPermute("sfCol", m_cols, "sfColKeys") +
                "sfBsTiles[sfJ] = sfCol;\n}\n" + sortTiles(m);
        break;
    case BlockLayout::WattsStrogatz: {
        // The ring lattice: block-row r's position on the ring of block-columns,
        // c0 = r * cols / rows, and the m columns centred on it; then each is rewired with
        // probability `rewire` to a uniformly drawn column the row does not hold yet (none when
        // the row holds every column); then sorted (insertion sort: m is small).
        const double threshold =
            std::min(4294967296.0, std::round(m_sg.blockSparse()->rewire * 4294967296.0));
        const std::string limit = env.number("rewireBelow", "uint64_t", threshold);
        body += "const uint32_t sfC0 = (uint32_t)((uint64_t)sfBr * " + cols + " / " + rows +
                ");\nfor (uint32_t sfJ = 0u; sfJ < " + m + "; sfJ++)\nsfBsTiles[sfJ] = (sfC0 + " +
                cols + " - " + m + " / 2u + sfJ) % " + cols + ";\nif (" + m + " < " + cols +
                ") {\nfor (uint32_t sfJ = 0u; sfJ < " + m +
                "; sfJ++) {\nif ((uint64_t)sf_next_u32(&sfRng) >= " + limit +
                ") continue;\nfor (;;) {\nconst uint32_t sfNew = (uint32_t)(((uint64_t)"
                "sf_next_u32(&sfRng) * " +
                cols + ") >> 32);\nbool sfHeld = false;\nfor (uint32_t sfQ = 0u; sfQ < " + m +
                "; sfQ++) sfHeld = sfHeld || sfBsTiles[sfQ] == sfNew;\nif (!sfHeld) {\n"
                "sfBsTiles[sfJ] = sfNew;\nbreak;\n}\n}\n}\n}\n" +
                sortTiles(m);
        break;
    }
    }
    std::vector<BuildStep> steps = {
        {BuildStep::Kind::ForEach, BuildStep::Extent::Pre, rows, body, "", ""}};
    if (needsColumnIndex())
        for (BuildStep& s : columnIndexBuild(env))
            steps.push_back(std::move(s));
    if (prunable()) steps.push_back(pruneRoundReset(env));
    return steps;
}

// The transposed block index, a counting sort of the tiles by block-column (as Sparse sorts its
// synapses by column): zero blockColStart (columns + 1 words); count (column c in
// blockColStart[c + 2]); an inclusive scan, leaving blockColStart[c + 1] = start of column c;
// fill (each tile takes blockColStart[its column + 1]++ as its place, leaving blockColStart[c] =
// start of column c); each column's tiles sorted ascending (by block-row), so the index is the
// same whatever order the fill ran in. Extents are bounds: columns + 1 <= post + 1, tiles <= pre
// x m x b.
std::vector<BuildStep> BlockSparse::columnIndexBuild(Env& env) const {
    using Step = BuildStep;
    const std::string start = columnStart(env, Use::ReadWrite),
                      tiles = columnTiles(env, Use::ReadWrite),
                      cols = env.number("numBlockCols", "uint32_t", m_cols);
    const std::string count = tileCount(env);
    const std::string tile =
        "{\nconst uint32_t sfC = " + blockCol(env, Use::ReadWrite) + "[sfI];\n";
    const std::string add = hookName(Hook::AtomicAddU32);
    return {{Step::Kind::ForEach, Step::Extent::PostPlusOne, "(uint64_t)" + cols + " + 1u",
             start + "[sfI] = 0u;\n", "", ""},
            {Step::Kind::ForEach, Step::Extent::RowSlots, count,
             tile + "if (sfC + 2u <= " + cols + ") (void)" + add + "(&" + start +
                 "[sfC + 2u], 1u);\n}\n",
             "", ""},
            {Step::Kind::InclusiveScan, Step::Extent::PostPlusOne, "(uint64_t)" + cols + " + 1u",
             "", start, ""},
            {Step::Kind::ForEach, Step::Extent::RowSlots, count,
             tile + tiles + "[" + add + "(&" + start + "[sfC + 1u], 1u)] = (uint32_t)sfI;\n}\n", "",
             ""},
            {Step::Kind::SortSegments, Step::Extent::Post, "(uint64_t)" + cols, "", tiles, start}};
}

// A Transposed layout from the index of the group it mirrors (built earlier in the same
// initialisation): its tiles counted by block-column into blockRowStart (zero, count in
// blockRowStart[c + 2], inclusive scan), each placed in its column's row here (blockCol first
// holds the mirrored tile's number, tileRow the row), each row sorted by those numbers (so by the
// mirrored block-row: the same layout whatever order the fill ran in), then fromTile (mirrored
// tile -> tile here) written and blockCol given the mirrored block-row.
std::vector<BuildStep> BlockSparse::transposeBuild(Lowerer& e) const {
    using Step = BuildStep;
    Env& env = e.env;
    const SynapseGroup& of = e.model.synapseGroup(m_sg.blockSparse()->transposeOf);
    const std::string start =
        env.array("blockRowStart", "uint32_t", m_sg.name() + ".blockRowStart", Use::ReadWrite);
    const std::string cols = blockCol(env, Use::ReadWrite);
    const std::string rows = env.number("numBlockRows", "uint32_t", m_rows);
    const std::string ofCol =
        env.array("of_blockCol", "uint32_t", of.name() + ".blockCol", Use::Read);
    const bool ofRagged = !of.hostBuiltTiles().empty();
    const std::string ofRow =
        ofRagged ? env.array("of_tileRow", "uint32_t", of.name() + ".tileRow", Use::Read) + "[sfOf]"
                 : "sfOf / " + env.number("ofBlocksPerRow", "uint32_t", of.blocksPerRow());
    const std::string add = hookName(Hook::AtomicAddU32);
    const std::string tiles = tileCount(env), bounds = "(uint64_t)" + rows + " + 1u";
    return {{Step::Kind::ForEach, Step::Extent::RowSlots, bounds, start + "[sfI] = 0u;\n", "", ""},
            {Step::Kind::ForEach, Step::Extent::RowSlots, tiles,
             "const uint32_t sfC = " + ofCol + "[sfI];\nif (sfC + 2u <= " + rows + ") (void)" +
                 add + "(&" + start + "[sfC + 2u], 1u);\n",
             "", ""},
            {Step::Kind::InclusiveScan, Step::Extent::One, bounds, "", start, ""},
            {Step::Kind::ForEach, Step::Extent::RowSlots, tiles,
             "const uint32_t sfC = " + ofCol + "[sfI];\nconst uint32_t sfSlot = " + add + "(&" +
                 start + "[sfC + 1u], 1u);\n" + cols + "[sfSlot] = (uint32_t)sfI;\n" +
                 env.array("tileRow", "uint32_t", m_sg.name() + ".tileRow", Use::Write) +
                 "[sfSlot] = sfC;\n",
             "", ""},
            {Step::Kind::SortSegments, Step::Extent::Pre, "(uint64_t)" + rows, "", cols, start},
            {Step::Kind::ForEach, Step::Extent::RowSlots, tiles,
             "const uint32_t sfOf = " + cols + "[sfI];\n" +
                 env.array("fromTile", "uint32_t", m_sg.name() + ".fromTile", Use::Write) +
                 "[sfOf] = (uint32_t)sfI;\n" + cols + "[sfI] = " + ofRow + ";\n",
             "", ""}};
}

} // namespace block_sparse

std::unique_ptr<Connectivity> blockSparseLayout(const SynapseGroup& sg) {
    return std::make_unique<block_sparse::BlockSparse>(sg);
}

} // namespace spikeforge::codegen
