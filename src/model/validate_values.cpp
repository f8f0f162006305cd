// Parameter values, initial values and sizes. A value that overflows the model precision would
// be folded into code as inf or NaN, and a size product that overflows its index type would
// silently address the wrong element, so both are ModelErrors naming the group and the field.
#include "model/validate.hpp"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

namespace spikeforge {

namespace {

std::string where(const std::string& group, const std::string& field) {
    return "group '" + group + "', " + field + ": ";
}

std::string format(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

// `what` is finite and fits the precision; throws naming it.
void checkNumber(const std::string& prefix, const std::string& what, double v,
                 bool singlePrecision) {
    if (!std::isfinite(v)) throw ModelError(prefix + what + " is not finite (" + format(v) + ")");
    if (singlePrecision && std::fabs(v) > FLT_MAX)
        throw ModelError(prefix + what + " (" + format(v) +
                         ") overflows single precision (largest magnitude " + format(FLT_MAX) +
                         ")");
}

constexpr std::uint64_t kU32Max = std::numeric_limits<std::uint32_t>::max();

// a * b, or no value when it overflows 64 bits.
bool mul(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
    if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return false;
    out = a * b;
    return true;
}

// elements (per batch element) * batch copies * 8 bytes (the widest element) fits size_t.
void checkBytes(const std::string& prefix, const std::string& what, std::uint64_t elements,
                unsigned batchSize) {
    std::uint64_t copies = 0, bytes = 0;
    if (!mul(elements, batchSize, copies) || !mul(copies, 8, bytes) ||
        bytes > std::numeric_limits<std::size_t>::max())
        throw ModelError(prefix + what + ": " + std::to_string(elements) + " elements x batch " +
                         std::to_string(batchSize) + " overflows the address space");
}

// a * b (elements per batch element) fits uint32_t, the index type of the generated kernels.
std::uint64_t checkU32(const std::string& prefix, const std::string& what, std::uint64_t a,
                       std::uint64_t b) {
    std::uint64_t n = 0;
    if (!mul(a, b, n) || n > kU32Max)
        throw ModelError(prefix + what + ": " + std::to_string(a) + " x " + std::to_string(b) +
                         " elements exceed 4294967295, the limit of the 32-bit index type");
    return n;
}

} // namespace

void checkValues(const std::string& group, const std::string& field, const SnippetBase& snippet,
                 const ParamValues& values, const Numerics& num) {
    const std::string prefix = where(group, field);
    const bool single = num.precision == Precision::Float;
    for (const auto& [name, v] : values)
        checkNumber(prefix, "parameter '" + name + "'", v, single);
    if (snippet.paramDomain) {
        const std::string problem = snippet.paramDomain(values, num.precision);
        if (!problem.empty()) throw ModelError(prefix + "model '" + snippet.name + "': " + problem);
    }
    for (const auto& d : snippet.derivedParams)
        checkNumber(prefix, "derived parameter '" + d.name + "' of model '" + snippet.name + "'",
                    d.func(values, num.dt), single);
}

void checkInitialValue(const std::string& group, const std::string& field, const VarDecl& var,
                       double value, Precision precision) {
    const std::string prefix = where(group, field);
    const std::string what = "initial value of '" + var.name + "'";
    const bool single =
        var.type == "float" || (var.type == "scalar" && precision == Precision::Float);
    checkNumber(prefix, what, value, single);
    struct Range {
        const char* type;
        double lo, hi;
    };
    static const Range ranges[] = {{"int", -2147483648.0, 2147483647.0},
                                   {"int32_t", -2147483648.0, 2147483647.0},
                                   {"unsigned int", 0.0, 4294967295.0},
                                   {"uint32_t", 0.0, 4294967295.0},
                                   {"int8_t", -128.0, 127.0},
                                   {"uint8_t", 0.0, 255.0},
                                   {"int16_t", -32768.0, 32767.0},
                                   {"uint16_t", 0.0, 65535.0},
                                   {"bool", 0.0, 1.0}};
    for (const Range& r : ranges)
        if (var.type == r.type && (value < r.lo || value > r.hi || std::floor(value) != value))
            throw ModelError(prefix + what + " (" + format(value) + ") does not fit its type '" +
                             r.type + "' (a whole number in [" + format(r.lo) + ", " +
                             format(r.hi) + "])");
}

void checkNeuronSizes(const NeuronGroup& ng, unsigned batchSize) {
    const std::string prefix = where(ng.name(), "size");
    // spikes are bit-packed into 32-bit words counted as (N + 31) / 32 in uint32_t
    if (ng.size() > kU32Max - 31)
        throw ModelError(prefix + std::to_string(ng.size()) +
                         " neurons exceed 4294967264, the most a group can index");
    checkBytes(prefix, "neuron variables", ng.size(), batchSize);
}

void checkSynapseSizes(const SynapseGroup& sg, unsigned batchSize) {
    const std::string prefix = where(sg.name(), "size");
    const std::uint64_t pre = sg.source().size(), post = sg.target().size();
    // the source's spike queue holds axonal delay + 2 slots of N entries
    const std::uint64_t slots = NeuronGroup::slotsForDelay(sg.axonalDelaySteps());
    checkBytes(
        prefix, "spike queue of the source",
        checkU32(where(sg.name(), "axonal delay"), "delay slots x source neurons", slots, pre),
        batchSize);
    // and the target's holds back-propagation delay + 2
    checkBytes(prefix, "spike queue of the target",
               checkU32(where(sg.name(), "back-propagation delay"), "delay slots x target neurons",
                        NeuronGroup::slotsForDelay(sg.backPropDelaySteps()), post),
               batchSize);
    checkBytes(prefix, "dendritic delay buffer",
               checkU32(where(sg.name(), "max dendritic delay"), "delay slots x target neurons",
                        sg.maxDendriticDelaySteps(), post),
               batchSize);
    std::uint64_t n64 = 0;
    switch (sg.matrixType()) {
    case MatrixType::Sparse: {
        // synapse indices are stored as uint32_t (column structure, row-major id)
        const auto n = checkU32(where(sg.name(), "connectivity"), "rows x maximum row length", pre,
                                sg.maxRowLength());
        checkBytes(prefix, "synapse variables", n, batchSize);
        break;
    }
    case MatrixType::Procedural: // nothing per synapse is stored; indices fit 64 bits
        if (!mul(pre, sg.maxRowLength(), n64))
            throw ModelError(prefix + "rows x maximum row length overflows 64 bits");
        break;
    case MatrixType::BlockSparse: { // whole tiles; element indices are 64-bit
        const std::uint64_t b = sg.blockSparse()->blockSize;
        std::uint64_t n = 0;
        if (!mul(sg.numTiles(), b * b, n))
            throw ModelError(prefix + "tiles x block size squared overflows 64 bits");
        checkBytes(prefix, "synapse variables", n, batchSize);
        break;
    }
    case MatrixType::Toeplitz: // the kernel: its sizes were checked with the shape
        checkBytes(prefix, "synapse variables", sg.convGeometry().kernelSize(), batchSize);
        break;
    case MatrixType::Dense: {
        std::uint64_t n = 0;
        if (!mul(pre, post, n))
            throw ModelError(prefix + "source x target neurons overflows 64 bits");
        checkBytes(prefix, "synapse variables", n, batchSize);
        break;
    }
    }
}

} // namespace spikeforge
