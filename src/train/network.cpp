// The training network description and the checks that need only the description.
#include "spikeforge/train/network.hpp"

#include "spikeforge/errors.hpp"
#include "spikeforge/model.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace spikeforge::train {

namespace {

void requirePositive(double value, const std::string& owner, const char* field) {
    if (!std::isfinite(value) || value <= 0.0)
        throw ModelError("population or connection '" + owner + "': " + field +
                         " must be a finite number > 0, got " + std::to_string(value));
}

} // namespace

const char* readoutName(Readout r) {
    switch (r) {
    case Readout::SumVar:
        return "SumVar";
    case Readout::AvgVar:
        return "AvgVar";
    case Readout::AvgVarExpWeight:
        return "AvgVarExpWeight";
    case Readout::MaxVar:
        return "MaxVar";
    case Readout::Var:
        return "Var";
    }
    return "?";
}

void Network::checkNewName(const std::string& name, const char* what) const {
    const std::string problem = identifierProblem(name);
    if (!problem.empty()) throw ModelError(std::string(what) + " name '" + name + "': " + problem);
    for (const auto& p : m_populations)
        if (p.name == name)
            throw ModelError(std::string(what) + " '" + name + "': the name is already used");
    for (const auto& c : m_connections)
        if (c.name == name)
            throw ModelError(std::string(what) + " '" + name + "': the name is already used");
}

void Network::addSpikeInput(const std::string& name, const SpikeInputParams& params) {
    checkNewName(name, "population");
    if (params.numChannels == 0)
        throw ModelError("population '" + name + "': a SpikeInput needs numChannels >= 1");
    const uint64_t size = uint64_t(params.numChannels) * (uint64_t(params.delayCopies) + 1);
    if (size > UINT32_MAX)
        throw ModelError("population '" + name + "': numChannels * (delayCopies + 1) = " +
                         std::to_string(size) + " neurons is too many (at most 2^32 - 1)");
    if (params.delayCopies > 0) requirePositive(params.delayStep, name, "delayStep");
    Population p{name, PopulationKind::SpikeInput, static_cast<uint32_t>(size), params, {}, {}, {}};
    m_populations.push_back(p);
}

void Network::addLif(const std::string& name, uint32_t size, const LifParams& params) {
    checkNewName(name, "population");
    if (size == 0) throw ModelError("population '" + name + "': size must be >= 1");
    requirePositive(params.tauMem, name, "tauMem");
    requirePositive(params.vThresh, name, "vThresh");
    if (!std::isfinite(params.regStrength) || params.regStrength < 0.0 ||
        !std::isfinite(params.regTarget) || params.regTarget < 0.0)
        throw ModelError("population '" + name +
                         "': regStrength and regTarget must be finite numbers >= 0");
    if (params.spikeBufferSize == 0)
        throw ModelError("population '" + name + "': spikeBufferSize must be >= 1");
    m_populations.push_back({name, PopulationKind::Lif, size, {}, params, {}, {}});
}

void Network::addFirstSpikeReadout(const std::string& name, uint32_t size,
                                   const FirstSpikeReadoutParams& params) {
    requirePositive(params.tau0, name, "tau0");
    requirePositive(params.tau1, name, "tau1");
    if (!std::isfinite(params.alpha) || params.alpha < 0.0)
        throw ModelError("population '" + name + "': alpha must be a finite number >= 0");
    if (!std::isfinite(params.silentPush) || params.silentPush < 0.0)
        throw ModelError("population '" + name + "': silentPush must be a finite number >= 0");
    addLif(name, size, params.lif); // the LIF checks; then it becomes the readout
    m_populations.back().kind = PopulationKind::FirstSpikeReadout;
    m_populations.back().firstSpike = params;
}

void Network::addLeakyIntegrate(const std::string& name, uint32_t size,
                                const LeakyIntegrateParams& params) {
    checkNewName(name, "population");
    if (size == 0) throw ModelError("population '" + name + "': size must be >= 1");
    requirePositive(params.tauMem, name, "tauMem");
    m_populations.push_back({name, PopulationKind::LeakyIntegrate, size, {}, {}, params, {}});
}

namespace {

void checkPruning(const std::string& name, const ConnectionParams& params) {
    const BlockPruning& p = *params.pruning;
    if (!params.blocks)
        throw ModelError("connection '" + name +
                         "': pruning applies to block-sparse connections only (set blocks)");
    if (p.everyBatches == 0)
        throw ModelError("connection '" + name + "': pruning every 0 batches (must be >= 1)");
    if (!(p.fraction > 0.0 && p.fraction <= 1.0))
        throw ModelError("connection '" + name + "': pruning fraction must be in (0, 1], got " +
                         std::to_string(p.fraction));
}

} // namespace

uint32_t tilesToPrune(const BlockPruning& p, uint64_t tiles, uint64_t batch) {
    if (p.everyBatches == 0 || batch == 0 || batch % p.everyBatches != 0) return 0;
    double share = p.fraction;
    if (p.untilBatch > 0) {
        if (batch >= p.untilBatch) return 0;
        share *= 0.5 * (1.0 + std::cos(std::numbers::pi * double(batch) / double(p.untilBatch)));
    }
    return static_cast<uint32_t>(std::min<double>(std::lround(share * double(tiles)), tiles));
}

void Network::addConnection(const std::string& name, const std::string& source,
                            const std::string& target, const ConnectionParams& params) {
    checkNewName(name, "connection");
    const Population& src = population(source);
    const Population& tgt = population(target);
    if (src.kind == PopulationKind::LeakyIntegrate || src.kind == PopulationKind::FirstSpikeReadout)
        throw ModelError("connection '" + name + "': source '" + source +
                         "' is a readout, the last layer");
    if (tgt.kind == PopulationKind::SpikeInput)
        throw ModelError("connection '" + name + "': target '" + target +
                         "' is a SpikeInput, which takes no input");
    requirePositive(params.tauSyn, name, "tauSyn");
    if (!(params.probability > 0.0 && params.probability <= 1.0))
        throw ModelError("connection '" + name + "': probability must be in (0, 1], got " +
                         std::to_string(params.probability));
    if (params.blocks && params.probability < 1.0)
        throw ModelError("connection '" + name +
                         "': a block-sparse connection takes its density from the block layout; "
                         "leave probability at 1");
    if (params.pruning) checkPruning(name, params);
    if (!std::isfinite(params.weights.mean) || !std::isfinite(params.weights.sd) ||
        params.weights.sd < 0.0)
        throw ModelError("connection '" + name +
                         "': weight initialiser needs a finite mean and a finite sd >= 0");
    if (params.synapse == Synapse::Delta && tgt.kind != PopulationKind::LeakyIntegrate)
        throw ModelError("connection '" + name + "': Delta synapses may only target a " +
                         "LeakyIntegrate readout ('" + target +
                         "' spikes: driven by jumps it crosses its threshold only at a jump, " +
                         "where EventProp's jump is undefined); use Exponential");
    if (const auto kind = synapseInto(target); kind && *kind != params.synapse)
        throw ModelError("connection '" + name + "': every connection into '" + target +
                         "' must have the same synapse kind (Exponential or Delta)");
    if (const auto tau = tauSynInto(target);
        params.synapse == Synapse::Exponential && tau && *tau != params.tauSyn)
        throw ModelError("connection '" + name + "': tauSyn " + std::to_string(params.tauSyn) +
                         " ms differs from the " + std::to_string(*tau) +
                         " ms of the other connections into '" + target +
                         "' (one synaptic time constant per population)");
    m_connections.push_back({name, source, target, params});
}

const Population& Network::population(const std::string& name) const {
    for (const auto& p : m_populations)
        if (p.name == name) return p;
    throw ModelError("network has no population '" + name + "'");
}

std::optional<Synapse> Network::synapseInto(const std::string& target) const {
    for (const auto& c : m_connections)
        if (c.target == target) return c.params.synapse;
    return std::nullopt;
}

std::optional<double> Network::tauSynInto(const std::string& target) const {
    for (const auto& c : m_connections)
        if (c.target == target) return c.params.tauSyn;
    return std::nullopt;
}

} // namespace spikeforge::train
