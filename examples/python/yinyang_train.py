#!/usr/bin/env python3
"""Yin-Yang (Kriener, Göltz & Petrovici 2021) trained with EventProp from Python, with the
network and recipe of examples/yinyang.toml; saves the training curves, the test-set
predictions and a raster of the hidden layer as PNG, and a checkpoint that
`spikeforge evaluate examples/yinyang.toml --checkpoint <dir>` reads.

    python examples/python/yinyang_train.py --epochs 50 --out yinyang
"""

import argparse
import os

import numpy as np

from spikeforge import ml, plot


def network(hidden: int):
    net = ml.Network()
    with net:
        inp = ml.Population(ml.SpikeInput(), 5, name="In")
        hid = ml.Population(ml.LeakyIntegrateFire(v_thresh=1.0, tau_mem=20.0,
                                                  spike_buffer_size=16),
                            hidden, name="Hidden", record_spikes=True)
        out = ml.Population(ml.FirstSpikeReadout(tau_mem=20.0, v_thresh=1.0, spike_buffer_size=2,
                                                 tau0=0.5, tau1=6.4, alpha=3e-3,
                                                 silent_push=10.0), 3, name="Out",
                            record_spikes=True)
        ml.Connection(inp, hid, ml.Dense(ml.Normal(mean=1.5, sd=0.78)), ml.Exponential(5.0),
                      name="InHidden")
        ml.Connection(hid, out, ml.Dense(ml.Normal(mean=0.93, sd=0.1)), ml.Exponential(5.0),
                      name="HiddenOut")
    return net, inp, out


def predictions(spikes, count):
    """The class each test example is given: the output that spikes first (-1: none)."""
    out = np.full(count, -1)
    for i, (times, ids) in enumerate(spikes):
        if len(times):
            out[i] = ids[np.argmin(times)]
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--hidden", type=int, default=200)
    parser.add_argument("--train-size", type=int, default=5000)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--out", default="yinyang", help="prefix of the output files")
    args = parser.parse_args()

    net, inp, out = network(args.hidden)
    compiler = ml.EventPropCompiler(example_timesteps=800, dt=0.05, batch_size=32,
                                    optimiser=ml.Adam(2e-3), learning_rate_decay=0.97,
                                    seed=1234, shuffle_seed=1, backend=args.backend)
    compiled = compiler.compile(net)
    test_set = ml.yin_yang(1000, 40)
    with compiled:
        _, validation, history, _ = compiled.train(
            {inp: ml.yin_yang(args.train_size, 42)}, num_epochs=args.epochs,
            validation_x={inp: ml.yin_yang(1000, 41)},
            callbacks=["batch_progress_bar", ml.Checkpoint(f"{args.out}_checkpoint")])
        test, recorded = compiled.evaluate({inp: test_set})
    print(f"validation {100 * validation[out].accuracy:.2f} %, "
          f"test {100 * test[out].accuracy:.2f} % ({test[out].total} examples); "
          f"{np.mean([e['seconds'] for e in history['history']]):.2f} s per epoch")

    plot.training_curves(history["history"], path=f"{args.out}_curves.png")
    # The test points coloured by the class the network gives them (x, y are channels 0, 1:
    # latency t = 30 ms * value).
    guess = predictions(recorded["spikes"][out], len(test_set))
    xy = np.array([test_set.example(i)[0][np.argsort(test_set.example(i)[1])][:2] / 30.0
                   for i in range(len(test_set))])
    import matplotlib

    matplotlib.use("Agg")  # files only
    from matplotlib import pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 5))
    ax.scatter(xy[:, 0], xy[:, 1], c=guess, s=6, cmap="viridis")
    ax.set_title(f"test set, predicted class ({100 * test[out].accuracy:.1f} % correct)")
    fig.savefig(f"{args.out}_predictions.png", dpi=100)
    times, ids = recorded["spikes"][net.populations[1]][0]
    plot.raster(times, ids, path=f"{args.out}_hidden_raster.png",
                title="hidden layer, first test example", marker_size=8.0)
    print(f"wrote {args.out}_curves.png, {args.out}_predictions.png, "
          f"{args.out}_hidden_raster.png and {os.path.abspath(args.out)}_checkpoint/")


if __name__ == "__main__":
    main()
