// Facts of each matrix type, one `switch` per fact: adding a type makes each of them a compile
// error until it is answered.
#include "model/analysis.hpp"
#include "model/validate.hpp"
#include "spikeforge/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace spikeforge {

namespace {

// Traits in MatrixTraits' order: builtByInitialiser, transposable, kernelShaped, procedural,
// blockTiled, editableRows.
const std::vector<MatrixTypeInfo> kMatrixTypes = {
    {MatrixType::Dense, "Dense", "dense", {false, true, false, false, false, false}},
    {MatrixType::Sparse, "Sparse", "sparse", {true, false, false, false, false, true}},
    {MatrixType::Toeplitz, "Toeplitz", "toeplitz", {false, false, true, false, false, false}},
    {MatrixType::Procedural, "Procedural", "procedural", {true, false, false, true, false, false}},
    {MatrixType::BlockSparse,
     "BlockSparse",
     "block_sparse",
     {false, false, false, false, true, false}},
};

// The row of each type; a type without one is a compile error here (no `default`).
size_t rowOf(MatrixType t) {
    switch (t) {
    case MatrixType::Dense:
        return 0;
    case MatrixType::Sparse:
        return 1;
    case MatrixType::Toeplitz:
        return 2;
    case MatrixType::Procedural:
        return 3;
    case MatrixType::BlockSparse:
        return 4;
    }
    throw InternalError("unknown matrix type");
}

std::string lowered(const std::string& text) {
    std::string out = text;
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    return out;
}

} // namespace

const std::vector<MatrixTypeInfo>& matrixTypes() {
    return kMatrixTypes;
}

const MatrixTypeInfo& matrixTypeInfo(MatrixType t) {
    const MatrixTypeInfo& row = kMatrixTypes.at(rowOf(t));
    if (row.type != t) throw InternalError("matrix type table out of order");
    return row;
}

MatrixTraits matrixTraits(MatrixType t) {
    return matrixTypeInfo(t).traits;
}

const char* matrixTypeName(MatrixType t) {
    return matrixTypeInfo(t).name;
}

std::optional<MatrixType> matrixTypeNamed(const std::string& text) {
    const std::string key = lowered(text);
    for (const MatrixTypeInfo& row : kMatrixTypes)
        if (key == row.configName || key == lowered(row.name)) return row.type;
    return std::nullopt;
}

std::vector<std::string> matrixTypeConfigNames() {
    std::vector<std::string> out;
    for (const MatrixTypeInfo& row : kMatrixTypes)
        out.push_back(row.configName);
    return out;
}

unsigned SynapseGroup::rowStride() const {
    switch (m_matrixType) {
    case MatrixType::Dense:
        return target().size();
    case MatrixType::Sparse:
    case MatrixType::Procedural:
        return m_maxRowLength;
    case MatrixType::Toeplitz:
        return static_cast<unsigned>(m_convGeometry.rowIterations());
    case MatrixType::BlockSparse:
        return m_blocksPerRow * m_blockSparse->blockSize;
    }
    throw InternalError("unknown matrix type");
}

size_t SynapseGroup::synapseVarElements() const {
    switch (m_matrixType) {
    case MatrixType::Dense:
        return size_t(source().size()) * target().size();
    case MatrixType::Sparse:
        return size_t(source().size()) * m_maxRowLength;
    case MatrixType::Toeplitz:
        return m_convGeometry.kernelSize();
    case MatrixType::Procedural:
        return 0;
    case MatrixType::BlockSparse: // whole tiles, edge tiles included
        return size_t(m_numTiles) * m_blockSparse->blockSize * m_blockSparse->blockSize;
    }
    throw InternalError("unknown matrix type");
}

unsigned SynapseGroup::numBlockRows() const {
    const unsigned b = m_blockSparse ? m_blockSparse->blockSize : 0;
    return b ? (source().size() + b - 1) / b : 0;
}

unsigned SynapseGroup::numBlockCols() const {
    const unsigned b = m_blockSparse ? m_blockSparse->blockSize : 0;
    return b ? (target().size() + b - 1) / b : 0;
}

void checkLayoutUses(const Model& m, const analysis::Results& results) {
    auto scanned = [&](const std::string& group, const std::string& field) {
        const auto it = results.slots.find({group, field});
        return it == results.slots.end() ? nullptr : &results.fields[it->second];
    };
    for (const auto& sg : m.synapseGroups()) {
        const MatrixTraits traits = matrixTraits(sg->matrixType());
        if (!traits.kernelShaped && !traits.procedural) continue;
        for (const char* field : {"preSpikeSynCode", "synapseDynamicsCode", "preEventSynCode"}) {
            const auto* code = scanned(sg->name(), field);
            for (const auto& v : sg->wu().model.vars)
                if (code && code->assignedNames.count(v.name))
                    throw ModelError("synapse group '" + sg->name() + "', " + field +
                                     ": assigns '" + v.name + "', " +
                                     (traits.kernelShaped ? "a kernel weight every position of the "
                                                            "Toeplitz group shares; change "
                                                            "it in a custom update instead"
                                                          : "a per-synapse value a Procedural "
                                                            "group evaluates from its initialiser "
                                                            "at each spike and never stores"));
        }
    }
    for (const auto& cu : m.customUpdates()) {
        if (!cu->isWUShaped()) continue;
        const SynapseGroup& sg = *cu->synapseGroup();
        const MatrixTraits traits = matrixTraits(sg.matrixType());
        if (traits.procedural)
            throw ModelError("custom update '" + cu->name() + "': synapse group '" + sg.name() +
                             "' is Procedural: its per-synapse values are not stored, so no "
                             "custom update can reference them");
        if (!traits.kernelShaped) continue;
        const auto* code = scanned(cu->name(), "updateCode");
        for (const char* name : {"id_pre", "id_post"})
            if (code && code->referencedNames.count(name))
                throw ModelError("custom update '" + cu->name() + "', updateCode: uses '" + name +
                                 "', but its elements are the kernel weights of Toeplitz group '" +
                                 sg.name() + "', which no single pair owns");
    }
}

const std::vector<std::pair<std::string, BlockLayout>>& blockLayoutNames() {
    static const std::vector<std::pair<std::string, BlockLayout>> names = {
        {"random", BlockLayout::Random},
        {"watts_strogatz", BlockLayout::WattsStrogatz},
        {"balanced", BlockLayout::Balanced},
        {"mask", BlockLayout::Mask},
        {"barabasi_albert", BlockLayout::BarabasiAlbert},
        {"transposed", BlockLayout::Transposed}};
    return names;
}

const std::vector<std::pair<std::string, Propagation>>& propagationNames() {
    static const std::vector<std::pair<std::string, Propagation>> names = {
        {"auto", Propagation::Auto},
        {"event_driven", Propagation::EventDriven},
        {"matrix", Propagation::Matrix}};
    return names;
}

bool usesMatrixPropagation(const Model& m, const SynapseGroup& sg,
                           const analysis::Results& results) {
    const BlockSparseInit& b = *sg.blockSparse();
    const std::string at = "synapse group '" + sg.name() + "', propagation: ";
    if (!(b.expectedRate >= 0.0 && std::isfinite(b.expectedRate)))
        throw ModelError(at + "expected rate must be a finite number >= 0 Hz (got " +
                         std::to_string(b.expectedRate) + ")");
    // Why the tile-major order cannot replace the spikes' order, or "" when it can.
    std::string problem;
    const auto it = results.slots.find({sg.name(), "preSpikeSynCode"});
    if (sg.wu().model.preSpikeSynCode.empty() || it == results.slots.end())
        problem = "the weight update has no preSpikeSynCode";
    else if (sg.axonalDelaySteps() > 0)
        problem = "an axonal delay (the matrix form reads the spikes of the last step)";
    else {
        const snippet::Scanned& code = results.fields[it->second];
        if (!code.assignedNames.empty())
            problem = "preSpikeSynCode assigns '" + *code.assignedNames.begin() + "'";
        else if (code.usesRng)
            problem = "preSpikeSynCode draws random numbers";
        else if (code.usesAddToPostDelay || code.calledFunctions.count("addToPostDelay"))
            problem = "preSpikeSynCode calls addToPostDelay";
        else if (code.calledFunctions.count("addToPre"))
            problem = "preSpikeSynCode calls addToPre";
    }
    switch (b.propagation) {
    case Propagation::EventDriven:
        return false;
    case Propagation::Matrix:
        if (!problem.empty())
            throw ModelError(at + "the matrix form applies tiles in another order than the " +
                             "spikes arrive, so it needs synapse code whose only effect is " +
                             "addToPost; this group has " + problem);
        break;
    case Propagation::Auto: {
        if (!problem.empty() || b.expectedRate == 0.0) return false;
        const double p = std::min(1.0, b.expectedRate * m.dt() / 1000.0);
        if (m.batchSize() < 2 || b.blockSize * p < kMatrixRowsPerTile) return false;
        break;
    }
    }
    // SIMT backends gather a target's input over its block-column: tiles x b iterations.
    if (sg.numTiles() * b.blockSize > UINT32_MAX)
        throw ModelError(at + "the matrix form of a BlockSparse group of more than 2^32 synapse " +
                         "slots is not supported (use EventDriven)");
    return true;
}

} // namespace spikeforge
