"""C++ errors arrive as Python exceptions with the same message."""

import pytest

import spikeforge as sf


def test_a_snippet_syntax_error_names_the_group_field_line_and_column(cache_dir):
    bad = sf.create_neuron_model("Bad", vars=["V"], sim_code="V += 1.0;\nV = V * ;")
    model = sf.Model("bad")
    model.add_neuron_population("Pop", 2, bad, {}, {"V": 0.0})
    with pytest.raises(sf.ModelError, match=r"Pop\.simCode line 2, column \d+"):
        sf.Simulation(model, cache_dir=cache_dir)


def test_model_errors_are_value_errors_with_the_message():
    model = sf.Model("dup")
    model.add_neuron_population("P", 1, "LIF", {}, {})
    with pytest.raises(ValueError, match="'P'"):
        model.add_neuron_population("P", 1, "LIF", {}, {})
    with pytest.raises(sf.ModelError, match="unknown neuron model 'LIFF'.*LIF"):
        model.add_neuron_population("Q", 1, "LIFF", {}, {})
    with pytest.raises(sf.ModelError, match="unknown matrix type 'dens'"):
        model.add_synapse_population("S", "dens", "P", "P",
                                     sf.init_weight_update("StaticPulse", {}, {"g": 1.0}),
                                     sf.init_postsynaptic("DeltaCurr"))


def test_unknown_variable_names_its_group():
    model = sf.Model("unknown")
    model.add_neuron_population("N", 2, "LeakyIntegrate",
                                {"C": 1.0, "TauM": 10.0, "Vrest": 0.0}, {"V": 0.0})
    sim = sf.Simulation(model)
    with pytest.raises(sf.ModelError, match="N"):
        sim.view("N", "W")
