// The one dispatch from a synapse group's matrix type to its layout (codegen/layouts/).
#include "codegen/connectivity.hpp"

#include "codegen/ctype.hpp"
#include "codegen/kernel_plan.hpp"
#include "codegen/layouts/layouts.hpp"

#include <algorithm>

namespace spikeforge::codegen {

std::unique_ptr<Connectivity> connectivityOf(const SynapseGroup& sg) {
    switch (sg.matrixType()) {
    case MatrixType::Dense:
        return denseLayout(sg);
    case MatrixType::Sparse:
        return sparseLayout(sg);
    case MatrixType::Toeplitz:
        return toeplitzLayout(sg);
    case MatrixType::Procedural:
        return proceduralLayout(sg);
    case MatrixType::BlockSparse:
        return blockSparseLayout(sg);
    }
    throw InternalError("synapse group '" + sg.name() + "': unknown matrix type");
}

std::string prefetchRange(const std::string& pointer, const std::string& elementType) {
    const size_t perLine = std::max<size_t>(1, 64 / sizeOf(cTypeOf(elementType))); // per line
    return "for (uint32_t sfPf = 0u; sfPf < sfPfLen; sfPf += " + std::to_string(perLine) + "u) " +
           hookName(Hook::Prefetch) + "(" + pointer + " + sfPfRow + sfPf);\n";
}

} // namespace spikeforge::codegen
