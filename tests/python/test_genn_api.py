"""spikeforge.genn, PyGeNN 5's API: a PyGeNN-style script gives the spikes of the same network
built with the native API; groups, variables, extra global parameters and what is refused."""

import importlib.util
import pathlib

import numpy as np
import pytest

import spikeforge as sf
from spikeforge import genn

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "python" / "genn_style_balanced.py"


def _example():
    spec = importlib.util.spec_from_file_location("genn_style_balanced", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _native_balanced(ex, batch_size, steps, cache_dir):
    """The example's network with the native API, group for group."""
    model = sf.Model("genn_style_balanced", precision="float", dt=0.1, batch_size=batch_size)
    init = {"V": sf.init_var("Uniform", {"min": -60.0, "max": -50.0}), "RefracTime": 0.0}
    for name, size in (("E", ex.NUM_EXC), ("I", ex.NUM_INH)):
        model.add_neuron_population(name, size, "LIF", ex.LIF_PARAMS, init)
        model.neuron_population(name).spike_recording_enabled = True
    for name, weight, tau in (("EE", ex.EXC_WEIGHT, 5.0), ("EI", ex.EXC_WEIGHT, 5.0),
                              ("II", ex.INH_WEIGHT, 10.0), ("IE", ex.INH_WEIGHT, 10.0)):
        model.add_synapse_population(
            name, "sparse", name[0], name[1],
            sf.init_weight_update("StaticPulseConstantWeight", {"g": weight}),
            sf.init_postsynaptic("ExpCurr", {"tau": tau}),
            sf.init_sparse_connectivity("FixedProbability", {"prob": ex.PROB}))
    sim = sf.Simulation(model, backend="cpu", threads=1, cache_dir=cache_dir)
    sim.set_recording_window(steps)
    sim.run(steps)
    sim.pull_recording()
    return sim


@pytest.mark.parametrize("batch_size", [1, 3])
def test_a_pygenn_script_gives_the_native_apis_spikes(cache_dir, batch_size):
    ex = _example()
    steps = 600
    spikes, peak = ex.run("single_threaded_cpu", batch_size, steps)
    native = _native_balanced(ex, batch_size, steps, cache_dir)
    total = 0
    for name in ("E", "I"):
        times, ids, batch = native.spikes(name)
        assert len(spikes[name]) == batch_size
        for b, (genn_times, genn_ids) in enumerate(spikes[name]):
            np.testing.assert_array_equal(genn_times, times[batch == b])
            np.testing.assert_array_equal(genn_ids, ids[batch == b])
            total += len(genn_ids)
    assert total > 100, "the network must be active for the comparison to mean anything"
    # The custom update's peak: the largest V over the batch, per neuron, as the native V says.
    native.pull("E", "V")
    v = native.view("E", "V").reshape(batch_size, ex.NUM_EXC)
    assert peak.shape == (ex.NUM_EXC,)
    np.testing.assert_array_equal(peak, v.max(axis=0))


def _small_model(batch_size=1, **kwargs):
    model = genn.GeNNModel("double", "genn_small", **kwargs)
    model.dt = 1.0
    model.batch_size = batch_size
    counter = genn.create_neuron_model(
        "counter", params=["step"], vars=[("x", "scalar"), ("fixed", "scalar",
                                                             genn.VarAccess.READ_ONLY)],
        sim_code="x += step + shift[id];", extra_global_params=[("shift", "scalar*")])
    pop = model.add_neuron_population("Pop", 4, counter, {"step": 1.0},
                                      {"x": 0.0, "fixed": genn.init_var("Constant", {"constant": 2.0})})
    pop.set_param_dynamic("step")
    return model, pop


@pytest.mark.parametrize("batch_size", [1, 2])
def test_variables_egps_and_dynamic_parameters(cache_dir, batch_size):
    model, pop = _small_model(batch_size, cache_dir=cache_dir)
    pop.extra_global_params["shift"].set_init_values(np.array([0.0, 0.5, 1.0, 1.5]))
    model.build()
    model.load()
    assert model.timestep == 0 and model.t == 0.0
    for _ in range(3):
        model.step_time()
    assert model.timestep == 3 and model.t == pytest.approx(3.0)
    pop.vars["x"].pull_from_device()
    expected = 3.0 * (1.0 + np.array([0.0, 0.5, 1.0, 1.5]))
    x = pop.vars["x"].view
    assert x.shape == ((batch_size, 4) if batch_size > 1 else (4,))
    np.testing.assert_allclose(x.reshape(batch_size, 4), np.tile(expected, (batch_size, 1)))
    assert pop.vars["fixed"].view.shape == (4,)  # READ_ONLY: shared by the batch
    pop.set_dynamic_param_value("step", 10.0)
    pop.vars["x"].values = np.zeros_like(x)
    pop.vars["x"].push_to_device()
    model.step_time()
    pop.vars["x"].pull_from_device()
    np.testing.assert_allclose(pop.vars["x"].values.reshape(batch_size, 4),
                               np.tile(10.0 + np.array([0.0, 0.5, 1.0, 1.5]), (batch_size, 1)))


def test_sparse_values_follow_the_connectivity_order(cache_dir):
    model = genn.GeNNModel("float", "genn_sparse", cache_dir=cache_dir)
    pre = model.add_neuron_population("Pre", 6, "SpikeSourceArray", {},
                                      {"startSpike": 0, "endSpike": 0})
    post = model.add_neuron_population("Post", 5, "LIF",
                                       {"C": 1.0, "TauM": 20.0, "Vrest": -65.0, "Vreset": -65.0,
                                        "Vthresh": -50.0, "Ioffset": 0.0, "TauRefrac": 2.0},
                                       {"V": -65.0, "RefracTime": 0.0})
    syn = model.add_synapse_population(
        "S", genn.SynapseMatrixType.SPARSE, pre, post,
        genn.init_weight_update("StaticPulse", {}, {"g": genn.init_var("Uniform",
                                                                        {"min": 0.0, "max": 1.0})}),
        genn.init_postsynaptic("DeltaCurr"),
        genn.init_sparse_connectivity("FixedProbability", {"prob": 0.5}))
    model.build()
    model.load()
    syn.pull_connectivity_from_device()
    pre_inds, post_inds = syn.get_sparse_pre_inds(), syn.get_sparse_post_inds()
    syn.vars["g"].pull_from_device()
    g = syn.vars["g"].values
    assert g.dtype == np.float32 and g.shape == pre_inds.shape and len(g) > 0
    # GeNN's order: row by row (the native synapse list's order).
    assert (np.diff(pre_inds) >= 0).all()
    np.testing.assert_array_equal(
        g, model.native_simulation.synapse_values("S", "g").astype(np.float32))
    syn.vars["g"].values = np.arange(len(g), dtype=np.float32)
    np.testing.assert_array_equal(syn.vars["g"].values, np.arange(len(g), dtype=np.float32))


def test_what_spikeforge_lacks_is_refused_naming_the_alternative():
    with pytest.raises(NotImplementedError, match="BITMASK.*use SPARSE"):
        model = genn.GeNNModel("float", "refused")
        model.add_neuron_population("A", 2, "LIF", {}, {})
        model.add_synapse_population("S", "BITMASK", "A", "A",
                                     genn.init_weight_update("StaticPulse"),
                                     genn.init_postsynaptic("DeltaCurr"))
    with pytest.raises(NotImplementedError, match="psm_var_refs"):
        genn.create_weight_update_model("w", psm_var_refs=[("x", "scalar")])
    with pytest.raises(NotImplementedError, match="col_build_code.*use row_build_code"):
        genn.create_sparse_connect_init_snippet("c", col_build_code="addSynapse(id_post);")
    with pytest.raises(sf.ModelError, match="'v': extra global parameters are not supported"):
        genn.create_var_init_snippet("v", var_init_code="value = e[0];",
                                     extra_global_params=[("e", "scalar*")])
    with pytest.raises(ValueError, match="unknown backend 'gpu'.*single_threaded_cpu"):
        genn.GeNNModel("float", "bad", backend="gpu")
    with pytest.raises(RuntimeError, match="step_time needs build"):
        genn.GeNNModel("float", "unbuilt").step_time()
    unbuilt = genn.GeNNModel("float", "unbuilt")
    unbuilt.timestep = 0  # the value it has: nothing to do
    unbuilt.t = 0.0
    with pytest.raises(NotImplementedError, match="setting timestep.*reset"):
        unbuilt.timestep = 5


def test_enums_and_types_carry_spikeforges_names():
    assert genn.VarAccess.READ_ONLY_DUPLICATE.value == "ReadOnlyDuplicate"
    assert genn.CustomUpdateVarAccess.REDUCE_BATCH_MAX.value == "ReduceBatchMax"
    assert genn.VarAccessMode.BROADCAST.value == "Broadcast"
    assert genn.types.Float == "float" and genn.types.Uint32 == "uint32_t"
    m = genn.GeNNModel(genn.types.Double, "typed")
    assert m.precision == "double" and m.dt == 0.5


def test_genn_random_functions_draw_spikeforges_streams(cache_dir):
    # gennrand_uniform() is rand_uniform(): the same model spelled either way draws the same
    # numbers (a neuron model's stream depends on the group, not on the code's spelling).
    draws = []
    for spelling in ("gennrand_uniform", "rand_uniform"):
        model = genn.GeNNModel("double", "genn_rng", cache_dir=cache_dir)
        noisy = genn.create_neuron_model("noisy", vars=[("x", "scalar")],
                                         sim_code=f"x = {spelling}();")
        pop = model.add_neuron_population("Pop", 1000, noisy, {}, {"x": 0.0})
        model.build()
        model.load()
        model.step_time()
        pop.vars["x"].pull_from_device()
        draws.append(pop.vars["x"].values)
    np.testing.assert_array_equal(draws[0], draws[1])
    assert draws[0].min() > 0.0 and draws[0].max() <= 1.0
    assert abs(draws[0].mean() - 0.5) < 0.05  # 1000 uniform draws: standard error 0.009


@pytest.mark.parametrize("batch_size", [1, 5])
def test_user_written_initialisers_run_on_the_device(cache_dir, batch_size):
    # A variable initialiser with a parameter and a derived one, and a row-built connectivity.
    ramp = genn.create_var_init_snippet(
        "ramp", params=["scale"], derived_params=[("offset", lambda pars, dt: 2.0 * pars["scale"])],
        var_init_code="value = scale * id + offset + 1000.0 * batch + num_neurons;")
    every_other = genn.create_sparse_connect_init_snippet(
        "every_other", params=["stride"],
        row_build_code="for (unsigned int j = id_pre % 2u; j < num_post; j += (unsigned int)stride) {\n"
                       "    addSynapse(j);\n}",
        calc_max_row_len_func=lambda num_pre, num_post, pars: num_post // int(pars["stride"]) + 1)
    model = genn.GeNNModel("double", "genn_user_init", cache_dir=cache_dir)
    model.batch_size = batch_size
    lif = {"C": 1.0, "TauM": 20.0, "Vrest": -65.0, "Vreset": -65.0, "Vthresh": -50.0,
           "Ioffset": 0.0, "TauRefrac": 2.0}
    pre = model.add_neuron_population("Pre", 5, "LIF", lif,
                                      {"V": genn.init_var(ramp, {"scale": 0.5}),
                                       "RefracTime": 0.0})
    post = model.add_neuron_population("Post", 7, "LIF", lif, {"V": -65.0, "RefracTime": 0.0})
    syn = model.add_synapse_population(
        "S", "SPARSE", pre, post, genn.init_weight_update("StaticPulse", {}, {"g": 1.0}),
        genn.init_postsynaptic("DeltaCurr"),
        genn.init_sparse_connectivity(every_other, {"stride": 2.0}))
    model.build()
    model.load()
    pre.vars["V"].pull_from_device()
    v = pre.vars["V"].view.reshape(batch_size, 5)
    expected = 0.5 * np.arange(5) + 1.0 + 5.0
    np.testing.assert_array_equal(v, expected + 1000.0 * np.arange(batch_size)[:, None])
    pairs = set(zip(syn.get_sparse_pre_inds().tolist(), syn.get_sparse_post_inds().tolist()))
    assert pairs == {(i, j) for i in range(5) for j in range(i % 2, 7, 2)}


def test_a_custom_connectivity_update_prunes_on_the_device(cache_dir):
    prune = genn.create_custom_connectivity_update_model(
        "prune", params=["threshold"], var_refs=[("g", "scalar")],
        row_update_code="for_each_synapse {\n    if (g < threshold) {\n        remove_synapse();\n"
                        "    }\n}")
    model = genn.GeNNModel("float", "genn_prune", cache_dir=cache_dir)
    pop = model.add_neuron_population("Pop", 20, "LIF",
                                      {"C": 1.0, "TauM": 20.0, "Vrest": -65.0, "Vreset": -65.0,
                                       "Vthresh": -50.0, "Ioffset": 0.0, "TauRefrac": 2.0},
                                      {"V": -65.0, "RefracTime": 0.0})
    syn = model.add_synapse_population(
        "S", "SPARSE", pop, pop,
        genn.init_weight_update("StaticPulse", {}, {"g": genn.init_var("Uniform",
                                                                        {"min": 0.0, "max": 1.0})}),
        genn.init_postsynaptic("DeltaCurr"),
        genn.init_sparse_connectivity("FixedProbability", {"prob": 0.5}))
    model.add_custom_connectivity_update("Prune", "Structural", syn, prune, {"threshold": 0.5},
                                         var_refs={"g": genn.create_wu_var_ref(syn, "g")})
    with pytest.raises(NotImplementedError, match="host_update_code"):
        genn.create_custom_connectivity_update_model("host", host_update_code="pull();")
    model.build()
    model.load()
    syn.vars["g"].pull_from_device()
    before = list(zip(syn.get_sparse_pre_inds(), syn.get_sparse_post_inds(),
                      syn.vars["g"].values))
    model.custom_update("Structural")
    syn.vars["g"].pull_from_device()
    after = list(zip(syn.get_sparse_pre_inds(), syn.get_sparse_post_inds(),
                     syn.vars["g"].values))
    kept = [s for s in before if s[2] >= 0.5]
    assert 0 < len(kept) < len(before)
    assert sorted(after) == sorted(kept)


def test_batched_sparse_values_are_one_row_per_batch_element(cache_dir):
    # A per-synapse READ_WRITE variable of a batched model: values is (batch, synapses) in GeNN's
    # order, and writing it sets each batch element's copy.
    model = genn.GeNNModel("double", "genn_batched_sparse", cache_dir=cache_dir)
    model.batch_size = 3
    lif = {"C": 1.0, "TauM": 20.0, "Vrest": -65.0, "Vreset": -65.0, "Vthresh": -50.0,
           "Ioffset": 0.0, "TauRefrac": 2.0}
    pre = model.add_neuron_population("Pre", 5, "LIF", lif, {"V": -65.0, "RefracTime": 0.0})
    post = model.add_neuron_population("Post", 4, "LIF", lif, {"V": -65.0, "RefracTime": 0.0})
    plastic = genn.create_weight_update_model("plastic", vars=[("g", "scalar")],
                                              pre_spike_syn_code="addToPost(g);")
    syn = model.add_synapse_population(
        "S", "SPARSE", pre, post, genn.init_weight_update(plastic, {}, {"g": 0.25}),
        genn.init_postsynaptic("DeltaCurr"),
        genn.init_sparse_connectivity("FixedProbability", {"prob": 0.6}))
    shared = model.add_synapse_population(
        "Shared", "SPARSE", pre, post, genn.init_weight_update("StaticPulse", {}, {"g": 0.5}),
        genn.init_postsynaptic("DeltaCurr"),
        genn.init_sparse_connectivity("FixedProbability", {"prob": 0.6}))
    model.build()
    model.load()
    # StaticPulse's g is READ_ONLY, shared by the batch, as in GeNN: one row.
    shared.vars["g"].pull_from_device()
    assert shared.vars["g"].values.shape == (len(shared.get_sparse_pre_inds()),)
    n = len(syn.get_sparse_pre_inds())
    assert n > 0
    syn.vars["g"].pull_from_device()
    assert syn.vars["g"].values.shape == (3, n)
    assert (syn.vars["g"].values == 0.25).all()
    new = np.arange(3 * n, dtype=np.float64).reshape(3, n)
    syn.vars["g"].values = new
    syn.vars["g"].pull_from_device()
    np.testing.assert_array_equal(syn.vars["g"].values, new)


def test_neuron_variable_references_of_the_target_are_read_by_name(cache_dir):
    # GeNN 5 binds a conductance synapse's V with var_refs; spikeforge's code reads the target's
    # V by name, so a reference to the target's own V is accepted and gives the same spikes as
    # the model without it; anything else is refused naming the alternative.
    def run(with_refs):
        model = genn.GeNNModel("double", "genn_refs", cache_dir=cache_dir)
        model.dt = 0.1
        cond = genn.create_postsynaptic_model(
            "cond", params=["E"], neuron_var_refs=[("V", "scalar", genn.VarAccessMode.READ_ONLY)]
            if with_refs else None, sim_code="injectCurrent(inSyn * (E - V));\ninSyn *= 0.9;")
        drive = genn.create_current_source_model(
            "drive", params=["amp"], neuron_var_refs=[("V", "scalar")] if with_refs else None,
            injection_code="injectCurrent(V < -40.0 ? amp : 0.0);")
        lif = {"C": 1.0, "TauM": 20.0, "Vrest": -65.0, "Vreset": -65.0, "Vthresh": -50.0,
               "Ioffset": 0.0, "TauRefrac": 2.0}
        pre = model.add_neuron_population("Pre", 10, "LIF", lif, {"V": -65.0, "RefracTime": 0.0})
        post = model.add_neuron_population("Post", 10, "LIF", lif,
                                           {"V": -65.0, "RefracTime": 0.0})
        post.spike_recording_enabled = True
        model.add_current_source("Drive", drive, pre, {"amp": 2.0}, {},
                                 {"V": genn.create_var_ref(pre, "V")} if with_refs else None)
        model.add_synapse_population(
            "S", "DENSE", pre, post, genn.init_weight_update("StaticPulse", {}, {"g": 0.05}),
            genn.init_postsynaptic(cond, {"E": 0.0}, {},
                                   {"V": genn.create_var_ref(post, "V")} if with_refs else None))
        model.build()
        model.load(num_recording_timesteps=500)
        while model.timestep < 500:
            model.step_time()
        model.pull_recording_buffers_from_device()
        return post.spike_recording_data[0]
    with_refs, without = run(True), run(False)
    assert len(with_refs[1]) > 0
    np.testing.assert_array_equal(with_refs[0], without[0])
    np.testing.assert_array_equal(with_refs[1], without[1])

    model = genn.GeNNModel("float", "genn_bad_refs")
    a = model.add_neuron_population("A", 2, "LIF", {}, {})
    b = model.add_neuron_population("B", 2, "LIF", {}, {})
    with pytest.raises(NotImplementedError, match="reference 'V' to A.V.*B.V"):
        model.add_synapse_population(
            "S", "DENSE", a, b, genn.init_weight_update("StaticPulse", {}, {"g": 1.0}),
            genn.init_postsynaptic("ExpCond", {"tau": 5.0, "E": 0.0}, {},
                                   {"V": genn.create_var_ref(a, "V")}))
    with pytest.raises(NotImplementedError, match="ReadWrite neuron variable reference 'V'"):
        genn.create_postsynaptic_model("w", neuron_var_refs=[("V", "scalar",
                                                              genn.VarAccessMode.READ_WRITE)])
    with pytest.raises(ValueError, match="references are \\['V'\\], the references given \\[\\]"):
        genn.init_postsynaptic(genn.create_postsynaptic_model("c", neuron_var_refs=["V"]))


def test_kernel_timers_when_timing_is_enabled(cache_dir):
    model = genn.GeNNModel("float", "genn_timing", cache_dir=cache_dir)
    model.timing_enabled = True
    pop = model.add_neuron_population("Pop", 50, "LIF",
                                      {"C": 1.0, "TauM": 20.0, "Vrest": -49.0, "Vreset": -60.0,
                                       "Vthresh": -50.0, "Ioffset": 0.0, "TauRefrac": 2.0},
                                      {"V": -55.0, "RefracTime": 0.0})
    model.add_synapse_population("S", "DENSE", pop, pop,
                                 genn.init_weight_update("StaticPulse", {}, {"g": 0.01}),
                                 genn.init_postsynaptic("DeltaCurr"))
    scale = genn.create_custom_update_model("scale", var_refs=[("V", "scalar")],
                                            update_code="V *= 1.0;")
    model.add_custom_update("Scale", "Reset", scale, {}, {}, {"V": genn.create_var_ref(pop, "V")})
    model.build()
    model.load()
    for _ in range(200):
        model.step_time()
    assert model.get_custom_update_time("Reset") == 0.0  # not run yet
    model.custom_update("Reset")
    times = {"neuron": model.neuron_update_time, "pre": model.presynaptic_update_time,
             "init": model.init_time, "custom": model.get_custom_update_time("Reset")}
    assert all(t > 0.0 for t in times.values()), times
    launches = model.native_simulation.kernel_times()
    assert launches["neuron_update"][1] == 200 and launches["custom_update.Reset"][1] == 1
    with pytest.raises(NotImplementedError, match="init_sparse_time.*use init_time"):
        model.init_sparse_time
    untimed = genn.GeNNModel("float", "genn_untimed", cache_dir=cache_dir)
    untimed.add_neuron_population("Pop", 2, "LIF",
                                  {"C": 1.0, "TauM": 20.0, "Vrest": -49.0, "Vreset": -60.0,
                                   "Vthresh": -50.0, "Ioffset": 0.0, "TauRefrac": 2.0},
                                  {"V": -55.0, "RefracTime": 0.0})
    untimed.build()
    with pytest.raises(RuntimeError, match="set timing_enabled before build"):
        untimed.neuron_update_time


def test_bad_initialiser_arguments_are_model_errors_naming_the_snippet(cache_dir):
    def build(calc):
        rows = sf.create_sparse_connect_init_snippet("rows", row_build_code="addSynapse(0);",
                                                     calc_max_row_len_func=calc)
        model = sf.Model("bad_calc")
        model.add_neuron_population("A", 3, "LeakyIntegrate",
                                    {"C": 1.0, "TauM": 10.0, "Vrest": 0.0}, {"V": 0.0})
        model.add_synapse_population("S", "sparse", "A", "A",
                                     sf.init_weight_update("StaticPulse", {}, {"g": 1.0}),
                                     sf.init_postsynaptic("DeltaCurr"),
                                     sf.init_sparse_connectivity(rows))
        sf.Simulation(model, cache_dir=cache_dir)
    for bad in (-1, "x", 2.5, 2 ** 40):
        with pytest.raises(sf.ModelError, match="'rows': calc_max_row_len_func returned"):
            build(lambda num_pre, num_post, pars, bad=bad: bad)
    with pytest.raises(ZeroDivisionError):  # the function's own error reaches the caller
        build(lambda num_pre, num_post, pars: 1 // 0)
    with pytest.raises(sf.ModelError, match="must be callable"):
        sf.create_sparse_connect_init_snippet("rows", calc_max_row_len_func=3)
    with pytest.raises(sf.ModelError, match="init_var: the snippet must be a built-in's name"):
        sf.init_var(3.5)
