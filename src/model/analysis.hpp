#pragma once
// Snippets analysed once: Model::finalise scans every code field (contexts::allCodeFields) and
// keeps the checked tree with its facts (names referenced, read and written, calls, RNG use,
// dendritic delay use, arrays needing index checks). Later passes — the lowering to a kernel
// plan, the array layout, the runtime's error messages — read these and never scan again.
#include "snippet/scanner.hpp"
#include "spikeforge/model.hpp"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace spikeforge::analysis {

// A code field's owner group and field name ("simCode", "ps.simCode", "init.V", …).
struct FieldName {
    std::string group;
    std::string field;
};

// What finalise keeps, by slot (contexts::codeFieldSlot order). Immutable once built, so
// references into it stay valid until the model is finalised again or destroyed.
struct Results {
    std::vector<FieldName> names;
    std::vector<snippet::Scanned> fields;
    std::map<std::pair<std::string, std::string>, size_t> slots; // (group, field) → slot
};

// The analysis of code field `field` ("simCode", "ps.simCode", "init.V", …) of `group`; the
// model must be finalised (else InternalError naming the model). An empty code string has an
// empty analysis. The reference is valid until the next finalise.
const snippet::Scanned& of(const Model& m, const std::string& group, const std::string& field);
// The same by slot (contexts::codeFieldSlot order).
const snippet::Scanned& at(const Model& m, size_t slot);
// The group and field of a slot, and the number of slots, of the finalised model.
const FieldName& nameAt(const Model& m, size_t slot);
size_t count(const Model& m);

// The results themselves, shared: for a holder that must outlive a later change or finalise of
// the model (e.g. a Simulation reading `checkedArrays` when it reports an error).
std::shared_ptr<const Results> share(const Model& m);

// Scans every code field of `m` (throwing the first snippet's ModelError). Model::finalise
// calls this once, after the rest of validation; passes read the result through `of` / `at`.
std::shared_ptr<const Results> analyse(const Model& m);

} // namespace spikeforge::analysis
