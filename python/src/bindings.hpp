#pragma once
// The Python module's parts (docs/python.md): each binds one area of the public C++ API
// (include/spikeforge) and nothing below it.
#include <nanobind/nanobind.h>

namespace spikeforge {
class Model;
}

namespace spikeforge::python {

namespace nb = nanobind;

void bindErrors(nb::module_& m);        // errors.cpp: ModelError, BackendError, InternalError
void bindSnippets(nb::module_& m);      // snippets.cpp: models, initialisers, create_* functions
void bindCustomUpdates(nb::module_& m); // custom_update.cpp: models, references
void bindModel(nb::module_& m);         // model.cpp: Model and its populations
void bindSimulation(nb::module_& m);    // simulation.cpp: Simulation, numpy views
void bindCli(nb::module_& m);           // cli.cpp: python -m spikeforge, load_model
void bindTraining(nb::module_& m);      // training.cpp: Network, compilers, datasets, fit

// Model.add_custom_update (custom_update.cpp), added to the Model class bindModel makes.
void bindAddCustomUpdate(nb::class_<Model>& model);

} // namespace spikeforge::python
