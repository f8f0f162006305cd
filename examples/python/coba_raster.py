#!/usr/bin/env python3
"""The COBA benchmark network (Vogels & Abbott 2005, as Brian2's and examples/coba.toml)
built with the Python API; saves a spike raster and the population rates as PNG.

    python examples/python/coba_raster.py --neurons 4000 --ms 1000 --out coba
"""

import argparse
import time

import spikeforge as sf
from spikeforge import plot


def coba(neurons: int, prob: float) -> sf.Model:
    lif = sf.create_neuron_model(
        "LifCoba", params=["taum", "Vt", "Vr", "El", "I", "tref"],
        vars=[("v", "scalar"), ("refrac", "scalar")],
        sim_code="""
if (refrac > 0.0) {
    refrac -= dt;
}
if (refrac < 0.5 * dt) {
    v += dt * (Isyn - (v - El) + I) / taum;
}
""",
        threshold_condition_code="v > Vt",
        reset_code="v = Vr;\nrefrac = tref;\n")
    conductance = sf.create_postsynaptic_model(
        "EulerCond", params=["tau", "E"],
        sim_code="injectCurrent(inSyn * (E - v));\ninSyn -= dt * inSyn / tau;\n")
    model = sf.Model("coba", precision="float", dt=0.1, seed=1234)
    params = {"taum": 20.0, "Vt": -50.0, "Vr": -60.0, "El": -60.0, "I": 20.0, "tref": 5.0}
    start = {"v": sf.init_var("Uniform", {"min": -60.0, "max": -50.0}), "refrac": 0.0}
    for name, size in (("E", int(0.8 * neurons)), ("I", neurons - int(0.8 * neurons))):
        pop = model.add_neuron_population(name, size, lif, params, start)
        pop.spike_recording_enabled = True
    for name, pre, post, g, tau, e in (("EE", "E", "E", 0.6, 5.0, 0.0),
                                       ("EI", "E", "I", 0.6, 5.0, 0.0),
                                       ("IE", "I", "E", 6.7, 10.0, -80.0),
                                       ("II", "I", "I", 6.7, 10.0, -80.0)):
        model.add_synapse_population(
            name, "sparse", pre, post,
            sf.init_weight_update("StaticPulseConstantWeight", {"g": g}),
            sf.init_postsynaptic(conductance, {"tau": tau, "E": e}),
            sf.init_sparse_connectivity("FixedProbability", {"prob": prob}))
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--neurons", type=int, default=4000)
    parser.add_argument("--prob", type=float, default=0.02)
    parser.add_argument("--ms", type=float, default=1000.0, help="simulated time [ms]")
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--out", default="coba", help="prefix of the PNG files")
    args = parser.parse_args()

    model = coba(args.neurons, args.prob)
    sim = sf.Simulation(model, backend=args.backend)
    steps = int(round(args.ms / model.dt))
    sim.set_recording_window(steps)
    start = time.perf_counter()
    sim.run(steps)
    seconds = time.perf_counter() - start
    times, ids, _ = sim.spikes("E")
    inh_times, _, _ = sim.spikes("I")
    n_exc = int(0.8 * args.neurons)
    print(f"{args.ms:g} ms of COBA with {args.neurons} neurons in {seconds:.2f} s: "
          f"E {len(times) / n_exc / args.ms * 1000:.1f} Hz, "
          f"I {len(inh_times) / (args.neurons - n_exc) / args.ms * 1000:.1f} Hz")
    plot.raster(times, ids, path=f"{args.out}_raster.png", title="COBA, excitatory")
    plot.population_rates(times, n_exc, args.ms, path=f"{args.out}_rates.png",
                          label="excitatory")
    print(f"wrote {args.out}_raster.png and {args.out}_rates.png")


if __name__ == "__main__":
    main()
