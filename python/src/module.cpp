// The extension module `spikeforge._spikeforge`; the package `spikeforge` (python/spikeforge)
// re-exports it with PyGeNN-shaped helpers.
#include "bindings.hpp"

NB_MODULE(_spikeforge, m) {
    m.doc() = "spikeforge: spiking neural networks compiled for cpu, OpenCL and CUDA";
    spikeforge::python::bindErrors(m);
    spikeforge::python::bindSnippets(m);
    spikeforge::python::bindCustomUpdates(m);
    spikeforge::python::bindModel(m);
    spikeforge::python::bindSimulation(m);
    spikeforge::python::bindCli(m);
    spikeforge::python::bindTraining(m);
}
