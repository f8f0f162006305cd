#pragma once
// The connectivity layouts, one file each in this folder; connectivityOf (connectivity.cpp) is the
// one dispatch on MatrixType. docs/internals.md ("Layouts") says what a new one must supply.
#include "codegen/connectivity.hpp"

namespace spikeforge::codegen {

std::unique_ptr<Connectivity> denseLayout(const SynapseGroup& sg);
std::unique_ptr<Connectivity> sparseLayout(const SynapseGroup& sg);
std::unique_ptr<Connectivity> toeplitzLayout(const SynapseGroup& sg);

} // namespace spikeforge::codegen
