// The one dispatch from a synapse group's matrix type to its layout (codegen/layouts/).
#include "codegen/connectivity.hpp"

#include "codegen/layouts/layouts.hpp"

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

} // namespace spikeforge::codegen
