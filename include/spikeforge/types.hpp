#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace spikeforge {

enum class Precision { Float, Double };

// Variable access modes, as in GeNN. They fix the variable's dimensions under batching:
//   ReadWrite            one copy per batch element (element × batch)
//   ReadOnly             shared by the whole batch (element)
//   ReadOnlyDuplicate    read-only but one copy per batch element (element × batch)
//   ReadOnlySharedNeuron one value per batch element shared by all neurons (batch)
enum class VarAccess { ReadWrite, ReadOnly, ReadOnlyDuplicate, ReadOnlySharedNeuron };

inline bool isReadOnly(VarAccess a) {
    return a != VarAccess::ReadWrite;
}
inline bool hasBatchDim(VarAccess a) {
    return a != VarAccess::ReadOnly;
}
inline bool hasElementDim(VarAccess a) {
    return a != VarAccess::ReadOnlySharedNeuron;
}

const char* toString(VarAccess a);
const char* toString(Precision p);

using ParamValues = std::map<std::string, double>;

} // namespace spikeforge
