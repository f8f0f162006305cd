"""Figures with matplotlib (an optional dependency): spike rasters, population rates and
training curves. Each function draws into a new figure, or into ``ax`` when given, returns the
Axes, and saves a PNG when ``path`` is given."""


def _pyplot():
    # matplotlib falls back to the Agg backend by itself where there is no display.
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("spikeforge.plot needs matplotlib: pip install matplotlib") from e
    return plt


def _finish(plt, fig, ax, path):
    if path is not None:
        (fig or ax.figure).savefig(path, dpi=100)
    if fig is not None and path is not None:
        plt.close(fig)
    return ax


def raster(times, ids, ax=None, path=None, title=None, marker_size=1.0):
    """A spike raster: one dot per spike at (time [ms], neuron)."""
    plt = _pyplot()
    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=(8, 4))
    ax.scatter(times, ids, s=marker_size, c="k", marker=".", linewidths=0)
    ax.set_xlabel("time [ms]")
    ax.set_ylabel("neuron")
    if title:
        ax.set_title(title)
    return _finish(plt, fig, ax, path)


def population_rates(times, num_neurons, duration_ms, bin_ms=10.0, ax=None, path=None,
                     label=None):
    """The population's mean rate [Hz] in bins of ``bin_ms``; returns the Axes."""
    import numpy as np

    plt = _pyplot()
    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=(8, 3))
    edges = np.arange(0.0, duration_ms + bin_ms, bin_ms)
    counts, _ = np.histogram(np.asarray(times), bins=edges)
    rates = counts / (num_neurons * bin_ms * 1e-3)
    ax.plot(edges[:-1] + 0.5 * bin_ms, rates, label=label)
    ax.set_xlabel("time [ms]")
    ax.set_ylabel("rate [Hz]")
    if label:
        ax.legend()
    return _finish(plt, fig, ax, path)


def training_curves(metrics, keys=("train_accuracy", "validation_accuracy", "test_accuracy"),
                    ax=None, path=None):
    """Curves of per-epoch metrics: ``metrics`` maps a name to a sequence of values (one per
    epoch), as a metrics CSV read with ``read_metrics``, or is the list of per-epoch dicts of
    spikeforge.ml's callback_data["history"]."""
    if isinstance(metrics, list):
        metrics = {k: [epoch[k] for epoch in metrics] for k in keys if metrics and k in metrics[0]}
    plt = _pyplot()
    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=(6, 4))
    drawn = 0
    for key in keys:
        if key in metrics:
            values = list(metrics[key])
            ax.plot(range(1, len(values) + 1), values, marker="o", label=key)
            drawn += 1
    if drawn == 0:
        raise KeyError("none of %s in the metrics (%s)" % (list(keys), sorted(metrics)))
    ax.set_xlabel("epoch")
    ax.legend()
    return _finish(plt, fig, ax, path)


def read_metrics(path):
    """A metrics CSV of ``spikeforge train --metrics`` as {column: [values]}."""
    import csv

    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    out = {}
    for row in rows:
        for key, value in row.items():
            try:
                out.setdefault(key, []).append(float(value))
            except (TypeError, ValueError):
                out.setdefault(key, []).append(value)
    return out
