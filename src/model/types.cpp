#include "spikeforge/types.hpp"

namespace spikeforge {

const char* toString(VarAccess a) {
    switch (a) {
    case VarAccess::ReadWrite:
        return "ReadWrite";
    case VarAccess::ReadOnly:
        return "ReadOnly";
    case VarAccess::ReadOnlyDuplicate:
        return "ReadOnlyDuplicate";
    case VarAccess::ReadOnlySharedNeuron:
        return "ReadOnlySharedNeuron";
    }
    return "?";
}

const char* toString(Precision p) {
    return p == Precision::Float ? "float" : "double";
}

} // namespace spikeforge
