#pragma once
// Device-side source text every backend's prelude prints the same way.
#include <string>

namespace spikeforge::backends {

// The random-number library (rng.h, embedded) and the snippet functions on it (rand_uniform(),
// rand_normal(), …, drawing from the local stream `sfRng`). Needs the prelude's SF_FN, sf_u32,
// sf_u64, scalar and maths functions (see rng.h).
std::string randomNumberSource();

// The helpers that make every snippet operation defined (snippet/printer.cpp prints the calls):
// sf_index (a checked index), sf_div_/sf_rem_<i32|u32|i64|u64> (integer division and modulo:
// a zero divisor, or the minimum divided by -1, gives 0) and sf_<f32|f64>_to_<i32|…>
// (saturating float-to-integer conversions, NaN to 0). A failing check stores its ordinal through
// `errorPointer` (the prelude's pointer type, e.g. "SF_GLOBAL uint32_t*") with
// `store(pointer, value)`, a macro or function of the prelude. Needs SF_FN and the fixed-width
// integer types.
std::string snippetCheckSource(const std::string& errorPointer, const std::string& store);

} // namespace spikeforge::backends
