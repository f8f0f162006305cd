"""numpy views alias the host mirror and keep the simulation alive."""

import gc

import numpy as np

import spikeforge as sf


def _model():
    model = sf.Model("views", batch_size=3)
    model.add_neuron_population("N", 5, "LeakyIntegrate",
                                {"C": 1.0, "TauM": 10.0, "Vrest": 0.0}, {"V": 0.0})
    return model


def test_writing_through_a_view_and_pushing_changes_the_simulation(cache_dir):
    model = _model()
    sim = sf.Simulation(model, cache_dir=cache_dir)
    v = sim.view("N", "V")
    assert v.shape == (3, 5) and v.dtype == np.float32
    v[1, :] = 8.0
    sim.push("N", "V")
    sim.run(1)  # V decays towards 0 by exp(-dt / TauM)
    sim.pull("N", "V")
    assert v[0].max() == 0.0
    np.testing.assert_allclose(v[1], 8.0 * np.exp(-0.1 / 10.0), rtol=1e-6)
    # Two views of one variable are the same memory.
    w = sim.view("N", "V")
    w[2, 0] = 3.0
    assert v[2, 0] == 3.0


def test_a_view_outlives_its_simulation_object(cache_dir):
    model = _model()
    sim = sf.Simulation(model, cache_dir=cache_dir)
    sim.pull("N", "V")
    v = sim.view("N", "V")
    del sim, model
    gc.collect()
    v[:] = 2.0  # the simulation (and its host memory) is kept alive by the view
    assert float(v.sum()) == 30.0
