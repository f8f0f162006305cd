"""spikeforge.plot writes PNG files with the points it was given (matplotlib Agg)."""

import matplotlib

matplotlib.use("Agg")

import os  # noqa: E402
import pathlib  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import spikeforge as sf  # noqa: E402
from spikeforge import plot  # noqa: E402


def _is_png(path):
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_raster_and_rates_of_a_simulation(tmp_path, cache_dir):
    model = sf.Model("plot", dt=1.0)
    pop = model.add_neuron_population("P", 50, "Poisson", {"rate": 40.0}, {"timeStepToSpike": 0.0})
    pop.spike_recording_enabled = True
    sim = sf.Simulation(model, cache_dir=cache_dir)
    sim.set_recording_window(500)
    sim.run(500)
    times, ids, _ = sim.spikes("P")
    assert len(times) > 100
    ax = plot.raster(times, ids, path=tmp_path / "raster.png")
    assert _is_png(tmp_path / "raster.png")
    assert len(ax.collections[0].get_offsets()) == len(times)
    ax = plot.population_rates(times, 50, 500.0, bin_ms=50.0, path=tmp_path / "rates.png")
    assert _is_png(tmp_path / "rates.png")
    x, y = ax.lines[0].get_data()
    assert len(x) == 10
    # 40 Hz Poisson: 100 spikes expected per 50 ms bin (sd 10, i.e. 4 Hz): all within 20 Hz.
    assert np.all(np.abs(np.asarray(y) - 40.0) < 20.0)


def test_training_curves_from_a_metrics_csv(tmp_path):
    csv = tmp_path / "metrics.csv"
    csv.write_text("epoch,train_accuracy,test_accuracy\n1,0.5,0.45\n2,0.7,0.66\n3,0.8,0.74\n")
    metrics = plot.read_metrics(csv)
    assert metrics["test_accuracy"] == [0.45, 0.66, 0.74]
    ax = plot.training_curves(metrics, path=tmp_path / "curves.png")
    assert _is_png(tmp_path / "curves.png")
    assert [len(line.get_xdata()) for line in ax.lines] == [3, 3]


@pytest.mark.parametrize("script, args, pngs", [
    ("coba_raster.py", ["--neurons", "800", "--prob", "0.05", "--ms", "100"],
     ["raster", "rates"]),
    ("yinyang_train.py", ["--epochs", "1", "--train-size", "100", "--hidden", "30"],
     ["curves", "predictions", "hidden_raster"]),
])
def test_the_example_scripts_save_their_figures(tmp_path, script, args, pngs):
    examples = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"
    result = subprocess.run([sys.executable, str(examples / script), *args,
                             "--out", str(tmp_path / "fig")],
                            capture_output=True, text=True, cwd=tmp_path,
                            env={**os.environ, "MPLBACKEND": "Agg"}, timeout=600)
    assert result.returncode == 0, result.stderr
    for name in pngs:
        png = tmp_path / f"fig_{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
