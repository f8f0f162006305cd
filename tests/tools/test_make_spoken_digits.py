#!/usr/bin/python3
"""Tests of tools/make-spoken-digits (docs/spoken_digits.md).  Run with the Debian Python:

    /usr/bin/python3 tests/tools/test_make_spoken_digits.py

Needs espeak-ng, python3-numpy and python3-h5py (tools/install-deps); fails, never skips,
when one is missing.  About a minute on 2 cores."""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "make-spoken-digits")
BASELINE = os.path.join(ROOT, "tools", "spoken-digits-baseline")
PYTHON = "/usr/bin/python3"
TRAIN = "spoken_digits_train.h5"
TEST = "spoken_digits_test.h5"
TINY = ["--train-speakers", "2", "--test-speakers", "1", "--reps", "1"]

try:
    import numpy as np
    import h5py
except ImportError as e:  # the test must fail, not skip
    sys.exit(f"test_make_spoken_digits: {e}: install python3-numpy and python3-h5py for "
             f"{PYTHON} (tools/install-deps)")


def run_tool(*args, env=None, tool=TOOL):
    return subprocess.run([PYTHON, tool, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=env, timeout=300)


def read(path):
    """The file's SHA-256 (equal digests = byte-identical files; short failure messages)."""
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class MakeSpokenDigits(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if shutil.which("espeak-ng") is None:
            raise RuntimeError("espeak-ng is not installed: install the Debian package "
                               "'espeak-ng' (tools/install-deps installs it)")
        cls.tmp = tempfile.mkdtemp(prefix="spoken-digits-test-")
        cls.small = os.path.join(cls.tmp, "small")
        res = run_tool("--out", cls.small, "--small", "--seed", "7", "--jobs", "2",
                       "--baseline")
        if res.returncode != 0:
            raise RuntimeError(f"make-spoken-digits --small failed:\n{res.stdout}{res.stderr}")
        cls.small_stdout = res.stdout

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def load(self, name):
        with h5py.File(os.path.join(self.small, name), "r") as f:
            return {
                "times": list(f["spikes/times"][:]),
                "units": list(f["spikes/units"][:]),
                "labels": np.asarray(f["labels"][:]),
                "speaker": np.asarray(f["extra/speaker"][:]),
                "keys": [k.decode() if isinstance(k, bytes) else k for k in f["extra/keys"][:]],
            }

    # ---- determinism --------------------------------------------------------------------------
    def test_same_seed_gives_byte_identical_files(self):
        again = os.path.join(self.tmp, "small-again")
        res = run_tool("--out", again, "--small", "--seed", "7", "--jobs", "2", "--quiet")
        self.assertEqual(res.returncode, 0, res.stderr)
        for name in (TRAIN, TEST):
            self.assertEqual(read(os.path.join(self.small, name)), read(os.path.join(again, name)),
                             f"{name} differs between two runs with the same seed")

    def test_jobs_do_not_change_the_files_and_seeds_do(self):
        runs = {"seed1-jobs1": ("1", "1"), "seed1-jobs2": ("1", "2"), "seed2": ("2", "2")}
        for out, (seed, jobs) in runs.items():
            res = run_tool("--out", os.path.join(self.tmp, out), "--seed", seed, "--jobs", jobs,
                           "--quiet", *TINY)
            self.assertEqual(res.returncode, 0, res.stderr)
        files = {out: [read(os.path.join(self.tmp, out, name)) for name in (TRAIN, TEST)]
                 for out in runs}
        self.assertEqual(files["seed1-jobs1"], files["seed1-jobs2"], "--jobs changes the files")
        for k in range(2):
            self.assertNotEqual(files["seed1-jobs2"][k], files["seed2"][k],
                                "seed 1 and seed 2 give the same file")

    # ---- layout -------------------------------------------------------------------------------
    def test_shd_layout(self):
        for name in (TRAIN, TEST):
            with h5py.File(os.path.join(self.small, name), "r") as f:
                for ds in ("spikes/times", "spikes/units", "labels", "extra/keys", "extra/speaker"):
                    self.assertIn(ds, f, f"{name}: {ds} missing")
                    self.assertEqual(len(f[ds].shape), 1, f"{name}: {ds} not one-dimensional")
                tbase = h5py.check_vlen_dtype(f["spikes/times"].dtype)
                ubase = h5py.check_vlen_dtype(f["spikes/units"].dtype)
                self.assertIsNotNone(tbase, "spikes/times is not variable-length")
                self.assertIsNotNone(ubase, "spikes/units is not variable-length")
                self.assertEqual(np.dtype(tbase).kind, "f")
                self.assertIn(np.dtype(ubase).kind, "iu")
                self.assertIn(f["labels"].dtype.kind, "iu")
                self.assertIn(f["extra/speaker"].dtype.kind, "iu")
                n = f["labels"].shape[0]
                for ds in ("spikes/times", "spikes/units", "extra/speaker"):
                    self.assertEqual(f[ds].shape[0], n, f"{name}: {ds} length")
                self.assertEqual(f["extra/keys"].shape[0], 20)
        data = self.load(TRAIN)
        self.assertEqual(data["keys"][0], "english-zero")
        self.assertEqual(data["keys"][15], "german-fünf")

    def test_times_and_units(self):
        for name in (TRAIN, TEST):
            data = self.load(name)
            for i, (t, u) in enumerate(zip(data["times"], data["units"])):
                self.assertEqual(t.size, u.size, f"{name} example {i}: lengths differ")
                self.assertGreater(t.size, 0, f"{name} example {i}: no spikes")
                self.assertTrue(np.all(np.diff(t) >= 0), f"{name} example {i}: times unsorted")
                self.assertGreaterEqual(float(t.min()), 0.0, f"{name} example {i}")
                self.assertLess(float(t.max()), 1.2, f"{name} example {i}")
                self.assertTrue(np.all(u < 700), f"{name} example {i}: unit >= 700")
            used = np.unique(np.concatenate(data["units"]))
            self.assertGreater(used.size, 500, f"{name}: only {used.size} channels ever fire")

    # ---- balance and statistics ---------------------------------------------------------------
    def test_class_and_speaker_balance(self):
        # --small: 8 train / 4 test speakers, 2 examples per class and speaker.
        for name, speakers in ((TRAIN, 8), (TEST, 4)):
            data = self.load(name)
            counts = np.bincount(data["labels"], minlength=20)
            self.assertEqual(counts.size, 20, f"{name}: labels beyond 19")
            self.assertTrue(np.all(counts == 2 * speakers), f"{name}: class counts {counts}")
            self.assertEqual(np.unique(data["speaker"]).size, speakers, name)
            per_speaker = np.unique(data["speaker"], return_counts=True)[1]
            self.assertTrue(np.all(per_speaker == 40), f"{name}: per speaker {per_speaker}")

    def test_test_speakers_are_held_out(self):
        train = set(self.load(TRAIN)["speaker"].tolist())
        test = set(self.load(TEST)["speaker"].tolist())
        self.assertFalse(train & test, f"speakers in both splits: {train & test}")
        sys.path.insert(0, os.path.join(ROOT, "tools"))
        import spoken_digits as sd
        self.assertFalse(set(sd.TRAIN_VARIANTS) & set(sd.TEST_VARIANTS),
                         "a voice variant is in both the train and the test pool")

    def test_spike_statistics(self):
        # SHD-like: hundreds to several thousand spikes per ~1 s example.
        for name in (TRAIN, TEST):
            counts = np.array([t.size for t in self.load(name)["times"]])
            self.assertTrue(1000 <= counts.mean() <= 5000, f"{name}: mean {counts.mean():.0f}")
            self.assertGreaterEqual(counts.min(), 50, f"{name}: min {counts.min()}")
            self.assertLessEqual(counts.max(), 20000, f"{name}: max {counts.max()}")
            # no channel fires faster than the 250 Hz ceiling of the spike generator
            for t, u in zip(self.load(name)["times"][:20], self.load(name)["units"][:20]):
                per_channel = np.bincount(u, minlength=700)
                self.assertLessEqual(per_channel.max(), 250 * 1.2 + 1)

    def test_baseline_prints_accuracies(self):
        self.assertRegex(self.small_stdout,
                         r"train accuracy \d+\.\d %, test accuracy \d+\.\d %")
        res = run_tool(os.path.join(self.small, TRAIN), os.path.join(self.small, TEST),
                       tool=BASELINE)
        self.assertEqual(res.returncode, 0, res.stderr)
        acc = [float(a) for a in
               __import__("re").findall(r"accuracy (\d+\.\d) %", res.stdout)]
        self.assertEqual(len(acc), 2, res.stdout)
        self.assertGreater(acc[0], 20.0, "the linear model does not even fit the training set")

    # ---- refusal and errors -------------------------------------------------------------------
    def test_refuses_to_overwrite_without_force(self):
        out = os.path.join(self.tmp, "force")
        self.assertEqual(run_tool("--out", out, "--seed", "3", "--quiet", *TINY).returncode, 0)
        before = read(os.path.join(out, TRAIN))
        res = run_tool("--out", out, "--seed", "4", "--quiet", *TINY)
        self.assertEqual(res.returncode, 1)
        self.assertIn("--force", res.stderr)
        self.assertIn(TRAIN, res.stderr)
        self.assertEqual(read(os.path.join(out, TRAIN)), before, "overwritten without --force")
        res = run_tool("--out", out, "--seed", "4", "--quiet", "--force", *TINY)
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertNotEqual(read(os.path.join(out, TRAIN)), before, "--force did not overwrite")

    def test_bad_arguments_name_the_option(self):
        for args, option in ((["--reps", "0"], "--reps"), (["--jobs", "x"], "--jobs"),
                             (["--test-speakers", "99"], "--test-speakers")):
            res = run_tool("--out", os.path.join(self.tmp, "bad"), *args)
            self.assertEqual(res.returncode, 2, args)
            self.assertIn(option, res.stderr, args)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "bad")))

    def test_missing_espeak_names_the_package(self):
        env = dict(os.environ, PATH=os.path.join(self.tmp, "empty-path"))
        res = run_tool("--out", os.path.join(self.tmp, "noespeak"), "--small", env=env)
        self.assertEqual(res.returncode, 1)
        self.assertIn("espeak-ng", res.stderr)
        self.assertIn("install", res.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
