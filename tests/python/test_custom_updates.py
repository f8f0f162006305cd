"""Custom updates and schedules from Python, and views shared with DLPack consumers."""

import numpy as np
import pytest

import spikeforge as sf

BATCH = 3
N = 6


def _model():
    model = sf.Model("cu", batch_size=BATCH, seed=7)
    pop = model.add_neuron_population("N", N, "LeakyIntegrate",
                                      {"C": 1.0, "TauM": 10.0, "Vrest": 0.0}, {"V": 0.0})
    sum_model = sf.create_custom_update_model(
        "SumV", vars=[("total", "scalar", "ReduceNeuronSum")],
        var_refs=[("v", "scalar", "ReadOnly")], update_code="total = v;")
    model.add_custom_update("Sum", "Reduce", sum_model, vars={"total": 0.0},
                            var_refs={"v": sf.create_var_ref(pop, "V")})
    model.add_neuron_population("Pre", 4, "Poisson", {"rate": 0.0}, {"timeStepToSpike": 0.0})
    model.add_synapse_population("S", "dense", "Pre", "N",
                                 sf.init_weight_update("StaticPulse", {}, {"g": 0.5}),
                                 sf.init_postsynaptic("DeltaCurr"))
    scale = sf.create_custom_update_model(
        "Scale", params=["factor"], var_refs=[("g", "scalar", "ReadWrite")],
        update_code="g *= factor;")
    model.add_custom_update("ScaleG", "Scale", scale, {"factor": 3.0},
                            var_refs={"g": sf.create_wu_var_ref("S", "g")})
    return model


def test_a_neuron_reduction_sums_each_batch_element(cache_dir):
    sim = sf.Simulation(_model(), cache_dir=cache_dir)
    v = sim.view("N", "V")
    v[:] = np.arange(BATCH * N, dtype=np.float32).reshape(BATCH, N)
    sim.push("N", "V")
    sim.custom_update("Reduce")
    sim.pull("Sum", "total")
    np.testing.assert_allclose(sim.view("Sum", "total").reshape(BATCH), v.sum(axis=1),
                               rtol=1e-6)


def test_a_wu_shaped_update_scales_every_weight(cache_dir):
    model = _model()
    assert model.synapse_population("S").name == "S"
    sim = sf.Simulation(model, cache_dir=cache_dir)
    sim.custom_update("Scale")
    np.testing.assert_allclose(sim.synapse_matrix("S", "g"), np.full((4, N), 1.5), rtol=1e-6)


def test_a_schedule_equals_the_host_calls_it_stands_for(cache_dir):
    a = sf.Simulation(_model(), cache_dir=cache_dir)
    b = sf.Simulation(_model(), cache_dir=cache_dir)
    for sim in (a, b):
        sim.view("N", "V")[:] = 5.0
        sim.push("N", "V")
    schedule = sf.Schedule().steps(7).custom_update("Reduce").steps(3)
    assert len(schedule) == 3
    a.run(schedule, repeats=2)
    for _ in range(2):
        b.run(7)
        b.custom_update("Reduce")
        b.run(3)
    assert a.timestep == b.timestep == 20
    for sim in (a, b):
        sim.pull("Sum", "total")
        sim.pull("N", "V")
    np.testing.assert_array_equal(a.view("Sum", "total"), b.view("Sum", "total"))
    np.testing.assert_array_equal(a.view("N", "V"), b.view("N", "V"))
    with pytest.raises(sf.ModelError, match="Nope"):
        a.run(sf.Schedule().custom_update("Nope"))


def _broadcast_model(update_code, own_vars=()):
    model = sf.Model("broadcast", batch_size=BATCH, precision="double")
    always = sf.create_neuron_model("Always", threshold_condition_code="true")
    acc = sf.create_neuron_model("Acc", vars=["acc"], sim_code="acc += Isyn;")
    keep = sf.create_postsynaptic_model("Keep", sim_code="injectCurrent(0.0);")
    model.add_neuron_population("Pre", 1, always)
    model.add_neuron_population("Post", N, acc, {}, {"acc": 0.0})
    model.add_synapse_population("S", "dense", "Pre", "Post",
                                 sf.init_weight_update("StaticPulse", {}, {"g": 0.5}),
                                 sf.init_postsynaptic(keep))
    reset = sf.create_custom_update_model(
        "Reset", vars=list(own_vars), var_refs=[("x", "scalar", "Broadcast")],
        update_code=update_code)
    model.add_custom_update("ResetIn", "Reset", reset, vars={v: 0.0 for v in own_vars},
                            var_refs={"x": sf.create_var_ref("S", "inSyn")})
    return model


def test_a_broadcast_reference_resets_every_batch_copy_of_insyn(cache_dir):
    # GeNN's BROADCAST: write-only; the unbatched update sets every batch element's inSyn.
    sim = sf.Simulation(_broadcast_model("x = 0.0;"), cache_dir=cache_dir)
    sim.run(3)  # spikes of steps 0 and 1 arrive in steps 1 and 2: inSyn = 2 x 0.5
    sim.pull("S", "inSyn")
    assert sim.view("S", "inSyn").shape == (BATCH, N)
    assert (sim.view("S", "inSyn") == 1.0).all()
    sim.custom_update("Reset")
    sim.pull("S", "inSyn")
    assert (sim.view("S", "inSyn") == 0.0).all()
    with pytest.raises(sf.ModelError, match="'x' is write-only"):
        sf.Simulation(_broadcast_model("y = x;", own_vars=("y",)), cache_dir=cache_dir)


def test_custom_update_mistakes_are_model_errors():
    with pytest.raises(sf.ModelError, match="unknown access 'Sum'"):
        sf.create_custom_update_model("Bad", vars=[("x", "scalar", "Sum")])
    with pytest.raises(sf.ModelError, match="unknown custom update model 'Adamm'"):
        sf.Model("m").add_custom_update("A", "G", "Adamm")
    model = sf.Model("m")
    pop = model.add_neuron_population("N", 2, "LeakyIntegrate",
                                      {"C": 1.0, "TauM": 10.0, "Vrest": 0.0}, {"V": 0.0})
    model.add_neuron_population("Pre", 2, "Poisson", {"rate": 0.0}, {"timeStepToSpike": 0.0})
    model.add_synapse_population("S", "dense", "Pre", pop,
                                 sf.init_weight_update("StaticPulse", {}, {"g": 0.5}),
                                 sf.init_postsynaptic("DeltaCurr"))
    mixed = sf.create_custom_update_model("Mixed", var_refs=["a", "b"], update_code="a = b;")
    with pytest.raises(sf.ModelError, match="references mix"):
        model.add_custom_update("M", "G", mixed, var_refs={
            "a": sf.create_var_ref(pop, "V"), "b": sf.create_wu_var_ref("S", "g")})
    assert "Adam" in sf.custom_update_models()


def test_views_are_shared_through_dlpack(cache_dir):
    sim = sf.Simulation(_model(), cache_dir=cache_dir)
    v = sim.view("N", "V")
    shared = np.from_dlpack(v)
    assert np.shares_memory(shared, v)
    shared[0, 0] = 42.0
    sim.push("N", "V")
    sim.view("N", "V")[0, 0] = 0.0
    sim.pull("N", "V")
    assert v[0, 0] == 42.0


def test_a_connectivity_update_removes_and_adds_synapses(cache_dir):
    """Rows lose the synapses whose weight is below 1 and gain one onto target 0 with weight 7;
    the host reads the new rows through synapses() and synapse_values() (no stale view)."""
    model = sf.Model("ccu", seed=3)
    model.add_neuron_population("Pre", 4, "Poisson", {"rate": 0.0}, {"timeStepToSpike": 0.0})
    model.add_neuron_population("Post", 5, "LeakyIntegrate",
                                {"C": 1.0, "TauM": 10.0, "Vrest": 0.0}, {"V": 0.0})
    model.add_synapse_population(
        "S", "sparse", "Pre", "Post",
        sf.init_weight_update("StaticPulse", {}, {"g": 0.5}),
        sf.init_postsynaptic("DeltaCurr"),
        sf.init_sparse_connectivity("FixedProbability", {"prob": 0.6}))
    prune = sf.create_custom_connectivity_update_model(
        "PruneGrow", params=["cutoff"], vars=[("age", "scalar")], pre_vars=["grown"],
        var_refs=[("g", "scalar", "ReadWrite")],
        row_update_code="for_each_synapse {\n    if (g < cutoff && id_post != 0u) remove_synapse();\n"
                        "}\nadd_synapse(0u, 0.0, 7.0);\ngrown += 1.0;")
    ccu = model.add_custom_connectivity_update("P", "Rewire", "S", prune, {"cutoff": 1.0},
                                               vars={"age": 1.0}, pre_vars={"grown": 0.0},
                                               var_refs={"g": sf.create_wu_var_ref("S", "g")})
    assert ccu.synapse_group == "S" and ccu.update_group == "Rewire"
    sim = sf.Simulation(model, cache_dir=cache_dir)
    pre0, post0 = sim.synapses("S")
    sim.custom_update("Rewire")
    pre, post = sim.synapses("S")
    g = sim.synapse_values("S", "g")
    want = []
    for i in range(4):
        row = [(int(i), int(j), 0.5) for p, j in zip(pre0, post0) if p == i and j == 0]
        want += row + [(i, 0, 7.0)]
    assert [(int(p), int(j), float(w)) for p, j, w in zip(pre, post, g)] == want
    sim.pull("P", "grown")
    np.testing.assert_array_equal(np.asarray(sim.view("P", "grown")).ravel(), np.ones(4))


def test_connectivity_update_mistakes_are_model_errors(cache_dir):
    model = sf.Model("ccu_bad")
    model.add_neuron_population("Pre", 2, "Poisson", {"rate": 0.0}, {"timeStepToSpike": 0.0})
    model.add_neuron_population("Post", 2, "Poisson", {"rate": 0.0}, {"timeStepToSpike": 0.0})
    model.add_synapse_population("D", "dense", "Pre", "Post",
                                 sf.init_weight_update("StaticPulse", {}, {"g": 0.5}),
                                 sf.init_postsynaptic("DeltaCurr"))
    bad = sf.create_custom_connectivity_update_model("Bad", row_update_code="add_synapse(0u);")
    model.add_custom_connectivity_update("B", "Rewire", "D", bad)
    with pytest.raises(sf.ModelError, match="'D' is Dense"):
        sf.Simulation(model, cache_dir=cache_dir)


def test_column_code_edits_a_group_without_postsynaptic_learning(cache_dir):
    """Column code removes every synapse onto target 1 and gives even targets one from source 0;
    the group has no postsynaptic learning, so its column index exists for the update alone."""
    model = sf.Model("ccu_col", seed=5)
    model.add_neuron_population("Pre", 3, "Poisson", {"rate": 0.0}, {"timeStepToSpike": 0.0})
    model.add_neuron_population("Post", 4, "Poisson", {"rate": 0.0}, {"timeStepToSpike": 0.0})
    model.add_synapse_population(
        "S", "sparse", "Pre", "Post",
        sf.init_weight_update("StaticPulse", {}, {"g": 0.5}),
        sf.init_postsynaptic("DeltaCurr"),
        sf.init_sparse_connectivity("FixedProbability", {"prob": 0.7}))
    cols = sf.create_custom_connectivity_update_model(
        "Cols", var_refs=[("g", "scalar", "ReadWrite")],
        column_update_code="for_each_synapse {\n    if (id_post == 1u) remove_synapse();\n}\n"
                           "if (id_post % 2u == 0u) add_synapse(0u, 2.0 + (scalar)id_post);")
    model.add_custom_connectivity_update("C", "Cols", "S", cols,
                                         var_refs={"g": sf.create_wu_var_ref("S", "g")})
    sim = sf.Simulation(model, cache_dir=cache_dir)
    pre0, post0 = sim.synapses("S")
    sim.custom_update("Cols")
    pre, post = sim.synapses("S")
    g = sim.synapse_values("S", "g")
    want = []
    for i in range(3):
        want += [(i, int(j), 0.5) for p, j in zip(pre0, post0) if p == i and j != 1]
        if i == 0:
            want += [(0, 0, 2.0), (0, 2, 4.0)]
    assert [(int(p), int(j), float(w)) for p, j, w in zip(pre, post, g)] == want
