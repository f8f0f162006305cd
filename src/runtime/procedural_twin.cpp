#include "runtime/procedural_twin.hpp"

#include "spikeforge/errors.hpp"
#include "spikeforge/models.hpp"

namespace spikeforge::runtime {

namespace {

// A population with no state and no spikes: only its size matters to the twin.
NeuronModel silent() {
    NeuronModel n;
    n.name = "ProceduralTwinPopulation";
    return n;
}

// The group's per-synapse variables and their initialisers, without code: the twin only
// initialises them (Sparse storage), so their values are those the Procedural group evaluates.
WeightUpdateInit variablesOnly(const SynapseGroup& sg) {
    WeightUpdateInit wu;
    wu.model.name = sg.wu().model.name + "VariablesOnly";
    wu.model.vars = sg.wu().model.vars;
    wu.varInits = sg.wu().varInits;
    return wu;
}

} // namespace

ProceduralTwin makeProceduralTwin(const Model& m, const SynapseGroup& sg,
                                  const BackendPreferences& prefs) {
    if (sg.matrixType() != MatrixType::Procedural || !sg.connectivity())
        throw InternalError("synapse group '" + sg.name() + "' has no procedural twin");
    ProceduralTwin twin;
    // The names, seed, precision and batch size key the random streams: all as in `m`.
    twin.model = std::make_unique<Model>(m.name());
    Model& t = *twin.model;
    t.setDT(m.dt());
    t.setPrecision(m.precision());
    t.setBatchSize(m.batchSize());
    t.setSeed(m.seed());
    t.addNeuronGroup(sg.source().name(), sg.source().size(), silent(), {}, {});
    if (sg.target().name() != sg.source().name())
        t.addNeuronGroup(sg.target().name(), sg.target().size(), silent(), {}, {});
    SynapseGroup& s =
        t.addSynapseGroup(sg.name(), MatrixType::Sparse, 0, sg.source().name(), sg.target().name(),
                          variablesOnly(sg), {models::DeltaCurr(), {}, {}}, *sg.connectivity());
    if (sg.maxConnections() > 0) s.setMaxConnections(sg.maxConnections());
    BackendPreferences p;
    p.backend = "cpu";
    p.threads = prefs.backend == "cpu" ? prefs.threads : 0;
    p.cacheDir = prefs.cacheDir;
    p.compiler = prefs.compiler;
    p.compileTimeout = prefs.compileTimeout;
    try {
        twin.sim = std::make_unique<Simulation>(t, p);
    } catch (const BackendError& e) {
        throw BackendError("synapse group '" + sg.name() +
                           "' is Procedural: its synapses are read by regenerating them on the "
                           "cpu backend, which cannot build here: " +
                           e.what());
    }
    return twin;
}

} // namespace spikeforge::runtime
