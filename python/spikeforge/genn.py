"""PyGeNN 5's API over spikeforge: a PyGeNN script runs after changing only its imports.

    from spikeforge.genn import GeNNModel, init_var, init_weight_update, init_postsynaptic

    model = GeNNModel("float", "example", backend="single_threaded_cpu")
    model.dt = 0.1
    pop = model.add_neuron_population("Pop", 100, "LIF", {...}, {"V": -65.0, "RefracTime": 0.0})
    pop.spike_recording_enabled = True
    model.build()
    model.load(num_recording_timesteps=1000)
    while model.timestep < 1000:
        model.step_time()
    model.pull_recording_buffers_from_device()
    times, ids = pop.spike_recording_data[0]

A thin layer over the native API (``spikeforge.Model`` and ``spikeforge.Simulation``): the
model is described as in PyGeNN (groups whose properties may be set until ``build()``), and
``build()`` turns the description into a native model and compiles it. docs/python.md, "Coming
from PyGeNN", maps every PyGeNN name; what spikeforge does not support raises
``NotImplementedError`` naming what to use instead.
"""

import enum

from . import _spikeforge as _sf
from .genn_groups import (  # noqa: F401  (re-exported: PyGeNN's names)
    CurrentSource,
    CustomConnectivityUpdate,
    CustomUpdate,
    NeuronGroup,
    SynapseGroup,
    Variable,
    unsupported,
)


class VarAccess(enum.Enum):
    """Access modes of a model's variables (PyGeNN's VarAccess)."""
    READ_WRITE = "ReadWrite"
    READ_ONLY = "ReadOnly"
    READ_ONLY_DUPLICATE = "ReadOnlyDuplicate"
    READ_ONLY_SHARED_NEURON = "ReadOnlySharedNeuron"


class CustomUpdateVarAccess(enum.Enum):
    """Access modes of a custom update's own variables."""
    READ_WRITE = "ReadWrite"
    READ_ONLY = "ReadOnly"
    READ_ONLY_SHARED = "ReadOnlyShared"
    READ_ONLY_SHARED_NEURON = "ReadOnlySharedNeuron"
    REDUCE_BATCH_SUM = "ReduceBatchSum"
    REDUCE_BATCH_MAX = "ReduceBatchMax"
    REDUCE_NEURON_SUM = "ReduceNeuronSum"
    REDUCE_NEURON_MAX = "ReduceNeuronMax"


class VarAccessMode(enum.Enum):
    """How a custom update uses a variable it references."""
    READ_WRITE = "ReadWrite"
    READ_ONLY = "ReadOnly"
    BROADCAST = "Broadcast"
    REDUCE_SUM = "ReduceSum"
    REDUCE_MAX = "ReduceMax"


class SynapseMatrixType(enum.Enum):
    """Connectivity layouts; the value is spikeforge's, None where it has none."""
    DENSE = "dense"
    SPARSE = "sparse"
    PROCEDURAL = "procedural"
    TOEPLITZ = "toeplitz"
    BITMASK = None
    DENSE_PROCEDURALG = None
    PROCEDURAL_KERNELG = None


class VarLocation(enum.Enum):
    """Where PyGeNN keeps a variable. spikeforge keeps every variable on the device and makes
    a host copy the first time it is pulled, pushed or viewed, so every location behaves as
    HOST_DEVICE; setting one changes nothing."""
    DEVICE = 1
    HOST_DEVICE = 2
    HOST_DEVICE_ZERO_COPY = 3


class types:  # noqa: N801  (PyGeNN's module name)
    """PyGeNN's type names (``from pygenn import types``), as spikeforge spells them."""
    Float = "float"
    Double = "double"
    Bool = "bool"
    Int8 = "int8_t"
    Int16 = "int16_t"
    Int32 = "int32_t"
    Int64 = "int64_t"
    Uint8 = "uint8_t"
    Uint16 = "uint16_t"
    Uint32 = "uint32_t"
    Uint64 = "uint64_t"


# PyGeNN's backend names and the native backend and thread count each stands for.
_BACKENDS = {"single_threaded_cpu": ("cpu", 1), "cpu": ("cpu", 0), "opencl": ("opencl", 0),
             "cuda": ("cuda", 0)}


def _type_name(t):
    """A type given as a PyGeNN type or name: spikeforge's name, a pointer's element type for
    extra global parameters ("scalar*" is an array of scalar)."""
    name = str(t.value if isinstance(t, enum.Enum) else t).strip()
    return name[:-1].strip() if name.endswith("*") else name


def _access_name(access):
    return access.value if isinstance(access, enum.Enum) else str(access)


def _vars(decls, what):
    """PyGeNN's [(name, type[, access])] as the native [(name, type[, access])]."""
    out = []
    for d in decls or []:
        if isinstance(d, str):
            out.append(d)
            continue
        if len(d) not in (2, 3):
            raise ValueError(f"{what}: {d!r} is not (name, type) or (name, type, access)")
        item = (d[0], _type_name(d[1]))
        out.append(item + ((_access_name(d[2]),) if len(d) == 3 else ()))
    return out


def _params(decls):
    """PyGeNN's parameters: names or (name, type). spikeforge's parameters are scalars."""
    return [d if isinstance(d, str) else d[0] for d in decls or []]


def _egps(decls):
    return [(d, "scalar") if isinstance(d, str) else (d[0], _type_name(d[1]))
            for d in decls or []]


def _refuse(argument, value, alternative):
    if value:
        unsupported(argument, alternative)


_TARGET_VARS = "the target neuron's variables, which spikeforge's code reads by name (V)"


def _neuron_var_ref_names(decls, what):
    """The names of a model's neuron_var_refs. spikeforge's postsynaptic and current-source
    code reads the target neuron's variables by name, read-only, so a read-only reference
    bound to the target's variable of the same name needs nothing more (checked when the group
    is added); other kinds are refused."""
    names = []
    for d in decls or []:
        name = d if isinstance(d, str) else d[0]
        access = _access_name(d[2]) if not isinstance(d, str) and len(d) == 3 else "ReadOnly"
        if access != "ReadOnly":
            unsupported(f"{what}: the {access} neuron variable reference '{name}'",
                        "a read-only reference; spikeforge's code reads " + _TARGET_VARS)
        names.append(name)
    return names


def _check_target_refs(owner, refs, target):
    """A group's neuron variable references must name the target's variable of the same name
    (what the code reads when it says that name)."""
    for name, ref in (refs or {}).items():
        if ref.group != target or ref.var != name:
            unsupported(f"'{owner}': the reference '{name}' to {ref.group}.{ref.var}",
                        f"a reference to the target's own '{name}' ({target}.{name}); "
                        "spikeforge's code reads " + _TARGET_VARS)


class _WithTargetRefs:
    """An initialiser or model with the neuron variable references PyGeNN gives it."""

    def __init__(self, native, ref_names=(), refs=None):
        self.native = native
        self.ref_names = list(ref_names)
        self.refs = dict(refs or {})


def _bind_refs(owner, model, refs):
    """The references given for a model's neuron_var_refs: every declared one, nothing else."""
    declared = set(model.ref_names) if isinstance(model, _WithTargetRefs) else None
    if declared is not None and declared != set(refs or {}):
        raise ValueError(f"'{owner}': the model's neuron variable references are "
                         f"{sorted(declared)}, the references given {sorted(refs or {})}")
    return refs


def create_neuron_model(class_name, params=None, vars=None, derived_params=None,
                        sim_code=None, threshold_condition_code=None, reset_code=None,
                        extra_global_params=None, additional_input_vars=None,
                        auto_refractory_required=False):
    _refuse("additional_input_vars", additional_input_vars,
            "a variable of the neuron model that a weight update adds to")
    _refuse("auto_refractory_required", auto_refractory_required,
            "a refractory test in threshold_condition_code")
    return _sf.create_neuron_model(
        class_name, params=_params(params), vars=_vars(vars, class_name),
        sim_code=sim_code or "", threshold_condition_code=threshold_condition_code or "",
        reset_code=reset_code or "", derived_params=derived_params or [],
        extra_global_params=_egps(extra_global_params))


def create_weight_update_model(class_name, params=None, vars=None, pre_vars=None,
                               post_vars=None, pre_neuron_var_refs=None,
                               post_neuron_var_refs=None, psm_var_refs=None,
                               derived_params=None, pre_spike_syn_code=None,
                               pre_event_syn_code=None, post_event_syn_code=None,
                               post_spike_syn_code=None, synapse_dynamics_code=None,
                               pre_event_threshold_condition_code=None,
                               post_event_threshold_condition_code=None, pre_spike_code=None,
                               post_spike_code=None, pre_dynamics_code=None,
                               post_dynamics_code=None, extra_global_params=None):
    _refuse("pre_neuron_var_refs", pre_neuron_var_refs, "V_pre (the source's variables by name)")
    _refuse("post_neuron_var_refs", post_neuron_var_refs,
            "V_post (the target's variables by name)")
    _refuse("psm_var_refs", psm_var_refs, "a postsynaptic-model variable read in its own code")
    return _sf.create_weight_update_model(
        class_name, params=_params(params), vars=_vars(vars, class_name),
        pre_vars=_vars(pre_vars, class_name), post_vars=_vars(post_vars, class_name),
        pre_spike_syn_code=pre_spike_syn_code or "",
        post_spike_syn_code=post_spike_syn_code or "", pre_spike_code=pre_spike_code or "",
        post_spike_code=post_spike_code or "", pre_dynamics_code=pre_dynamics_code or "",
        post_dynamics_code=post_dynamics_code or "", derived_params=derived_params or [],
        extra_global_params=_egps(extra_global_params),
        synapse_dynamics_code=synapse_dynamics_code or "",
        pre_event_threshold_condition_code=pre_event_threshold_condition_code or "",
        pre_event_syn_code=pre_event_syn_code or "",
        post_event_threshold_condition_code=post_event_threshold_condition_code or "",
        post_event_syn_code=post_event_syn_code or "")


def create_postsynaptic_model(class_name, params=None, vars=None, neuron_var_refs=None,
                              derived_params=None, sim_code=None, extra_global_params=None):
    names = _neuron_var_ref_names(neuron_var_refs, class_name)
    return _WithTargetRefs(_sf.create_postsynaptic_model(
        class_name, params=_params(params), vars=_vars(vars, class_name),
        sim_code=sim_code or "", derived_params=derived_params or [],
        extra_global_params=_egps(extra_global_params)), names)


def create_current_source_model(class_name, params=None, vars=None, neuron_var_refs=None,
                                derived_params=None, injection_code=None,
                                extra_global_params=None):
    names = _neuron_var_ref_names(neuron_var_refs, class_name)
    return _WithTargetRefs(_sf.create_current_source_model(
        class_name, params=_params(params), vars=_vars(vars, class_name),
        injection_code=injection_code or "", derived_params=derived_params or [],
        extra_global_params=_egps(extra_global_params)), names)


def _native_model(model):
    return model.native if isinstance(model, _WithTargetRefs) else model


def create_custom_update_model(class_name, params=None, vars=None, derived_params=None,
                               var_refs=None, update_code=None, extra_global_params=None,
                               extra_global_param_refs=None):
    return _sf.create_custom_update_model(
        class_name, params=_params(params), vars=_vars(vars, class_name),
        var_refs=_vars(var_refs, class_name), update_code=update_code or "",
        derived_params=derived_params or [], extra_global_params=_egps(extra_global_params),
        extra_global_param_refs=_egps(extra_global_param_refs))


def create_custom_connectivity_update_model(class_name, params=None, vars=None, pre_vars=None,
                                            post_vars=None, derived_params=None, var_refs=None,
                                            pre_var_refs=None, post_var_refs=None,
                                            row_update_code=None, host_update_code=None,
                                            extra_global_params=None,
                                            extra_global_param_refs=None):
    """Structural plasticity: row_update_code walks a row with ``for_each_synapse``, removes
    with ``remove_synapse()`` and adds with ``add_synapse(j, …)``, on the device."""
    _refuse("host_update_code", host_update_code,
            "row_update_code, or column code (spikeforge.create_custom_connectivity_update_model"
            "(column_update_code=…)), which run on the device")
    _refuse("extra_global_param_refs", extra_global_param_refs,
            "extra_global_params of the update itself")
    return _sf.create_custom_connectivity_update_model(
        class_name, params=_params(params), vars=_vars(vars, class_name),
        pre_vars=_vars(pre_vars, class_name), post_vars=_vars(post_vars, class_name),
        var_refs=_vars(var_refs, class_name), pre_var_refs=_vars(pre_var_refs, class_name),
        post_var_refs=_vars(post_var_refs, class_name), row_update_code=row_update_code or "",
        derived_params=derived_params or [], extra_global_params=_egps(extra_global_params))


def create_var_init_snippet(class_name, params=None, derived_params=None, var_init_code=None,
                            extra_global_params=None):
    """A variable initialiser: var_init_code assigns ``value`` (GeNN 5's names: ``id``,
    ``num_neurons``, ``id_pre``, ``id_post``, ``gennrand_*``)."""
    return _sf.create_var_init_snippet(
        class_name, params=_params(params), var_init_code=var_init_code or "",
        derived_params=derived_params or [], extra_global_params=_egps(extra_global_params))


def create_sparse_connect_init_snippet(class_name, params=None, derived_params=None,
                                       row_build_code=None, col_build_code=None,
                                       calc_max_row_len_func=None, calc_max_col_len_func=None,
                                       calc_kernel_size_func=None, extra_global_params=None):
    """A connectivity initialiser built row by row: row_build_code calls ``addSynapse(j)``.
    ``calc_max_col_len_func`` is not needed (spikeforge sizes the columns from the rows)."""
    _refuse("col_build_code", col_build_code, "row_build_code (connectivity is built by rows)")
    _refuse("calc_kernel_size_func", calc_kernel_size_func,
            "a TOEPLITZ group for shared kernels, or per-synapse variables")
    return _sf.create_sparse_connect_init_snippet(
        class_name, params=_params(params), row_build_code=row_build_code or "",
        derived_params=derived_params or [], calc_max_row_len_func=calc_max_row_len_func,
        extra_global_params=_egps(extra_global_params))


def create_toeplitz_connect_init_snippet(class_name, **kwargs):
    unsupported("create_toeplitz_connect_init_snippet",
                "a built-in Toeplitz initialiser (init_toeplitz_connectivity(\"Conv2D\", …))")


def init_var(snippet, params=None):
    """A variable initialiser: a built-in's name with its parameters."""
    return _sf.init_var(snippet, params or {})


def init_sparse_connectivity(snippet, params=None):
    return _sf.init_sparse_connectivity(snippet, params or {})


def init_toeplitz_connectivity(snippet, params=None):
    return _sf.init_toeplitz_connectivity(snippet, params or {})


def init_weight_update(snippet, params=None, vars=None, pre_vars=None, post_vars=None,
                       pre_var_refs=None, post_var_refs=None, psm_var_refs=None):
    _refuse("pre_var_refs", pre_var_refs, "V_pre (the source's variables by name)")
    _refuse("post_var_refs", post_var_refs, "V_post (the target's variables by name)")
    _refuse("psm_var_refs", psm_var_refs, "a postsynaptic-model variable read in its own code")
    return _sf.init_weight_update(snippet, params or {}, vars or {}, pre_vars or {},
                                  post_vars or {})


def init_postsynaptic(snippet, params=None, vars=None, var_refs=None):
    """A postsynaptic model with its values; ``var_refs`` (GeNN 5's references to the target's
    variables, e.g. ExpCond's V) must name the target's variables of the same names."""
    native = _sf.init_postsynaptic(_native_model(snippet), params or {}, vars or {})
    name = snippet if isinstance(snippet, str) else "postsynaptic model"
    return _WithTargetRefs(native, refs=_bind_refs(name, snippet, var_refs))


def _name(group):
    return group if isinstance(group, str) else group.name


def create_var_ref(group, var_name):
    """A reference to a per-neuron variable: of a population, a current source, a custom
    update, or a synapse population's postsynaptic or presynaptic/postsynaptic variables."""
    return _sf.create_var_ref(_name(group), var_name)


create_psm_var_ref = create_var_ref
create_wu_pre_var_ref = create_var_ref
create_wu_post_var_ref = create_var_ref


def create_wu_var_ref(group, var_name, transpose_group=None, transpose_var_name=None):
    return _sf.create_wu_var_ref(
        _name(group), var_name,
        None if transpose_group is None else _name(transpose_group), transpose_var_name or "")


def create_egp_ref(group, egp_name):
    return _sf.create_egp_ref(_name(group), egp_name)


def create_out_post_var_ref(group):
    """The input a synapse population accumulates for its targets (GeNN's outPost)."""
    return _sf.create_var_ref(_name(group), "inSyn")


def create_den_delay_var_ref(group):
    return _sf.create_var_ref(_name(group), "denDelay")


def create_spike_time_var_ref(group):
    return _sf.create_var_ref(_name(group), "st")


def create_prev_spike_time_var_ref(group):
    return _sf.create_var_ref(_name(group), "prev_st")


class GeNNModel:
    """A model as PyGeNN builds it: populations first, then ``build()``, ``load()`` and
    ``step_time()``. ``backend``: "single_threaded_cpu" (cpu, one thread), "cpu" (every
    thread), "opencl" or "cuda"; ``preference_kwargs`` go to ``spikeforge.Simulation``
    (``cache_dir``, ``fast_math``, ``device``, ``threads``)."""

    def __init__(self, precision="float", model_name="GeNNModel", backend=None,
                 time_precision=None, **preference_kwargs):
        self.precision = _type_name(precision)
        if self.precision not in ("float", "double"):
            raise ValueError(f"GeNNModel '{model_name}': precision must be float or double, "
                             f"not {precision!r}")
        if time_precision is not None and _type_name(time_precision) != self.precision:
            unsupported("a time_precision other than the model's precision",
                        "precision=\"double\" for the whole model")
        self.name = model_name
        backend = backend or "single_threaded_cpu"
        if backend not in _BACKENDS:
            raise ValueError(f"GeNNModel '{model_name}': unknown backend {backend!r} "
                             f"(one of {', '.join(_BACKENDS)})")
        self.backend_name = backend
        self._preferences = dict(preference_kwargs)
        self._native = None
        self._sim = None
        self.timing_enabled = False  # kernel timers (Simulation(kernel_timing=True))
        self.dt = 0.5  # [ms] GeNN's default
        self.batch_size = 1
        self.seed = 1234  # GeNN's 0 draws a seed; spikeforge's runs repeat unless it is set
        self.neuron_populations = {}
        self.synapse_populations = {}
        self.current_sources = {}
        self.custom_updates = {}
        self.custom_connectivity_updates = {}
        self._groups = []  # in the order they were added

    # ---- description ----
    def _add(self, registry, group):
        if self._native is not None:
            raise RuntimeError(f"model '{self.name}' is built: add groups before build()")
        if any(group.name == g.name for g in self._groups):
            raise ValueError(f"model '{self.name}' already has a group '{group.name}'")
        registry[group.name] = group
        self._groups.append(group)
        return group

    def add_neuron_population(self, pop_name, num_neurons, neuron, params=None, vars=None):
        return self._add(self.neuron_populations,
                         NeuronGroup(self, pop_name, num_neurons, neuron, params, vars))

    def add_synapse_population(self, pop_name, matrix_type, source, target, weight_update_init,
                               postsynaptic_init, connectivity_init=None):
        layout = _layout(pop_name, matrix_type)
        if isinstance(postsynaptic_init, _WithTargetRefs):
            _check_target_refs(pop_name, postsynaptic_init.refs, _name(target))
            postsynaptic_init = postsynaptic_init.native
        return self._add(self.synapse_populations,
                         SynapseGroup(self, pop_name, layout, _name(source), _name(target),
                                      weight_update_init, postsynaptic_init, connectivity_init))

    def add_current_source(self, cs_name, current_source_model, pop, params=None, vars=None,
                           var_refs=None):
        _check_target_refs(cs_name, _bind_refs(cs_name, current_source_model, var_refs),
                           _name(pop))
        return self._add(self.current_sources,
                         CurrentSource(self, cs_name, _native_model(current_source_model),
                                       _name(pop), params, vars))

    def add_custom_update(self, cu_name, group_name, custom_update_model, params=None,
                          vars=None, var_refs=None, egp_refs=None):
        return self._add(self.custom_updates,
                         CustomUpdate(self, cu_name, group_name, custom_update_model, params,
                                      vars, var_refs, egp_refs))

    def add_custom_connectivity_update(self, cu_name, group_name, syn_group,
                                       custom_conn_update_model, params=None, vars=None,
                                       pre_vars=None, post_vars=None, var_refs=None,
                                       pre_var_refs=None, post_var_refs=None, egp_refs=None):
        _refuse("egp_refs", egp_refs, "extra_global_params of the update itself")
        return self._add(self.custom_connectivity_updates,
                         CustomConnectivityUpdate(self, cu_name, group_name, _name(syn_group),
                                                  custom_conn_update_model, params, vars,
                                                  pre_vars, post_vars, var_refs, pre_var_refs,
                                                  post_var_refs))

    # ---- life cycle ----
    def build(self, path_to_model="./", force_rebuild=False):
        """Builds the native model and compiles it (an unchanged model comes from the cache)."""
        native = _sf.Model(self.name, precision=self.precision, dt=self.dt,
                           batch_size=self.batch_size, seed=self.seed)
        for group in self._groups:
            group._add_to(native)
        backend, threads = _BACKENDS[self.backend_name]
        prefs = dict(self._preferences)
        prefs.setdefault("threads", threads)
        prefs.setdefault("kernel_timing", bool(self.timing_enabled))
        self._sim = _sf.Simulation(native, backend=backend, **prefs)
        self._native = native

    def load(self, num_recording_timesteps=None):
        """Sets the recording window and the extra global parameters' initial values."""
        sim = self._simulation("load")
        if num_recording_timesteps:
            sim.set_recording_window(int(num_recording_timesteps))
        for group in self._groups:
            group._load(sim)

    def unload(self):
        self._sim = None
        self._native = None

    def _simulation(self, what):
        if self._sim is None:
            raise RuntimeError(f"model '{self.name}': {what} needs build() first")
        return self._sim

    # ---- running ----
    def step_time(self):
        self._simulation("step_time").step()

    def custom_update(self, name):
        self._simulation("custom_update").custom_update(name)

    def pull_recording_buffers_from_device(self):
        self._simulation("pull_recording_buffers_from_device").pull_recording()

    @property
    def t(self):
        return self._sim.t if self._sim is not None else 0.0

    @t.setter
    def t(self, value):
        if value != self.t:
            unsupported("setting t", "Simulation.reset() (time and state to the start)")

    @property
    def timestep(self):
        return self._sim.timestep if self._sim is not None else 0

    @timestep.setter
    def timestep(self, value):
        if value != self.timestep:
            unsupported("setting timestep", "Simulation.reset() (time and state to the start)")

    @property
    def batch_size(self):
        return self._batch_size

    @batch_size.setter
    def batch_size(self, value):
        if self._native is not None:
            raise RuntimeError(f"model '{self.name}' is built: set batch_size before build()")
        self._batch_size = int(value)

    # ---- timing (timing_enabled before build) [s] ----
    def _kernel_time(self, kernel):
        sim = self._simulation("timing")
        if not self.timing_enabled:
            raise RuntimeError(f"model '{self.name}': set timing_enabled before build()")
        return sim.kernel_times().get(kernel, (0.0, 0))[0]

    @property
    def neuron_update_time(self):
        return self._kernel_time("neuron_update")

    @property
    def presynaptic_update_time(self):
        return self._kernel_time("presynaptic_update")

    @property
    def postsynaptic_update_time(self):
        return self._kernel_time("postsynaptic_update")

    @property
    def synapse_dynamics_time(self):
        return self._kernel_time("synapse_dynamics")

    @property
    def init_time(self):
        """The whole initialisation, connectivity included (one kernel in spikeforge)."""
        return self._kernel_time("initialise")

    @property
    def init_sparse_time(self):
        unsupported("init_sparse_time (spikeforge initialises in one kernel)", "init_time")

    def get_custom_update_time(self, name):
        return self._kernel_time("custom_update." + name)

    @property
    def native_simulation(self):
        """The ``spikeforge.Simulation`` behind the model (after build), for the native API."""
        return self._sim


def _layout(pop_name, matrix_type):
    """A PyGeNN matrix type (enum or name, "DENSE_INDIVIDUALG" etc. included) as spikeforge's."""
    name = matrix_type.name if isinstance(matrix_type, SynapseMatrixType) else str(matrix_type)
    name = name.upper()
    for suffix in ("_INDIVIDUALG", "_GLOBALG"):
        name = name[:-len(suffix)] if name.endswith(suffix) else name
    try:
        layout = SynapseMatrixType[name].value
    except KeyError:
        raise ValueError(f"synapse population '{pop_name}': unknown matrix type {matrix_type!r} "
                         f"(one of {', '.join(t.name for t in SynapseMatrixType)})") from None
    if layout is None:
        unsupported(f"matrix type {name}", "SPARSE (or DENSE, or PROCEDURAL for connectivity "
                    "generated on the fly)")
    return layout


__all__ = [name for name in dir() if not name.startswith("_") and name != "enum"]
