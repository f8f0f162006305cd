"""spikeforge: spiking neural networks compiled for cpu, OpenCL and CUDA.

The model API follows PyGeNN's shape (docs/python.md): build a ``Model`` with
``add_neuron_population``, ``add_synapse_population`` and ``add_current_source``,
then run it in a ``Simulation``; variables are numpy arrays that view the
simulation's host memory without copying.

    import spikeforge as sf
    model = sf.Model("example", dt=0.1)
    model.add_neuron_population("Exc", 100, "LIF", {...}, {"V": -65.0, "RefracTime": 0.0})
    sim = sf.Simulation(model)
    sim.run(1000)
    sim.pull("Exc", "V")
    v = sim.view("Exc", "V")        # numpy, no copy
"""

from ._spikeforge import (  # noqa: F401  (the public names of the extension module)
    BackendError,
    CurrentSource,
    CurrentSourceModel,
    CustomConnectivityUpdate,
    CustomConnectivityUpdateModel,
    CustomUpdate,
    CustomUpdateModel,
    EGPReference,
    InternalError,
    Model,
    ModelError,
    NeuronGroup,
    NeuronModel,
    PostsynapticModel,
    Schedule,
    Simulation,
    SparseConnectInitSnippet,
    SynapseGroup,
    VarInit,
    VarInitSnippet,
    VarReference,
    WeightUpdateModel,
    available_backends,
    cli_main,
    load_model,
    block_sparse,
    create_current_source_model,
    create_custom_connectivity_update_model,
    create_custom_update_model,
    create_egp_ref,
    create_var_ref,
    create_wu_var_ref,
    custom_update_models,
    create_neuron_model,
    create_postsynaptic_model,
    create_sparse_connect_init_snippet,
    create_var_init_snippet,
    create_weight_update_model,
    current_source_models,
    init_postsynaptic,
    init_sparse_connectivity,
    init_toeplitz_connectivity,
    init_var,
    init_weight_update,
    neuron_models,
    postsynaptic_models,
    weight_update_models,
)

from . import ml, plot  # noqa: F401,E402  (training API; plots need matplotlib only when drawn)

try:  # only where the command line was built (toml++ and CLI11 found)
    from ._spikeforge import ConfigError  # noqa: F401
except ImportError:
    pass

__all__ = [name for name in dir() if not name.startswith("_")]
