#pragma once
// Snippets analysed once: Model::finalise scans every code field (contexts::allCodeFields) and
// keeps the checked tree with its facts (names referenced, read and written, calls, RNG use,
// dendritic delay use, arrays needing index checks). Later passes — the lowering to a kernel
// plan, the array layout, the runtime's error messages — read these and never scan again.
#include "snippet/scanner.hpp"
#include "spikeforge/model.hpp"

#include <string>

namespace spikeforge::analysis {

// The analysis of code field `field` ("simCode", "ps.simCode", "init.V", …) of `group`; the
// model must be finalised. An empty code string has an empty analysis.
const snippet::Scanned& of(const Model& m, const std::string& group, const std::string& field);
// The same by slot (contexts::codeFieldSlot order).
const snippet::Scanned& at(const Model& m, size_t slot);

} // namespace spikeforge::analysis
