// C++ errors as Python exceptions with the same message: ModelError (the user's model, config
// or snippet; a ValueError), BackendError (the toolchain or the machine; a RuntimeError) and
// InternalError (a bug in spikeforge; a RuntimeError).
#include "bindings.hpp"

#include "spikeforge/errors.hpp"

namespace spikeforge::python {

void bindErrors(nb::module_& m) {
    nb::exception<ModelError>(m, "ModelError", PyExc_ValueError);
    nb::exception<BackendError>(m, "BackendError", PyExc_RuntimeError);
    nb::exception<InternalError>(m, "InternalError", PyExc_RuntimeError);
}

} // namespace spikeforge::python
