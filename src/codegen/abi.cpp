#include "codegen/abi.hpp"

namespace spikeforge::codegen::abi {

static_assert(sizeof(StepArgs) == 48, "StepArgs changed: update kStepArgsFields");

std::string stepArgsDeclaration() {
    // A typedef, so C (OpenCL C) may name it without `struct`, like C++ does.
    std::string s = "typedef struct SFStepArgs {";
    for (const auto& f : kStepArgsFields)
        s += std::string(" ") + f.ctype + " " + f.name + ";";
    return s + " } SFStepArgs;\n";
}

const char* errorMacro(ErrorBit b) {
    switch (b) {
    case ErrorBit::RowOverflow:
        return "SF_ERROR_ROW_OVERFLOW";
    case ErrorBit::DendriticDelay:
        return "SF_ERROR_DENDRITIC_DELAY";
    case ErrorBit::RowFull:
        return "SF_ERROR_ROW_FULL";
    case ErrorBit::TargetRange:
        return "SF_ERROR_TARGET_RANGE";
    }
    return "SF_ERROR_UNKNOWN";
}

const char* errorDescription(ErrorBit b) {
    switch (b) {
    case ErrorBit::RowOverflow:
        return "connectivity initialiser produced a row longer than its maximum row length";
    case ErrorBit::DendriticDelay:
        return "addToPostDelay was given a delay >= the maximum dendritic delay";
    case ErrorBit::RowFull:
        return "a custom connectivity update's add_synapse found its row full (the synapse was "
               "not added): the maximum row length is";
    case ErrorBit::TargetRange:
        return "a custom connectivity update's add_synapse named a neuron outside its group (the "
               "synapse was not added):";
    }
    return "unknown device error";
}

std::string errorBitDefinitions() {
    std::string s;
    for (ErrorBit b : kErrorBits)
        s += std::string("#define ") + errorMacro(b) + " " +
             std::to_string(static_cast<uint32_t>(b)) + "u\n";
    return s;
}

} // namespace spikeforge::codegen::abi
