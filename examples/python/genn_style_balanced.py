#!/usr/bin/env python3
"""A balanced excitatory/inhibitory LIF network written as a PyGeNN 5 script: the import below
is the only line that differs from the PyGeNN version (``from pygenn import ...``), and a
batched custom update (a ReduceBatchMax over the batch) runs beside it.

    python examples/python/genn_style_balanced.py --backend single_threaded_cpu --ms 200

Prints each population's rate and the largest membrane potential the custom update found.
tests/python/test_genn_api.py runs it and checks its spikes against the same network built
with the native API (docs/python.md, "Coming from PyGeNN").
"""

import argparse

import numpy as np

from spikeforge.genn import (GeNNModel, VarAccessMode, CustomUpdateVarAccess,
                             create_custom_update_model, create_var_ref, init_postsynaptic,
                             init_sparse_connectivity, init_var, init_weight_update)

NUM_EXC, NUM_INH = 400, 100
LIF_PARAMS = {"C": 1.0, "TauM": 20.0, "Vrest": -49.0, "Vreset": -60.0, "Vthresh": -50.0,
              "Ioffset": 0.0, "TauRefrac": 5.0}
EXC_WEIGHT, INH_WEIGHT = 0.004, -0.05  # [nA]
PROB = 0.1

# The largest V of each neuron over the batch (a reduction into an unbatched variable).
peak_model = create_custom_update_model(
    "peak_v", vars=[("peak", "scalar", CustomUpdateVarAccess.REDUCE_BATCH_MAX)],
    var_refs=[("V", "scalar", VarAccessMode.READ_ONLY)], update_code="peak = V;")


def build(backend="single_threaded_cpu", batch_size=2, steps=2000):
    model = GeNNModel("float", "genn_style_balanced", backend=backend)
    model.dt = 0.1
    model.batch_size = batch_size
    lif_init = {"V": init_var("Uniform", {"min": -60.0, "max": -50.0}), "RefracTime": 0.0}
    exc = model.add_neuron_population("E", NUM_EXC, "LIF", LIF_PARAMS, lif_init)
    inh = model.add_neuron_population("I", NUM_INH, "LIF", LIF_PARAMS, lif_init)
    exc.spike_recording_enabled = True
    inh.spike_recording_enabled = True
    for name, source, weight, tau in (("EE", exc, EXC_WEIGHT, 5.0), ("EI", exc, EXC_WEIGHT, 5.0),
                                      ("II", inh, INH_WEIGHT, 10.0),
                                      ("IE", inh, INH_WEIGHT, 10.0)):
        target = exc if name.endswith("E") else inh
        model.add_synapse_population(
            name, "SPARSE", source, target,
            init_weight_update("StaticPulseConstantWeight", {"g": weight}),
            init_postsynaptic("ExpCurr", {"tau": tau}),
            init_sparse_connectivity("FixedProbability", {"prob": PROB}))
    model.add_custom_update("PeakE", "Peak", peak_model, {}, {"peak": -1000.0},
                            {"V": create_var_ref(exc, "V")})
    model.build()
    model.load(num_recording_timesteps=steps)
    return model


def run(backend="single_threaded_cpu", batch_size=2, steps=2000):
    """Runs the network; returns {population: [(times, ids) per batch element]} and the peak
    V of each excitatory neuron over the batch at the end."""
    model = build(backend, batch_size, steps)
    while model.timestep < steps:
        model.step_time()
    model.pull_recording_buffers_from_device()
    model.custom_update("Peak")
    peak = model.custom_updates["PeakE"].vars["peak"]
    peak.pull_from_device()
    spikes = {name: pop.spike_recording_data for name, pop in model.neuron_populations.items()}
    return spikes, np.array(peak.view)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="single_threaded_cpu")
    parser.add_argument("--ms", type=float, default=200.0)
    parser.add_argument("--batch", type=int, default=2)
    args = parser.parse_args()
    steps = int(round(args.ms / 0.1))
    spikes, peak = run(args.backend, args.batch, steps)
    for name, per_batch in spikes.items():
        size = NUM_EXC if name == "E" else NUM_INH
        rates = [len(ids) / size / (args.ms / 1000.0) for _, ids in per_batch]
        print(f"{name}: " + ", ".join(f"batch {b}: {r:.1f} Hz" for b, r in enumerate(rates)))
    print(f"largest V over the batch: {peak.max():.2f} mV")


if __name__ == "__main__":
    main()
