"""Answers that must be GeNN's (issue #38's "wrong answers"): each at batch 1 and 5.

The expected values are worked out here from GeNN 5's documented semantics: the shape PyGeNN
gives a custom update's variable, bool variables as numpy bools, a BROADCAST reference writing
every delay slot of a delayed variable, REDUCE_SUM into a non-duplicated variable at batch
size 1 (a copy), and spike times before the first spike (GeNN's -TIME_MAX)."""

import numpy as np
import pytest

import spikeforge as sf

N = 10


@pytest.mark.parametrize("batch", [1, 5])
def test_an_unbatched_custom_update_variable_is_one_dimensional(cache_dir, batch):
    # ReduceBatchMax into an own variable: one value per neuron, whatever the batch (GeNN: (n,)).
    model = sf.Model("cu_shape", batch_size=batch, precision="double")
    pop = model.add_neuron_population("N", N, "LeakyIntegrate",
                                      {"C": 1.0, "TauM": 10.0, "Vrest": 0.0}, {"V": 0.0})
    peak = sf.create_custom_update_model(
        "PeakV", vars=[("peak", "scalar", "ReduceBatchMax"), ("copy", "scalar")],
        var_refs=[("v", "scalar", "ReadOnly")], update_code="peak = v;\ncopy = v;")
    model.add_custom_update("Peak", "Peak", peak, vars={"peak": 0.0, "copy": 0.0},
                            var_refs={"v": sf.create_var_ref(pop, "V")})
    sim = sf.Simulation(model, cache_dir=cache_dir)
    v = sim.view("N", "V")
    values = np.arange(batch * N, dtype=np.float64).reshape(batch, N) % 7.0
    v[...] = values if batch > 1 else values[0]
    sim.push("N", "V")
    sim.custom_update("Peak")
    sim.pull("Peak", "peak")
    sim.pull("Peak", "copy")
    assert sim.view("Peak", "peak").shape == (N,)
    np.testing.assert_array_equal(sim.view("Peak", "peak"), values.max(axis=0))
    # Its other variable is per batch element where the update is batched, as in GeNN.
    assert sim.view("Peak", "copy").shape == ((batch, N) if batch > 1 else (N,))
    np.testing.assert_array_equal(sim.view("Peak", "copy").reshape(batch, N), values)


@pytest.mark.parametrize("batch", [1, 5])
def test_a_bool_variable_is_viewed_as_numpy_bools(cache_dir, batch):
    flag = sf.create_neuron_model("Flag", vars=[("on", "bool"), ("count", "scalar")],
                                  sim_code="if (on) {\n    count += 1.0;\n}\non = !on;")
    model = sf.Model("bool_view", batch_size=batch, precision="double")
    model.add_neuron_population("N", N, flag, {}, {"on": 0.0, "count": 0.0})
    sim = sf.Simulation(model, cache_dir=cache_dir)
    sim.pull("N", "on")
    on = sim.view("N", "on")
    assert on.dtype == np.bool_
    assert on.shape == ((batch, N) if batch > 1 else (N,))
    assert not on.any()
    on[..., ::2] = True  # even neurons count in steps 0, 2, 4; odd ones in steps 1, 3
    sim.push("N", "on")
    sim.run(5)
    sim.pull("N", "on")
    sim.pull("N", "count")
    expected = np.where(np.arange(N) % 2 == 0, 3.0, 2.0)
    np.testing.assert_array_equal(sim.view("N", "count").reshape(batch, N),
                                  np.broadcast_to(expected, (batch, N)))
    np.testing.assert_array_equal(sim.view("N", "on").reshape(batch, N),
                                  np.broadcast_to(np.arange(N) % 2 == 1, (batch, N)))


@pytest.mark.parametrize("batch", [1, 5])
def test_a_broadcast_reference_writes_every_delay_slot(cache_dir, batch):
    # V_pre is read three steps late; the spikes in flight deliver the value set by the update.
    keeper = sf.create_neuron_model("Keeper", vars=["V"], threshold_condition_code="true")
    acc = sf.create_neuron_model("Acc", vars=["acc"], sim_code="acc += Isyn;")
    delayed = sf.create_weight_update_model("DelayedV", pre_spike_syn_code="addToPost(V_pre);")
    model = sf.Model("broadcast_delay", batch_size=batch, precision="double")
    pre = model.add_neuron_population("Pre", 2, keeper, {}, {"V": 1.0})
    model.add_neuron_population("Post", 3, acc, {}, {"acc": 0.0})
    model.add_synapse_population("S", "dense", "Pre", "Post",
                                 sf.init_weight_update(delayed), sf.init_postsynaptic("DeltaCurr"),
                                 delay_steps=3)
    set_v = sf.create_custom_update_model("SetV", var_refs=[("x", "scalar", "Broadcast")],
                                          update_code="x = 5.0 + id;")
    model.add_custom_update("Set", "Set", set_v, var_refs={"x": sf.create_var_ref(pre, "V")})
    sim = sf.Simulation(model, cache_dir=cache_dir)
    sim.run(6)
    sim.pull("Post", "acc")
    before = sim.view("Post", "acc").copy()
    sim.custom_update("Set")
    sim.run(2)
    sim.pull("Post", "acc")
    np.testing.assert_array_equal(sim.view("Post", "acc"), before + 2 * (5.0 + 6.0))


@pytest.mark.parametrize("batch", [1, 5])
def test_reduce_sum_into_a_non_duplicated_variable(cache_dir, batch):
    # GeNN's batch reduction: the sum over the batch, a copy at batch size 1.
    holder = sf.create_neuron_model(
        "Holder", vars=[("x", "scalar"), ("total", "scalar", "ReadOnly")])
    model = sf.Model("reduce_sum", batch_size=batch, precision="double")
    pop = model.add_neuron_population("N", N, holder, {}, {"x": 0.0, "total": 0.0})
    reduce = sf.create_custom_update_model(
        "Total", var_refs=[("x", "scalar", "ReadOnly"), ("total", "scalar", "ReduceSum")],
        update_code="total = x;")
    model.add_custom_update("Sum", "Reduce", reduce,
                            var_refs={"x": sf.create_var_ref(pop, "x"),
                                      "total": sf.create_var_ref(pop, "total")})
    sim = sf.Simulation(model, cache_dir=cache_dir)
    values = (np.arange(batch * N, dtype=np.float64).reshape(batch, N) * 0.5) - 3.0
    sim.view("N", "x")[...] = values if batch > 1 else values[0]
    sim.push("N", "x")
    sim.custom_update("Reduce")
    sim.pull("N", "total")
    assert sim.view("N", "total").shape == (N,)
    np.testing.assert_array_equal(sim.view("N", "total"), values.sum(axis=0))


@pytest.mark.parametrize("precision", ["float", "double"])
@pytest.mark.parametrize("batch", [1, 5])
def test_spike_times_before_the_first_spike_are_the_lowest_value(cache_dir, batch, precision):
    # GeNN's -TIME_MAX: np.finfo(scalar).min, for st and for prev_st until the second spike.
    once = sf.create_neuron_model("Once", vars=[("n", "uint32_t"), ("st0", "scalar"),
                                                ("prev0", "scalar")],
                                  sim_code="n += 1u;\nst0 = st;\nprev0 = prev_st;",
                                  threshold_condition_code="n == 2u")
    model = sf.Model("st_never", batch_size=batch, precision=precision, dt=1.0)
    model.add_neuron_population("N", N, once, {}, {"n": 0, "st0": 0.0, "prev0": 0.0})
    sim = sf.Simulation(model, cache_dir=cache_dir)
    lowest = np.finfo(np.float32 if precision == "float" else np.float64).min
    sim.run(1)
    for var in ("st0", "prev0"):
        sim.pull("N", var)
        assert (sim.view("N", var) == lowest).all(), var
    sim.run(2)  # the spike of step 1 is st = 1 ms; no spike before it
    sim.pull("N", "st0")
    sim.pull("N", "prev0")
    assert (sim.view("N", "st0") == 1.0).all()
    assert (sim.view("N", "prev0") == lowest).all()
