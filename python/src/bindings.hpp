#pragma once
// The Python module's parts (docs/python.md): each binds one area of the public C++ API
// (include/spikeforge) and nothing below it.
#include <nanobind/nanobind.h>

namespace spikeforge::python {

namespace nb = nanobind;

void bindErrors(nb::module_& m);     // errors.cpp: ModelError, BackendError, InternalError
void bindSnippets(nb::module_& m);   // snippets.cpp: models, initialisers, create_* functions
void bindModel(nb::module_& m);      // model.cpp: Model and its populations
void bindSimulation(nb::module_& m); // simulation.cpp: Simulation, numpy views
void bindCli(nb::module_& m);        // cli.cpp: python -m spikeforge, load_model

} // namespace spikeforge::python
