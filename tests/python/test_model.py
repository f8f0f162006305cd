"""The model API from Python: built-in and user models, closed-form checks, synapses."""

import math

import numpy as np
import pytest

import spikeforge as sf


def test_leaky_integrator_follows_the_closed_form(cache_dir):
    # V' = (Vrest - V) / TauM + I / C, V(0) = Vrest: V(t) = Vrest + I R (1 - exp(-t / TauM)).
    model = sf.Model("leaky", precision="double", dt=0.1)
    model.add_neuron_population("N", 3, "LeakyIntegrate",
                                {"C": 0.25, "TauM": 10.0, "Vrest": -65.0}, {"V": -65.0})
    model.add_current_source("I", "DC", "N", {"amp": 0.5})
    sim = sf.Simulation(model, cache_dir=cache_dir)
    sim.run(250)
    sim.pull("N", "V")
    v = sim.view("N", "V")
    want = -65.0 + 0.5 * (10.0 / 0.25) * (1.0 - math.exp(-25.0 / 10.0))
    assert sim.t == pytest.approx(25.0)
    assert v.dtype == np.float64 and v.shape == (3,)
    np.testing.assert_allclose(v, want, rtol=1e-12)


def test_user_neuron_model_from_strings(cache_dir):
    counter = sf.create_neuron_model(
        "Counter", params=["step"], vars=[("x", "scalar"), ("n", "int")],
        sim_code="x += step; n += 1;", threshold_condition_code="x >= 1.0",
        reset_code="x = 0.0;")
    model = sf.Model("counter", batch_size=2)
    pop = model.add_neuron_population("C", 4, counter, {"step": 0.25}, {"x": 0.0, "n": 0})
    pop.spike_recording_enabled = True
    sim = sf.Simulation(model, cache_dir=cache_dir)
    sim.set_recording_window(10)
    sim.run(10)
    sim.pull("C", "n")
    n = sim.view("C", "n")
    assert n.dtype == np.int32 and n.shape == (2, 4)
    assert (n == 10).all()
    times, ids, batch = sim.spikes("C")
    # x reaches 1 at steps 4 and 8 (t = 0.3 and 0.7 ms at dt 0.1): 2 spikes x 4 neurons x 2.
    assert len(times) == 16
    np.testing.assert_allclose(sorted(set(np.round(times, 6))), [0.3, 0.7])
    assert sorted(set(ids)) == [0, 1, 2, 3] and sorted(set(batch)) == [0, 1]


def test_variables_take_values_given_as_arrays(cache_dir):
    # GeNN's vars={"V": array}: one value per neuron (every batch element alike), or a list.
    counter = sf.create_neuron_model("Step", vars=[("x", "scalar")], sim_code="x += 1.0;")
    model = sf.Model("values", batch_size=2, precision="double")
    start = np.linspace(-1.0, 1.0, 5)
    model.add_neuron_population("N", 5, counter, {}, {"x": start})
    model.add_neuron_population("L", 2, counter, {}, {"x": [3.0, 4.0, 5.0, 6.0]})
    sim = sf.Simulation(model, cache_dir=cache_dir)
    sim.run(2)
    for name, want in (("N", np.stack([start, start]) + 2.0), ("L", [[5.0, 6.0], [7.0, 8.0]])):
        sim.pull(name, "x")
        np.testing.assert_array_equal(sim.view(name, "x"), want)
    bad = sf.Model("bad_values")
    bad.add_neuron_population("N", 5, counter, {}, {"x": [1.0, 2.0]})
    with pytest.raises(sf.ModelError, match="group 'N', variable 'x': 2 values given"):
        sf.Simulation(bad, cache_dir=cache_dir)


def test_dense_weights_deliver_their_sum(cache_dir):
    # Every source spikes every step; each target's input is the column sum of the weights.
    always = sf.create_neuron_model("Always", threshold_condition_code="true")
    acc = sf.create_neuron_model("Acc", vars=["acc"], sim_code="acc += Isyn;")
    model = sf.Model("dense", dt=1.0)
    model.add_neuron_population("Src", 5, always)
    tgt = model.add_neuron_population("Tgt", 3, acc, {}, {"acc": 0.0})
    model.add_synapse_population(
        "S", "dense", "Src", tgt, sf.init_weight_update("StaticPulse", {}, {"g": 0.0}),
        sf.init_postsynaptic("DeltaCurr"))
    sim = sf.Simulation(model, cache_dir=cache_dir)
    w = np.arange(15, dtype=np.float64).reshape(5, 3) / 8.0
    sim.set_synapse_matrix("S", "g", w)
    np.testing.assert_array_equal(sim.synapse_matrix("S", "g"), w)
    sim.run(4)  # spikes of steps 0..2 are delivered in steps 1..3
    sim.pull("Tgt", "acc")
    np.testing.assert_allclose(sim.view("Tgt", "acc"), 3 * w.sum(axis=0), rtol=1e-6)


def test_a_gap_junction_in_synapse_dynamics_equalises_the_pair(cache_dir):
    # GeNN's synapse_dynamics_code: every synapse, every step. V0' = g (V1 - V0) and
    # V1' = g (V0 - V1): the difference follows the Euler map (1 - 2 g dt)^n, the sum stays.
    passive = sf.create_neuron_model("Passive", vars=["V"], sim_code="V += dt * Isyn;")
    gap = sf.create_weight_update_model(
        "Gap", vars=["g"],
        synapse_dynamics_code="addToPost(g * (V_pre - V_post)); addToPre(g * (V_post - V_pre));")
    model = sf.Model("gap", precision="double", dt=0.1)
    pair = model.add_neuron_population("P", 2, passive, {}, {"V": [-70.0, -40.0]})
    # One junction, 0 -> 1: the dense pair's other weights are zero.
    model.add_synapse_population(
        "G", "dense", pair, pair, sf.init_weight_update(gap, {}, {"g": [0.0, 0.05, 0.0, 0.0]}),
        sf.init_postsynaptic("DeltaCurr"))
    sim = sf.Simulation(model, cache_dir=cache_dir)
    sim.run(100)
    sim.pull("P", "V")
    v = sim.view("P", "V")
    assert v.sum() == pytest.approx(-110.0, abs=1e-9)
    assert v[1] - v[0] == pytest.approx(30.0 * (1.0 - 2 * 0.05 * 0.1) ** 100, abs=1e-9)


def test_delayed_synapse_code_reads_the_values_of_the_emitting_step(cache_dir):
    # The source spikes every step with V = t; a spike emitted at step e is delivered 3 steps
    # late (step e + 4) and V_pre is e dt there, not the latest value (t - dt).
    ramp = sf.create_neuron_model("RampT", vars=["V"], sim_code="V = t;",
                                  threshold_condition_code="true")
    acc = sf.create_neuron_model("AccD", vars=["acc"], sim_code="acc += Isyn;")
    read = sf.create_weight_update_model("ReadV", pre_spike_syn_code="addToPost(V_pre);")
    model = sf.Model("delayed_v", precision="double", dt=0.5)
    model.add_neuron_population("Src", 1, ramp, {}, {"V": 0.0})
    tgt = model.add_neuron_population("Tgt", 1, acc, {}, {"acc": 0.0})
    syn = model.add_synapse_population("S", "dense", "Src", tgt, sf.init_weight_update(read),
                                       sf.init_postsynaptic("DeltaCurr"), delay_steps=3)
    assert syn.back_prop_delay_steps == 0
    syn.back_prop_delay_steps = 2
    assert syn.back_prop_delay_steps == 2
    sim = sf.Simulation(model, cache_dir=cache_dir)
    sim.run(10)  # deliveries in steps 4..9 of the spikes of steps 0..5
    sim.pull("Tgt", "acc")
    assert sim.view("Tgt", "acc")[0] == pytest.approx(0.5 * (0 + 1 + 2 + 3 + 4 + 5), abs=1e-12)


def test_spike_like_events_fire_where_the_condition_holds(cache_dir):
    # V = step number + 1 (mod 4); the event condition V_pre > 1.5 holds at 2 and 3; each event
    # adds 1 to the two targets one step later. Recorded events come back as arrays.
    wave = sf.create_neuron_model("Wave4", vars=["V"], sim_code="V = fmod(V + 1.0, 4.0);")
    acc = sf.create_neuron_model("AccE", vars=["acc"], sim_code="acc += Isyn;")
    count = sf.create_weight_update_model(
        "CountEvents", params=["theta"],
        pre_event_threshold_condition_code="V_pre > theta",
        pre_event_syn_code="addToPost(1.0);")
    model = sf.Model("events", precision="double", dt=1.0)
    model.add_neuron_population("W", 1, wave, {}, {"V": 0.0})
    tgt = model.add_neuron_population("T", 2, acc, {}, {"acc": 0.0})
    syn = model.add_synapse_population("E", "dense", "W", tgt,
                                       sf.init_weight_update(count, {"theta": 1.5}),
                                       sf.init_postsynaptic("DeltaCurr"))
    syn.pre_event_recording_enabled = True
    sim = sf.Simulation(model, cache_dir=cache_dir)
    sim.set_recording_window(10)
    sim.run(10)
    times, ids, batch = sim.spike_events("E")
    # V after step k is (k + 1) mod 4: events at k = 1, 2, 5, 6, 9.
    np.testing.assert_allclose(times, [1.0, 2.0, 5.0, 6.0, 9.0])
    assert list(ids) == [0] * 5 and list(batch) == [0] * 5
    sim.pull("T", "acc")
    np.testing.assert_allclose(sim.view("T", "acc"), [4.0, 4.0])  # the last one not yet delivered
    assert sim.current_spike_events("E") == [[0]]
    with pytest.raises(sf.ModelError, match="does not record postsynaptic"):
        sim.spike_events("E", pre=False)


def test_kernel_times_count_the_launches_of_each_kernel(cache_dir):
    acc = sf.create_neuron_model("Acc", vars=["acc"], sim_code="acc += 1.0;")
    model = sf.Model("timed")
    model.add_neuron_population("N", 8, acc, {}, {"acc": 0.0})
    sim = sf.Simulation(model, cache_dir=cache_dir, kernel_timing=True)
    sim.run(7)
    times = sim.kernel_times()
    assert list(times) == ["initialise", "presynaptic_update", "neuron_update"]
    assert times["neuron_update"][1] == 7 and times["initialise"][1] == 1
    assert times["neuron_update"][0] > 0.0
    untimed = sf.Simulation(model, cache_dir=cache_dir)
    with pytest.raises(sf.ModelError, match="kernelTiming"):
        untimed.kernel_times()


def test_sparse_and_block_sparse_synapses_read_back_through_the_codec(cache_dir):
    model = sf.Model("codec", seed=7)
    model.add_neuron_population("A", 40, "Poisson", {"rate": 10.0}, {"timeStepToSpike": 0.0})
    model.add_neuron_population("B", 37, "LeakyIntegrate",
                                {"C": 1.0, "TauM": 10.0, "Vrest": 0.0}, {"V": 0.0})
    wu = sf.init_weight_update("StaticPulse", {}, {"g": sf.init_var("Uniform", {"min": 0.0, "max": 1.0})})
    ps = sf.init_postsynaptic("ExpCurr", {"tau": 5.0})
    model.add_synapse_population("Sp", "sparse", "A", "B", wu, ps,
                                 sf.init_sparse_connectivity("FixedProbability", {"prob": 0.2}))
    model.add_synapse_population("Bs", "block_sparse", "A", "B", wu, ps,
                                 sf.block_sparse(block_size=8, density=0.4))
    sim = sf.Simulation(model, cache_dir=cache_dir)
    for group in ("Sp", "Bs"):
        pre, post = sim.synapses(group)
        assert len(pre) == len(post) == sim.synapse_count(group) > 0
        assert pre.max() < 40 and post.max() < 37
        g = sim.synapse_values(group, "g")
        assert ((g >= 0.0) & (g <= 1.0)).all() and g.std() > 0.1
    pre, post = sim.synapses("Bs")
    # Whole 8 x 8 tiles, cut off at the groups' ends.
    tiles = {(p // 8, q // 8) for p, q in zip(pre, post)}
    assert len(pre) == sum(min(8, 40 - 8 * r) * min(8, 37 - 8 * c) for r, c in tiles)


def test_the_generated_code_cache_works_as_from_cpp(private_cache_dir):
    def build(tau):
        model = sf.Model("cached", dt=0.1)
        model.add_neuron_population("N", 4, "LeakyIntegrate",
                                    {"C": 1.0, "TauM": tau, "Vrest": 0.0}, {"V": 0.0})
        return sf.Simulation(model, cache_dir=private_cache_dir)

    assert not build(10.0).cache_hit  # compiled
    assert build(10.0).cache_hit  # the unchanged model is not recompiled
    assert not build(12.0).cache_hit  # a changed constant is new code
