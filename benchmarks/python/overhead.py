#!/usr/bin/env python3
"""What the Python layer costs (docs/python.md, "Performance"), measured in one run:

1. sim.step() in a Python loop against sim.run(n) on the same model: the overhead per call
   [us] = (loop time - run time) / n, for a small model (the call cost dominates) and COBA.
2. Training from Python (spikeforge.ml) against `spikeforge train` on the same config
   (examples/yinyang.toml with a smaller training set): the ratio of the median epoch times,
   beside the accuracies both reached (the same seeds give the same numbers).

Runs alternate (CLI, Python, CLI, Python, ...) because this machine's speed drifts.

    python benchmarks/python/overhead.py [--rounds 3] [--epochs 3] [--train-size 1000]
"""

import argparse
import json
import os
import pathlib
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

import spikeforge as sf
from spikeforge import ml

ROOT = pathlib.Path(__file__).resolve().parents[2]


def small_model():
    model = sf.Model("small", dt=0.1)
    model.add_neuron_population("N", 100, "LeakyIntegrate",
                                {"C": 1.0, "TauM": 10.0, "Vrest": 0.0}, {"V": 0.0})
    return model


def step_overhead(model, steps: int, rounds: int, cache: str) -> dict:
    sim = sf.Simulation(model, threads=1, cache_dir=cache)
    sim.run(steps)  # warm up
    loops, runs = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(steps):
            sim.step()
        loops.append(time.perf_counter() - start)
        start = time.perf_counter()
        sim.run(steps)
        runs.append(time.perf_counter() - start)
    loop, run = statistics.median(loops), statistics.median(runs)
    return {"steps": steps, "loop_s": loop, "run_s": run,
            "overhead_us_per_call": 1e6 * (loop - run) / steps, "ratio": loop / run}


def config_text(train_size: int, epochs: int) -> str:
    """examples/yinyang.toml with `train_size` examples and no output files."""
    text = (ROOT / "examples" / "yinyang.toml").read_text()
    text = re.sub(r"(?m)^train_size = \d+", f"train_size = {train_size}", text)
    text = re.sub(r"(?m)^epochs = \d+", f"epochs = {epochs}", text)
    return text.split("[output]")[0]


def cli_epochs(config: pathlib.Path, epochs: int) -> dict:
    out = subprocess.run([sys.executable, "-m", "spikeforge", "train", str(config), "--epochs",
                          str(epochs), "--json", "--threads", "1"],
                         capture_output=True, text=True, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    return {"epoch_s": result["epoch_s"], "validation_accuracy": result["validation_accuracy"]}


def python_epochs(train_size: int, epochs: int, cache: str) -> dict:
    net = ml.Network()
    with net:
        inp = ml.Population(ml.SpikeInput(), 5, name="In")
        hid = ml.Population(ml.LeakyIntegrateFire(v_thresh=1.0, tau_mem=20.0,
                                                  spike_buffer_size=16), 200, name="Hidden")
        ml.Population(ml.FirstSpikeReadout(tau_mem=20.0, v_thresh=1.0, spike_buffer_size=2,
                                           silent_push=10.0), 3, name="Out")
        out = net.populations[-1]
        ml.Connection(inp, hid, ml.Dense(ml.Normal(1.5, 0.78)), ml.Exponential(5.0),
                      name="InHidden")
        ml.Connection(hid, out, ml.Dense(ml.Normal(0.93, 0.1)), ml.Exponential(5.0),
                      name="HiddenOut")
    compiled = ml.EventPropCompiler(example_timesteps=800, dt=0.05, batch_size=32,
                                    optimiser=ml.Adam(2e-3), learning_rate_decay=0.97,
                                    seed=1234, shuffle_seed=1, threads=1,
                                    cache_dir=cache).compile(net)
    _, validation, data, _ = compiled.train(
        {inp: ml.yin_yang(train_size, 42)}, num_epochs=epochs,
        validation_x={inp: ml.yin_yang(1000, 41)}, callbacks=["batch_progress_bar"])
    seconds = [e["seconds"] for e in data["history"]]
    return {"epoch_s": sum(seconds) / len(seconds),
            "validation_accuracy": validation[out].accuracy}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--train-size", type=int, default=1000)
    parser.add_argument("--json-out")
    args = parser.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.platform()}")
    with tempfile.TemporaryDirectory() as tmp:
        cache = os.path.join(tmp, "cache")
        steps = {"small": step_overhead(small_model(), 20000, args.rounds, cache)}
        sys.path.insert(0, str(ROOT / "examples" / "python"))
        import coba_raster

        steps["coba_4000"] = step_overhead(coba_raster.coba(4000, 0.02), 2000, args.rounds, cache)
        for name, r in steps.items():
            print(f"step loop vs run, {name}: {r['overhead_us_per_call']:.2f} us per step() call "
                  f"(loop {r['loop_s']:.3f} s, run {r['run_s']:.3f} s for {r['steps']} steps; "
                  f"ratio {r['ratio']:.2f})")

        config = pathlib.Path(tmp) / "yinyang.toml"
        config.write_text(config_text(args.train_size, args.epochs))
        cli, py = [], []
        for _ in range(args.rounds):
            cli.append(cli_epochs(config, args.epochs))
            py.append(python_epochs(args.train_size, args.epochs, cache))
    cli_s = statistics.median(r["epoch_s"] for r in cli)
    py_s = statistics.median(r["epoch_s"] for r in py)
    print(f"training, Yin-Yang {args.train_size} examples x {args.epochs} epochs, 1 thread: "
          f"spikeforge train {cli_s:.3f} s/epoch (validation "
          f"{100 * cli[0]['validation_accuracy']:.2f} %), Python {py_s:.3f} s/epoch (validation "
          f"{100 * py[0]['validation_accuracy']:.2f} %); Python/CLI = {py_s / cli_s:.3f} "
          f"(target <= 1.05)")
    if args.json_out:
        pathlib.Path(args.json_out).write_text(json.dumps(
            {"steps": steps, "cli": cli, "python": py, "ratio": py_s / cli_s}, indent=1))
    return 0 if py_s / cli_s <= 1.05 else 1


if __name__ == "__main__":
    sys.exit(main())
