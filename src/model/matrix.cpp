// Facts of each matrix type, one `switch` per fact: adding a type makes each of them a compile
// error until it is answered.
#include "spikeforge/model.hpp"

namespace spikeforge {

MatrixTraits matrixTraits(MatrixType t) {
    switch (t) {
    case MatrixType::Dense:
        return {false, true};
    case MatrixType::Sparse:
        return {true, false};
    }
    throw InternalError("unknown matrix type");
}

const char* matrixTypeName(MatrixType t) {
    switch (t) {
    case MatrixType::Dense:
        return "Dense";
    case MatrixType::Sparse:
        return "Sparse";
    }
    throw InternalError("unknown matrix type");
}

unsigned SynapseGroup::rowStride() const {
    switch (m_matrixType) {
    case MatrixType::Dense:
        return target().size();
    case MatrixType::Sparse:
        return m_maxRowLength;
    }
    throw InternalError("unknown matrix type");
}

} // namespace spikeforge
