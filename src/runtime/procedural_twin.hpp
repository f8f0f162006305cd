#pragma once
// Reading a Procedural group's synapses. Nothing of them is stored: the layout regenerates the
// rows a Sparse group with the same initialiser, names and seed builds, from the Sparse build's
// own random streams (codegen/layouts/procedural.cpp), and evaluates per-synapse values from
// their initialisers at the Sparse element. So the host codec of a Procedural group is that
// Sparse twin, built on the cpu backend with nothing but the two populations' sizes and the
// group's connectivity and variable initialisers, and read through the Sparse codec.
#include "spikeforge/model.hpp"
#include "spikeforge/simulation.hpp"

#include <memory>

namespace spikeforge::runtime {

struct ProceduralTwin {
    std::unique_ptr<Model> model;    // outlives the simulation, which refers to it
    std::unique_ptr<Simulation> sim; // initialised: its Sparse group holds the synapses
};

// The twin of Procedural group `sg` of `m` (finalised), built with `prefs`' cache, compiler and
// time limit on the cpu backend. BackendError naming the group if the cpu backend cannot build
// it here (no C++ compiler).
ProceduralTwin makeProceduralTwin(const Model& m, const SynapseGroup& sg,
                                  const BackendPreferences& prefs);

} // namespace spikeforge::runtime
