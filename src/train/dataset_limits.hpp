#pragma once
// The size check of the dataset generators: a set that would not fit in this machine's memory is
// refused before anything is generated (as a model larger than the machine is refused before
// anything is allocated), never left to run for hours or to be killed halfway.
#include <cstddef>
#include <string>

namespace spikeforge::train::detail {

// ModelError naming `what`, `examples` and the bytes needed when `examples` examples of about
// `eventsPerExample` events would take more than half of the machine's physical memory (the
// event array, and the copy the device upload makes of it).
void checkGeneratedSize(const std::string& what, size_t examples, double eventsPerExample);

} // namespace spikeforge::train::detail
