#pragma once
// Environment for emitting one group's kernel code. Everything group-specific (array pointers,
// sizes, parameter values) is requested through the Env, which returns a placeholder `$(name)`.
// Structurally identical groups therefore produce identical text, which is how they are merged
// (merge.cpp); placeholders are then resolved to a folded literal (same value in every group of
// the set) or to a struct field `grp->name`.
#include "codegen/plan.hpp"

#include <string>
#include <vector>

namespace spikeforge::codegen {

class Env {
public:
    struct Entry {
        FieldDecl decl;
        FieldBinding binding;
        bool foldable;
    };

    // Pointer to a device array; ctype is the element type ("float").
    std::string array(const std::string& field, const std::string& elementType,
                      const std::string& arrayName);
    // The element count (uint64_t) of a device array, never folded: it changes when the array
    // is resized (setEGP).
    std::string arraySize(const std::string& field, const std::string& arrayName);
    // A number that may be folded into the code when every merged group agrees.
    std::string number(const std::string& field, const std::string& ctype, double value);
    // A parameter: folded like a number unless dynamic, then always a struct field.
    std::string param(const std::string& field, const std::string& ctype, double value,
                      const std::string& owner, const std::string& name, bool dynamic);

    const std::vector<Entry>& entries() const { return m_entries; }

private:
    std::string add(Entry e);
    std::vector<Entry> m_entries;
};

// One group's emitted code with its environment.
struct EmittedGroup {
    std::string groupName;
    std::string code; // contains $(field) placeholders; `grp` is the struct pointer
    Env env;
};

// Merged result for one phase: the struct type, its table, and one code body per merge set.
struct MergedPhase {
    std::vector<MergedGroupTable> tables; // one per merge set
    std::vector<std::string> bodies;      // code with placeholders resolved, same order
};

// Merge the groups of one phase. `prefix` names the structs ("NeuronUpdate" → struct
// MergedNeuronUpdate0, array mergedNeuronUpdate0).
MergedPhase mergeGroups(const std::string& prefix, std::vector<EmittedGroup> groups,
                        Precision precision);

// Formats a number as a C literal of the given type.
std::string literal(double value, const std::string& ctype);

} // namespace spikeforge::codegen
