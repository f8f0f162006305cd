#pragma once
// The connectivity layouts, one file each in this folder; connectivityOf (connectivity.cpp) is the
// one dispatch on MatrixType. docs/internals.md ("Adding a matrix type", under "The pipeline")
// says what a new one must supply.
#include "codegen/connectivity.hpp"

namespace spikeforge::codegen {

// The connectivity initialiser's row code for row id_pre, appending targets with SF_ADD_SYNAPSE
// into sfRow (sfLen, sfStride in scope), its random stream keyed by `seed` (an expression): the
// same rows wherever it runs (Sparse's build, Procedural's spikes). sfNpre and sfNpost in scope;
// preCalcRowLength bound in e.subs by the caller when the code reads it.
std::string rowBuildCode(Lowerer& e, const SynapseGroup& sg, const std::string& seed);

std::unique_ptr<Connectivity> denseLayout(const SynapseGroup& sg);
std::unique_ptr<Connectivity> sparseLayout(const SynapseGroup& sg);
std::unique_ptr<Connectivity> toeplitzLayout(const SynapseGroup& sg);
std::unique_ptr<Connectivity> proceduralLayout(const SynapseGroup& sg);
std::unique_ptr<Connectivity> blockSparseLayout(const SynapseGroup& sg);

} // namespace spikeforge::codegen
