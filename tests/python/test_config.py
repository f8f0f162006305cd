"""The same network from Python and from TOML, and the command line from Python."""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import spikeforge as sf

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


def _coba_from_python(n, p):
    """examples/coba.toml, written with the Python API (examples/python/coba_raster.py)."""
    sys.path.insert(0, str(EXAMPLES / "python"))
    try:
        import coba_raster
    finally:
        sys.path.pop(0)
    return coba_raster.coba(n, p)


def _spikes(model, cache_dir, steps):
    sim = sf.Simulation(model, threads=1, cache_dir=cache_dir)
    sim.set_recording_window(steps)
    sim.run(steps)
    return {group: sim.spikes(group) for group in ("E", "I")}


def test_coba_from_python_spikes_as_the_toml_network(cache_dir):
    steps = 2000  # 200 ms
    got = _spikes(_coba_from_python(800, 0.05), cache_dir, steps)
    want = _spikes(sf.load_model(str(EXAMPLES / "coba.toml"), ["N=800", "p=0.05"]), cache_dir,
                   steps)
    for group in ("E", "I"):
        assert len(want[group][0]) > 500, group  # the network is active
        for got_array, want_array in zip(got[group], want[group]):
            np.testing.assert_array_equal(got_array, want_array)


def test_config_errors_name_the_file_position(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text((EXAMPLES / "coba.toml").read_text().replace('model = "LifCoba"',
                                                                'model = "LifCobra"', 1))
    with pytest.raises(sf.ModelError, match=r"bad\.toml:\d+:\d+.*LifCobra"):
        sf.load_model(str(bad))


def test_python_dash_m_runs_the_command_line(tmp_path):
    result = subprocess.run([sys.executable, "-m", "spikeforge", "simulate",
                             str(EXAMPLES / "coba.toml"), "--set", "N=400", "--duration-ms", "20",
                             "--json"], capture_output=True, text=True, cwd=tmp_path,
                            env=dict(os.environ, SPIKEFORGE_CACHE=str(tmp_path / "cache")))
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["model"] == "coba" and summary["neurons"] == 400 and summary["steps"] == 200
    missing = subprocess.run([sys.executable, "-m", "spikeforge", "simulate", "nothere.toml"],
                             capture_output=True, text=True, cwd=tmp_path)
    assert missing.returncode != 0 and "nothere.toml" in missing.stderr
