#pragma once
// Environment for lowering one group's kernel body. Everything group-specific (array pointers,
// sizes, parameter values) is requested through the Env, which returns a placeholder `$(name)`.
// Structurally identical groups therefore produce identical bodies, which is how they are merged
// (merge.cpp); placeholders are then resolved to a folded literal (same value in every group of
// the set) or to a local the backend loads from the struct field: `sfp_<name>` for an array
// pointer, `sfv_<name>` for a number.
#include "codegen/plan.hpp"

#include <string>
#include <vector>

namespace spikeforge::codegen {

// How a kernel body uses an array it binds (Kernel::reads, Kernel::writes).
enum class Use { Read, Write, ReadWrite };
// From snippet facts: read and/or assigned (a name referenced but neither counts as read).
inline Use useOf(bool read, bool written) {
    if (!written) return Use::Read;
    return read ? Use::ReadWrite : Use::Write;
}

class Env {
public:
    struct Entry {
        FieldDecl decl;
        FieldBinding binding;
        bool foldable;
        bool read = false;    // Array: the kernel may read it
        bool written = false; // Array: the kernel may write it
    };

    // Pointer to a device array; ctype is the element type ("float"). `use`: what the code
    // requesting it does through it; requests of one field accumulate.
    std::string array(const std::string& field, const std::string& elementType,
                      const std::string& arrayName, Use use);
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

// One group's lowered body with its environment. Fragments contain $(field) placeholders and
// `#line 1 "$(@L<k>)"` labels; labels[k] is the label (it names the group, so it is not
// structure: a merged body takes its first group's labels).
struct LoweredGroup {
    std::string groupName;
    KernelBody body;
    Env env;
    std::vector<std::string> labels;
    size_t elements = 0;    // neurons, synapses or custom-update elements (per batch element)
    SynapseExtent synapses; // synapse-shaped bodies: the group's shape
};

// One merge set: its table and body (placeholders resolved) and each group's element count.
struct MergedSet {
    MergedGroupTable table;
    KernelBody body;
    std::vector<size_t> elements;
    std::vector<SynapseExtent> synapses;
    std::vector<std::string> read;    // arrays any group of the set may read
    std::vector<std::string> written; // arrays any group of the set may write
};

// Merge the groups of one phase: groups whose fragments, structure and field list are exactly
// equal share a set. `prefix` names the structs ("NeuronUpdate" → struct MergedNeuronUpdate0,
// array mergedNeuronUpdate0).
std::vector<MergedSet> mergeGroups(const std::string& prefix, std::vector<LoweredGroup> groups);

// Formats a number as a C literal of the given type.
std::string literal(double value, const std::string& ctype);

} // namespace spikeforge::codegen
