"""Event data for spikeforge.ml: numpy examples and tonic-style structured arrays become one
``EventDataset`` (the compact array the device holds), and the built-in sets (Yin-Yang,
SHD/SSC files, synthetic SHD-shaped data) come as such datasets too.

An example is either a pair ``(times, channels)`` of equal-length 1-D arrays, times in ms, or
a structured array with fields ``t`` and ``x`` (and optionally ``p``), as tonic gives events;
its times are multiplied by ``time_scale`` (default 1e-3: tonic's microseconds to ms).
"""

from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np

from . import _spikeforge as _sf

EventDataset = _sf.EventDataset


def _example_arrays(example, index: int, time_scale: float, polarity: bool):
    """(times [ms], channels) of one example, sorted by time."""
    if isinstance(example, np.ndarray) and example.dtype.names is not None:
        names = example.dtype.names
        if "t" not in names or "x" not in names:
            raise _sf.ModelError(f"example {index}: a structured array needs fields 't' and "
                                 f"'x' (it has {', '.join(names)})")
        times = np.asarray(example["t"], dtype=np.float64) * time_scale
        x = np.asarray(example["x"])
        if polarity:
            if "p" not in names:
                raise _sf.ModelError(f"example {index}: polarity=True needs a field 'p'")
            x = 2 * x.astype(np.int64) + (np.asarray(example["p"]) != 0)
        channels = x
    else:
        try:
            times, channels = example
        except (TypeError, ValueError):
            raise _sf.ModelError(f"example {index}: expected (times, channels) or a structured "
                                 f"array with fields t and x, got {type(example).__name__}")
        times = np.asarray(times, dtype=np.float64)
        channels = np.asarray(channels)
    if times.ndim != 1 or channels.ndim != 1 or len(times) != len(channels):
        raise _sf.ModelError(f"example {index}: times and channels must be 1-D and of equal "
                             f"length (got shapes {times.shape} and {channels.shape})")
    if len(channels) and (not np.issubdtype(channels.dtype, np.integer) or channels.min() < 0):
        raise _sf.ModelError(f"example {index}: channels must be non-negative integers")
    if len(times) and not np.all(np.isfinite(times)):
        raise _sf.ModelError(f"example {index}: an event time is not finite")
    order = np.argsort(times, kind="stable")
    return times[order], channels[order]


def events_to_dataset(examples: Sequence, labels, num_channels: int, num_classes: int,
                      duration: float | None = None, time_scale: float = 1e-3,
                      polarity: bool = False) -> EventDataset:
    """One EventDataset from per-example events (see the module's docstring) and labels.

    ``time_scale`` applies to structured arrays only; ``polarity`` makes channel 2x + p.
    ``duration`` [ms] defaults to the latest event. The dataset's own checks name the first
    bad example (a channel >= num_channels, a label >= num_classes, a negative time)."""
    labels = np.asarray(labels)
    if labels.ndim != 1 or len(labels) != len(examples):
        raise _sf.ModelError(f"{len(examples)} examples but labels of shape {labels.shape}")
    if len(labels) and (not np.issubdtype(labels.dtype, np.integer) or labels.min() < 0):
        raise _sf.ModelError("labels must be non-negative integers")
    times, channels, counts = [], [], np.zeros(len(examples), dtype=np.uint32)
    for i, example in enumerate(examples):
        t, c = _example_arrays(example, i, time_scale, polarity)
        if len(c) and c.max() >= num_channels:
            raise _sf.ModelError(f"example {i}: channel {int(c.max())} is out of range (the "
                                 f"input has {num_channels} channels)")
        times.append(t.astype(np.float32))
        channels.append(c.astype(np.uint32))
        counts[i] = len(t)
    offsets = np.zeros(len(examples), dtype=np.uint64)
    if len(examples):
        offsets[1:] = np.cumsum(counts[:-1], dtype=np.uint64)
    all_times = np.concatenate(times) if times else np.zeros(0, np.float32)
    all_channels = np.concatenate(channels) if channels else np.zeros(0, np.uint32)
    if duration is None:
        duration = float(all_times.max()) if len(all_times) else 0.0
    return EventDataset(all_times, all_channels, offsets, counts,
                        labels.astype(np.uint32), int(num_channels), int(num_classes),
                        float(duration))


def late_event_warning(data: EventDataset, window: float, source: str) -> None:
    """Warns when more than half of the events fall after the trial window [ms] (times given
    in the wrong unit look like this)."""
    if data.num_events and np.count_nonzero(data.times > window) * 2 > data.num_events:
        warnings.warn(f"{source}: more than half of the events are later than the trial "
                      f"({window:g} ms) and are never seen; are the times in ms?",
                      stacklevel=3)


def yin_yang(size: int, seed: int, **options) -> EventDataset:
    """The Yin-Yang set as `spikeforge train` makes it (options: t_min, t_max, bias, t_bias,
    duration [ms])."""
    return _sf.make_yin_yang(size, seed, **options)


def read_heidelberg(path: str, num_channels: int = 700, num_classes: int = 0,
                    max_examples: int = 0, duration: float = 0.0) -> EventDataset:
    """An SHD/SSC HDF5 file (the published layout); the reader's warnings become Python
    warnings."""
    data, notes = _sf.read_heidelberg(path, num_channels, num_classes, max_examples, duration)
    for note in notes:
        warnings.warn(note, stacklevel=2)
    return data


def synthetic_shd(size: int, seed: int, **options) -> EventDataset:
    """SHD-shaped synthetic data (options: num_channels, num_classes, duration, mean_spikes)."""
    return _sf.make_synthetic_shd(size, seed, **options)
