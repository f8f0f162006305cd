"""The groups of ``spikeforge.genn`` (PyGeNN's populations, current sources, custom updates)
and their variables and extra global parameters.

A group records what PyGeNN's group would hold until ``GeNNModel.build()`` adds it to the
native model (``_add_to``), so that properties PyGeNN sets after creation (spike recording,
delays, dynamic parameters) still shape the model; after ``build()`` its variables and extra
global parameters view the native simulation."""

import numpy as np

from . import _spikeforge as _sf


def unsupported(what, alternative):
    """Raises NotImplementedError for a PyGeNN feature spikeforge does not have."""
    raise NotImplementedError(f"spikeforge.genn: {what} is not supported; use {alternative} "
                              f"(docs/python.md, \"Coming from PyGeNN\")")


class Variable:
    """One variable of a group after ``build()``: PyGeNN's ``view`` (the host copy, no copy
    made), ``values`` (a copy; per synapse in GeNN's order for sparse connectivity),
    ``pull_from_device()`` and ``push_to_device()``."""

    def __init__(self, group, name, native_group=None, per_synapse=False):
        self.group = group
        self.name = name
        self._native_group = native_group or group.name
        self._per_synapse = per_synapse

    def _sim(self):
        return self.group._model._simulation(f"variable '{self.name}' of '{self.group.name}'")

    @property
    def view(self):
        return self._sim().view(self._native_group, self.name)

    # The current delay slot's values: spikeforge keeps past values apart (the variable's own
    # array is always the current one).
    current_view = view

    @property
    def values(self):
        if not self._per_synapse or self.group._layout == "dense":
            return np.array(self.view)
        sim = self._sim()
        batches = self.group._model.batch_size
        dtype = self.view.dtype
        if not self._batched():
            batches = 1
        rows = [sim.synapse_values(self._native_group, self.name, batch=b).astype(dtype)
                for b in range(batches)]
        return rows[0] if batches == 1 else np.stack(rows)

    @values.setter
    def values(self, values):
        if not self._per_synapse or self.group._layout == "dense":
            self.view[...] = values
            return
        sim = self._sim()
        values = np.asarray(values, dtype=np.float64)
        batches = self.group._model.batch_size if values.ndim == 2 else 1
        for b in range(batches):
            sim.set_synapse_values(self._native_group, self.name,
                                   np.ascontiguousarray(values[b] if values.ndim == 2 else values),
                                   batch=b)

    current_values = values

    def _batched(self):
        return self.view.ndim == 2

    def pull_from_device(self):
        self._sim().pull(self._native_group, self.name)

    def push_to_device(self):
        self._sim().push(self._native_group, self.name)


class ExtraGlobalParameter:
    """An extra global parameter: ``set_init_values`` before ``load()`` (or ``values`` after),
    then the kernels read it."""

    def __init__(self, group, name):
        self.group = group
        self.name = name
        self._values = None

    def set_init_values(self, values):
        self._values = np.ascontiguousarray(values, dtype=np.float64).ravel()
        if self.group._model._sim is not None:
            self._push()

    @property
    def values(self):
        return self._values

    @values.setter
    def values(self, values):
        self.set_init_values(values)

    @property
    def view(self):
        return self._values

    def push_to_device(self):
        self._push()

    def _push(self):
        if self._values is not None:
            self.group._model._simulation("extra global parameter").set_egp(
                self.group.name, self.name, self._values)


class _EGPs(dict):
    """A group's extra global parameters: known by name from ``build()`` on, and made on
    first use before it (PyGeNN sets them between adding the group and ``load()``); a name the
    group does not have is a ModelError when its values are sent."""

    def __init__(self, group):
        super().__init__()
        self._group = group

    def __missing__(self, name):
        egp = self[name] = ExtraGlobalParameter(self._group, name)
        return egp


class _Group:
    def __init__(self, model, name):
        self._model = model
        self.name = name
        self.vars = {}
        self.extra_global_params = _EGPs(self)
        self._dynamic = []

    def _make_vars(self, names, **kwargs):
        for name in names:
            self.vars[name] = Variable(self, name, **kwargs)

    def _make_egps(self, names):
        for name in names:
            self.extra_global_params.setdefault(name, ExtraGlobalParameter(self, name))

    def _load(self, sim):
        for egp in self.extra_global_params.values():
            egp._push()

    def set_dynamic_param_value(self, name, value):
        self._model._simulation("set_dynamic_param_value").set_dynamic_param(self.name, name,
                                                                             float(value))

    def set_param_dynamic(self, name, dynamic=True):
        if self._model._native is not None:
            raise RuntimeError(f"group '{self.name}': set_param_dynamic before build()")
        self._dynamic.append((name, dynamic))

    def pull_var_from_device(self, var_name):
        self.vars[var_name].pull_from_device()

    def push_var_to_device(self, var_name):
        self.vars[var_name].push_to_device()

    def get_var_values(self, var_name):
        return self.vars[var_name].values


class NeuronGroup(_Group):
    def __init__(self, model, name, num_neurons, neuron, params, vars):
        super().__init__(model, name)
        self.num_neurons = int(num_neurons)
        self._neuron = neuron
        self._params = dict(params or {})
        self._vars = dict(vars or {})
        self.spike_recording_enabled = False

    @property
    def size(self):
        return self.num_neurons

    def _add_to(self, native):
        g = native.add_neuron_population(self.name, self.num_neurons, self._neuron,
                                         self._params, self._vars)
        g.spike_recording_enabled = bool(self.spike_recording_enabled)
        for name, dynamic in self._dynamic:
            g.set_param_dynamic(name, dynamic)
        self._make_vars(g.var_names)
        self._make_egps(g.egp_names)

    @property
    def spike_recording_data(self):
        """[(times [ms], ids)] per batch element, from the last pull_recording_buffers."""
        times, ids, batch = self._model._simulation("spike_recording_data").spikes(self.name)
        return [(times[batch == b], ids[batch == b]) for b in range(self._model.batch_size)]


class SynapseGroup(_Group):
    def __init__(self, model, name, layout, source, target, weight_update, postsynaptic,
                 connectivity):
        super().__init__(model, name)
        self._layout = layout
        self.src = source
        self.trg = target
        self._wu = weight_update
        self._ps = postsynaptic
        self._connectivity = connectivity
        self.axonal_delay_steps = 0
        self.back_prop_delay_steps = 0
        self.max_dendritic_delay_timesteps = 1
        self.max_connections = None
        self.pre_vars = {}
        self.post_vars = {}
        self.psm_vars = {}
        self.psm_extra_global_params = _EGPs(self)
        self._ps_dynamic = []

    def _add_to(self, native):
        g = native.add_synapse_population(self.name, self._layout, self.src, self.trg, self._wu,
                                          self._ps, self._connectivity,
                                          delay_steps=int(self.axonal_delay_steps))
        if self.back_prop_delay_steps:
            g.back_prop_delay_steps = int(self.back_prop_delay_steps)
        if self.max_dendritic_delay_timesteps > 1:
            g.max_dendritic_delay_steps = int(self.max_dendritic_delay_timesteps)
        if self.max_connections is not None:
            g.max_connections = int(self.max_connections)
        for name, dynamic in self._dynamic:
            g.set_wu_param_dynamic(name, dynamic)
        for name, dynamic in self._ps_dynamic:
            g.set_ps_param_dynamic(name, dynamic)
        self._make_vars(g.wu_var_names, per_synapse=True)
        for registry, names in ((self.pre_vars, g.wu_pre_var_names),
                                (self.post_vars, g.wu_post_var_names),
                                (self.psm_vars, g.ps_var_names)):
            for name in names:
                registry[name] = Variable(self, name)
        self._make_egps(g.wu_egp_names)
        for name in g.ps_egp_names:
            self.psm_extra_global_params.setdefault(name, ExtraGlobalParameter(self, name))

    def _load(self, sim):
        super()._load(sim)
        for egp in self.psm_extra_global_params.values():
            egp._push()

    def set_psm_param_dynamic(self, name, dynamic=True):
        self._ps_dynamic.append((name, dynamic))

    def pull_connectivity_from_device(self):
        """get_sparse_pre_inds / get_sparse_post_inds read the device's connectivity each
        call, so there is nothing to pull ahead (build() must have run)."""
        self._model._simulation("pull_connectivity_from_device")

    def _pairs(self):
        return self._model._simulation("connectivity").synapses(self.name)

    def get_sparse_pre_inds(self):
        return self._pairs()[0]

    def get_sparse_post_inds(self):
        return self._pairs()[1]

    def set_sparse_connections(self, pre_indices, post_indices):
        unsupported("set_sparse_connections (connectivity given by the host)",
                    "a built-in connectivity initialiser, or a custom connectivity update")


class CurrentSource(_Group):
    def __init__(self, model, name, current_source_model, target, params, vars):
        super().__init__(model, name)
        self._cs = current_source_model
        self._target = target
        self._params = dict(params or {})
        self._vars = dict(vars or {})

    def _add_to(self, native):
        g = native.add_current_source(self.name, self._cs, self._target, self._params,
                                      self._vars)
        for name, dynamic in self._dynamic:
            g.set_param_dynamic(name, dynamic)
        self._make_vars(g.var_names)
        self._make_egps(g.egp_names)


class CustomUpdate(_Group):
    def __init__(self, model, name, group_name, custom_update_model, params, vars, var_refs,
                 egp_refs):
        super().__init__(model, name)
        self.update_group_name = group_name
        self._cu = custom_update_model
        self._params = dict(params or {})
        self._vars = dict(vars or {})
        self._var_refs = dict(var_refs or {})
        self._egp_refs = dict(egp_refs or {})

    def _add_to(self, native):
        g = native.add_custom_update(self.name, self.update_group_name, self._cu, self._params,
                                     self._vars, self._var_refs, self._egp_refs)
        for name, dynamic in self._dynamic:
            g.set_param_dynamic(name, dynamic)
        self._make_vars(g.var_names)


class CustomConnectivityUpdate(_Group):
    """A custom connectivity update over a SPARSE synapse population. Its own variables are
    not viewed through ``vars`` (read the synapse population's instead)."""

    def __init__(self, model, name, group_name, synapse_group, update_model, params, vars,
                 pre_vars, post_vars, var_refs, pre_var_refs, post_var_refs):
        super().__init__(model, name)
        self.update_group_name = group_name
        self._synapse_group = synapse_group
        self._cc = update_model
        self._params = dict(params or {})
        self._inits = (dict(vars or {}), dict(pre_vars or {}), dict(post_vars or {}))
        self._refs = (dict(var_refs or {}), dict(pre_var_refs or {}), dict(post_var_refs or {}))

    def _add_to(self, native):
        native.add_custom_connectivity_update(
            self.name, self.update_group_name, self._synapse_group, self._cc, self._params,
            *self._inits, *self._refs)
