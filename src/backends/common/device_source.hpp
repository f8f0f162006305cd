#pragma once
// Device-side source text every backend's prelude prints the same way.
#include <string>

namespace spikeforge::backends {

// The random-number library (rng.h, embedded) and the snippet functions on it (rand_uniform(),
// rand_normal(), …, drawing from the local stream `sfRng`). Needs the prelude's SF_FN, sf_u32,
// sf_u64, scalar and maths functions (see rng.h).
std::string randomNumberSource();

} // namespace spikeforge::backends
