"""The mlGeNN-shaped training API (spikeforge.ml): it learns, its checkpoints are the CLI's,
and event data in either numpy form gives the same dataset."""

import io
import json

import numpy as np
import pytest

import spikeforge as sf
from spikeforge import ml, plot

HIDDEN = 100
DT = 0.1  # [ms]
STEPS = 400  # 40 ms


def yin_yang_network():
    """examples/yinyang.toml's network with a smaller hidden layer (same names, so that
    `spikeforge evaluate` reads the checkpoint)."""
    network = ml.Network()
    with network:
        inp = ml.Population(ml.SpikeInput(), 5, name="In")
        hid = ml.Population(ml.LeakyIntegrateFire(v_thresh=1.0, tau_mem=20.0,
                                                  spike_buffer_size=16), HIDDEN, name="Hidden")
        out = ml.Population(ml.FirstSpikeReadout(tau_mem=20.0, v_thresh=1.0, spike_buffer_size=2,
                                                 silent_push=10.0), 3, name="Out")
        ml.Connection(inp, hid, ml.Dense(ml.Normal(mean=1.5, sd=0.78)), ml.Exponential(5.0),
                      name="InHidden")
        ml.Connection(hid, out, ml.Dense(ml.Normal(mean=0.93, sd=0.1)), ml.Exponential(5.0),
                      name="HiddenOut")
    return network, inp, out


def compiler(cache_dir):
    return ml.EventPropCompiler(example_timesteps=STEPS, dt=DT, batch_size=32,
                                optimiser=ml.Adam(2e-3), learning_rate_decay=0.97,
                                cache_dir=cache_dir)


# The same network, dataset and training options as a training config (docs/training.md).
CONFIG = f"""
[dataset]
kind = "yinyang"
train_size = 60
test_size = 300
train_seed = 42
test_seed = 40

[[populations]]
name = "In"
kind = "spike_input"
size = 5

[[populations]]
name = "Hidden"
kind = "lif"
size = {HIDDEN}
tau_mem = 20.0
v_thresh = 1.0
spike_buffer = 16

[[populations]]
name = "Out"
kind = "first_spike_readout"
size = 3
tau_mem = 20.0
v_thresh = 1.0
spike_buffer = 2
silent_push = 10.0

[[connections]]
name = "InHidden"
source = "In"
target = "Hidden"
weight_mean = 1.5
weight_sd = 0.78
tau_syn = 5.0

[[connections]]
name = "HiddenOut"
source = "Hidden"
target = "Out"
weight_mean = 0.93
weight_sd = 0.1
tau_syn = 5.0

[training]
dt = {DT}
example_timesteps = {STEPS}
batch_size = 32
learning_rate = 2e-3
lr_decay = 0.97
epochs = 8
"""


def test_yin_yang_from_python_learns_and_its_checkpoint_is_read_by_spikeforge_evaluate(
        tmp_path, cache_dir, capfd):
    network, inp, out = yin_yang_network()
    compiled = compiler(cache_dir).compile(network)
    epochs_seen = []
    with compiled:
        metrics, val_metrics, data, _ = compiled.train(
            {inp: ml.yin_yang(1200, 42)}, num_epochs=8,
            validation_x={inp: ml.yin_yang(300, 41)},
            callbacks=[ml.Checkpoint(tmp_path / "ckpt"), ml.MetricsCSV(tmp_path / "m.csv"),
                       lambda epoch, logs: epochs_seen.append(epoch)])
        test, _ = compiled.evaluate({inp: ml.yin_yang(300, 40)})
    assert epochs_seen == list(range(8))
    assert len(data["history"]) == 8
    assert len(plot.read_metrics(tmp_path / "m.csv")["epoch"]) == 8
    # Chance is 1/3; a few epochs of EventProp reach well above it.
    assert val_metrics[out].accuracy > 0.55, val_metrics
    assert test[out].accuracy > 0.55, test
    assert data["history"][-1]["train_loss"] < data["history"][0]["train_loss"]

    config = tmp_path / "yinyang.toml"
    config.write_text(CONFIG)
    capfd.readouterr()
    rc = sf.cli_main(["spikeforge", "evaluate", str(config), "--checkpoint",
                      str(tmp_path / "ckpt"), "--json"])
    captured = capfd.readouterr()
    text = captured.out
    assert rc == 0, captured.err
    result = json.loads(text.strip().splitlines()[-1])
    assert result["epochs"] == 8 and result["examples"] == 300
    # The CLI evaluates the same weights on the same test set as Python did.
    assert result["accuracy"] == pytest.approx(test[out].accuracy, abs=1e-12)
    assert result["loss"] == pytest.approx(test[out].loss, rel=1e-5)

    # InferenceCompiler reads the checkpoint's weights and agrees too.
    inference = ml.InferenceCompiler(example_timesteps=STEPS, dt=DT, batch_size=32,
                                     cache_dir=cache_dir).compile(network)
    assert inference.load_checkpoint(tmp_path / "ckpt").next_epoch == 8
    np.testing.assert_array_equal(inference.get_weights("HiddenOut"),
                                  compiled.get_weights("HiddenOut"))
    again, _ = inference.evaluate({inp: ml.yin_yang(300, 40)})
    assert again[out].accuracy == test[out].accuracy


def test_a_fresh_run_refuses_an_existing_checkpoint_and_resume_continues_it(tmp_path,
                                                                           cache_dir):
    network, inp, _ = yin_yang_network()
    compiled = compiler(cache_dir).compile(network)
    train = ml.yin_yang(96, 42)
    ckpt = tmp_path / "ckpt"
    shown = io.StringIO()
    compiled.train(train, num_epochs=1, callbacks=[ml.Checkpoint(ckpt), ml.ProgressBar(32, shown)])
    # One line per epoch without tqdm; tqdm's bar carries the same description.
    assert "epoch 1/1" in shown.getvalue() and "accuracy" in shown.getvalue()
    with pytest.raises(sf.ModelError, match="holds the checkpoint of an earlier run"):
        compiled.train(train, num_epochs=2, callbacks=[ml.Checkpoint(ckpt)])
    _, data = compiled.train(train, num_epochs=2, callbacks=[ml.Checkpoint(ckpt)],
                             resume_from=ckpt)
    assert [e["epoch"] for e in data["history"]] == [1]


def test_numpy_pairs_and_tonic_structured_arrays_give_the_same_dataset():
    rng = np.random.default_rng(3)
    pairs, structured, labels = [], [], []
    for i in range(5):
        n = int(rng.integers(0, 30))
        times = np.sort(rng.uniform(0.0, 100.0, n))  # [ms]
        channels = rng.integers(0, 40, n)
        pairs.append((times, channels))
        events = np.zeros(n, dtype=[("t", np.int64), ("x", np.int16), ("p", np.int8)])
        events["t"] = np.round(times * 1000.0)  # tonic's microseconds
        events["x"] = channels
        events["p"] = 1
        structured.append(events)
        labels.append(i % 3)
        pairs[-1] = (events["t"] / 1000.0, channels)  # the same rounded times
    a = ml.events_to_dataset(pairs, labels, num_channels=40, num_classes=3, duration=100.0)
    b = ml.events_to_dataset(structured, labels, num_channels=40, num_classes=3,
                             duration=100.0)
    assert len(a) == 5 and a.num_events == sum(len(t) for t, _ in pairs)
    for field in ("times", "channels", "offsets", "counts", "labels"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
    t, c, label = b.example(2)
    np.testing.assert_allclose(t, pairs[2][0], rtol=1e-6)
    assert label == 2


def test_unsorted_events_are_sorted_and_bad_events_are_named():
    data = ml.events_to_dataset([([5.0, 1.0], [1, 0])], [0], num_channels=2, num_classes=1)
    np.testing.assert_array_equal(data.times, [1.0, 5.0])
    np.testing.assert_array_equal(data.channels, [0, 1])
    with pytest.raises(sf.ModelError, match="example 1: channel 9 is out of range"):
        ml.events_to_dataset([([1.0], [0]), ([1.0], [9])], [0, 0], num_channels=4,
                             num_classes=1)
    with pytest.raises(sf.ModelError, match="example 0: times and channels"):
        ml.events_to_dataset([([1.0, 2.0], [0])], [0], num_channels=4, num_classes=1)
    with pytest.raises(sf.ModelError, match="example 0: an event time is not finite"):
        ml.events_to_dataset([([np.nan], [0])], [0], num_channels=4, num_classes=1)
    with pytest.raises(sf.ModelError, match="fields 't' and 'x'"):
        ml.events_to_dataset([np.zeros(2, dtype=[("ts", float)])], [0], 4, 1)
    with pytest.raises(sf.ModelError, match="label"):
        ml.events_to_dataset([([1.0], [0])], [5], num_channels=4, num_classes=3)


def test_training_mistakes_are_model_errors(cache_dir):
    with pytest.raises(sf.ModelError, match="inside `with network:`"):
        ml.Population(ml.SpikeInput(), 3)
    network = ml.Network()
    with network:
        inp = ml.Population(ml.SpikeInput(), 3, name="In")
        out = ml.Population(ml.LeakyIntegrate(readout="mean_var"), 2, name="Out")
        ml.Connection(inp, out, ml.Dense(0.1), ml.Exponential(5.0))
    with pytest.raises(sf.ModelError, match="unknown readout of population 'Out' 'mean_var'"):
        ml.EventPropCompiler(example_timesteps=10).compile(network)
    out.neuron = ml.LeakyIntegrate(readout="avg_var")
    with pytest.raises(sf.ModelError, match="unknown loss 'hinge'"):
        ml.EventPropCompiler(example_timesteps=10, losses="hinge").compile(network)
    compiled = ml.EventPropCompiler(example_timesteps=10, cache_dir=cache_dir).compile(network)
    with pytest.raises(sf.ModelError, match="weights of shape"):
        compiled.set_weights("Conn0", np.zeros((2, 3)))
    with pytest.raises(sf.ModelError, match="always shuffles"):
        compiled.train([([1.0], [0])], [0], num_epochs=1, shuffle=False)


def test_dense_weights_and_the_training_state_round_trip(cache_dir):
    network = ml.Network()
    with network:
        inp = ml.Population(ml.SpikeInput(), 4, name="In")
        out = ml.Population(ml.LeakyIntegrate(tau_mem=20.0, readout="sum_var"), 2, name="Out")
        ml.Connection(inp, out, ml.Dense(ml.Normal(0.0, 0.5)), ml.Exponential(5.0), name="W")
    compiled = ml.EventPropCompiler(example_timesteps=50, cache_dir=cache_dir).compile(network)
    w = np.arange(8, dtype=np.float64).reshape(4, 2) / 10.0
    compiled.set_weights("W", w)
    np.testing.assert_allclose(compiled.get_weights("W"), w, rtol=1e-6)
    before = compiled.save_state()
    compiled.set_weights("W", np.zeros((4, 2)))
    compiled.load_state(before)
    np.testing.assert_allclose(compiled.get_weights("W"), w, rtol=1e-6)


def test_an_exception_in_a_callback_reaches_the_caller_and_training_goes_on(cache_dir):
    network, inp, out = yin_yang_network()
    compiled = compiler(cache_dir).compile(network)
    data = ml.yin_yang(96, 42)

    class Stop:
        def on_batches_done(self, epoch, done, total):
            raise KeyError("stop here")

    with pytest.raises(KeyError, match="stop here"):
        compiled.train(data, num_epochs=2, callbacks=[Stop()])
    with pytest.raises(ValueError, match="from the epoch hook"):
        compiled.train(data, num_epochs=1, callbacks=[
            lambda epoch, logs: (_ for _ in ()).throw(ValueError("from the epoch hook"))])
    metrics, _ = compiled.train(data, num_epochs=1, callbacks=[])
    assert metrics[out].total == 96
