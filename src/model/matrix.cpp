// Facts of each matrix type, one `switch` per fact: adding a type makes each of them a compile
// error until it is answered.
#include "spikeforge/model.hpp"

namespace spikeforge {

MatrixTraits matrixTraits(MatrixType t) {
    switch (t) {
    case MatrixType::Dense:
        return {false, true, false};
    case MatrixType::Sparse:
        return {true, false, false};
    case MatrixType::Toeplitz:
        return {false, false, true};
    }
    throw InternalError("unknown matrix type");
}

const char* matrixTypeName(MatrixType t) {
    switch (t) {
    case MatrixType::Dense:
        return "Dense";
    case MatrixType::Sparse:
        return "Sparse";
    case MatrixType::Toeplitz:
        return "Toeplitz";
    }
    throw InternalError("unknown matrix type");
}

unsigned SynapseGroup::rowStride() const {
    switch (m_matrixType) {
    case MatrixType::Dense:
        return target().size();
    case MatrixType::Sparse:
        return m_maxRowLength;
    case MatrixType::Toeplitz:
        return static_cast<unsigned>(m_convGeometry.rowIterations());
    }
    throw InternalError("unknown matrix type");
}

size_t SynapseGroup::synapseVarElements() const {
    switch (m_matrixType) {
    case MatrixType::Dense:
        return size_t(source().size()) * target().size();
    case MatrixType::Sparse:
        return size_t(source().size()) * m_maxRowLength;
    case MatrixType::Toeplitz:
        return m_convGeometry.kernelSize();
    }
    throw InternalError("unknown matrix type");
}

} // namespace spikeforge
