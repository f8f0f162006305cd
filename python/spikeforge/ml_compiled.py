"""Compiled networks of spikeforge.ml (made by EventPropCompiler.compile and
InferenceCompiler.compile) and the callbacks their ``train`` takes."""

from __future__ import annotations

import math
import os
import sys
from typing import Any, Callable, Mapping

import numpy as np

from . import _spikeforge as _sf
from .ml_data import EventDataset, events_to_dataset, late_event_warning


class Result:
    """One population's metrics over a set: ``accuracy`` (mlGeNN's ``result``), mean
    ``loss``, ``correct`` and ``total`` examples."""

    def __init__(self, m):
        self.accuracy, self.loss = m.accuracy, m.mean_loss
        self.correct, self.total = m.correct, m.examples

    @property
    def result(self) -> float:
        return self.accuracy

    def __repr__(self):
        return (f"<Result accuracy {100 * self.accuracy:.2f} %, loss {self.loss:.4g}, "
                f"{self.total} examples>")


def _epoch_logs(report) -> dict:
    """An EpochReport as a plain dict (the history entries and the callables' argument)."""
    logs = {
        "epoch": report.epoch,
        "train_loss": report.train.mean_loss,
        "train_accuracy": report.train.accuracy,
        "seconds": report.seconds,
        "learning_rate": report.learning_rate,
        "spikes_per_neuron": {a.population: a.spikes_per_neuron for a in report.activity},
    }
    if report.validation is not None:
        logs["validation_loss"] = report.validation.mean_loss
        logs["validation_accuracy"] = report.validation.accuracy
    return logs


# ---------------------------------------------------------------------------- callbacks


class Checkpoint:
    """Writes ``dir``/checkpoint.sfck every ``every`` epochs and after the last one (the file
    `spikeforge evaluate --checkpoint dir` and ``load_checkpoint`` read)."""

    def __init__(self, dir: str | os.PathLike, every: int = 1):
        self.dir, self.every = os.fspath(dir), every


class MetricsCSV:
    """One CSV row per epoch (the columns of the CLI's metrics_csv)."""

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)


class ProgressBar:
    """A tqdm bar per epoch where tqdm is installed, else one line per epoch."""

    def __init__(self, batch_size: int, file=None):
        self.batch_size = batch_size
        self.file = file
        self.bar = None
        try:
            import tqdm  # noqa: F401

            self.tqdm = tqdm.tqdm
        except ImportError:
            self.tqdm = None

    def on_train_begin(self, first, epochs):
        self.epochs = epochs

    def on_epoch_begin(self, epoch, examples):
        if self.tqdm is not None:
            self.bar = self.tqdm(total=math.ceil(examples / self.batch_size), unit="batch",
                                 desc=f"epoch {epoch + 1}/{self.epochs}", file=self.file)

    def on_batches_done(self, epoch, done, total):
        if self.bar is not None:
            self.bar.update(done - self.bar.n)

    def on_epoch_end(self, report):
        text = (f"loss {report.train.mean_loss:.4f} accuracy {100 * report.train.accuracy:.2f}%")
        if report.validation is not None:
            text += f" validation {100 * report.validation.accuracy:.2f}%"
        if self.bar is not None:
            self.bar.set_postfix_str(text)
            self.bar.close()
            self.bar = None
        else:
            out = self.file or sys.stdout
            print(f"epoch {report.epoch + 1}/{self.epochs}: {text} ({report.seconds:.1f} s)",
                  file=out, flush=True)


class _UserCallback:
    """A user's callback with mlGeNN-style hooks: on_train_begin(), on_epoch_begin(epoch),
    on_batches_done(epoch, done, total), on_epoch_end(epoch, logs), on_train_end(history);
    a plain callable is called as on_epoch_end."""

    def __init__(self, target):
        self.target = target

    def _hook(self, name):
        if name == "on_epoch_end" and not hasattr(self.target, name) and callable(self.target):
            return self.target
        return getattr(self.target, name, None)

    def on_train_begin(self, first, epochs):
        if (h := self._hook("on_train_begin")) is not None:
            h()

    def on_epoch_begin(self, epoch, examples):
        if (h := self._hook("on_epoch_begin")) is not None:
            h(epoch)

    def on_batches_done(self, epoch, done, total):
        if (h := self._hook("on_batches_done")) is not None:
            h(epoch, done, total)

    def on_epoch_end(self, report):
        if (h := self._hook("on_epoch_end")) is not None:
            h(report.epoch, _epoch_logs(report))

    def on_train_end(self, reports):
        if (h := self._hook("on_train_end")) is not None:
            h([_epoch_logs(r) for r in reports])


# ---------------------------------------------------------------------------- networks


class _Compiled:
    """What both compiled networks share: data conversion, weights, evaluation."""

    def __init__(self, network, core, options, input_pop, output_pop):
        self.network, self.core, self.options = network, core, options
        self.input, self.output = input_pop, output_pop
        self._net = network._core()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def _dataset(self, x, y, what: str) -> EventDataset:
        """x: {input: data} or data; data: an EventDataset, or per-example events with y the
        labels ({output: labels} or labels)."""
        if isinstance(x, Mapping):
            if set(x) != {self.input}:
                raise _sf.ModelError(f"{what}: x must map the input population "
                                     f"'{self.input.name}' to its data")
            x = x[self.input]
        if isinstance(y, Mapping):
            if set(y) != {self.output}:
                raise _sf.ModelError(f"{what}: y must map the readout population "
                                     f"'{self.output.name}' to its labels")
            y = y[self.output]
        window = self.options.dt * self.options.example_timesteps  # [ms]
        if isinstance(x, EventDataset):
            if y is not None:
                raise _sf.ModelError(f"{what}: an EventDataset carries its labels; y must be "
                                     "None")
            data = x
        else:
            data = events_to_dataset(x, y, self.input.size, self.output.size)
        late_event_warning(data, window, what)
        return data

    def get_weights(self, connection) -> np.ndarray:
        """A connection's weights as a [source, target] matrix (0 where no synapse)."""
        c = self._connection(connection)
        return self.core.weights(c.name).reshape(self._net.size_of(c.source.name),
                                                 self._net.size_of(c.target.name))

    def set_weights(self, connection, weights) -> None:
        c = self._connection(connection)
        shape = (self._net.size_of(c.source.name), self._net.size_of(c.target.name))
        w = np.ascontiguousarray(weights, dtype=np.float64)
        if w.shape != shape:
            raise _sf.ModelError(f"connection '{c.name}': weights of shape {w.shape}, "
                                 f"expected {shape}")
        self.core.set_weights(c.name, w.ravel())

    def _connection(self, connection):
        for c in self.network.connections:
            if c is connection or c.name == connection:
                return c
        raise _sf.ModelError(f"unknown connection {connection!r}")

    def evaluate(self, x, y=None, progress: Callable[[int, int], None] | None = None):
        """Forward passes over a set: ({output: Result}, {"spikes": {population: [(times,
        ids) per example]}}) for the populations made with record_spikes=True."""
        data = self._dataset(x, y, "evaluate")
        self.core.set_dataset(data)
        m = self.core.evaluate(np.arange(len(data), dtype=np.uint32), progress)
        spikes = {p: [(t, i) for t, i, _ in self.core.spikes(p.name)]
                  for p in self.network.populations if p.record_spikes}
        return {self.output: Result(m)}, {"spikes": spikes}

    @property
    def simulation(self):
        """The underlying Simulation (views, custom updates; docs/python.md)."""
        return self.core.simulation()


class CompiledTrainingNetwork(_Compiled):
    def __init__(self, network, core, options, fit, input_pop, output_pop):
        super().__init__(network, core, options, input_pop, output_pop)
        self.fit_options = fit

    def train(self, x, y=None, num_epochs: int = 1, shuffle: bool = True,
              validation_x=None, validation_y=None, callbacks=("batch_progress_bar",),
              resume_from: str | os.PathLike | None = None):
        """Trains for epochs up to ``num_epochs`` (from a checkpoint's next epoch with
        ``resume_from``). Returns (metrics, callback_data), or with validation data (metrics,
        validation_metrics, callback_data, validation_callback_data) as mlGeNN does; metrics
        are {readout population: Result} of the last epoch, callback_data["history"] one
        dict per epoch."""
        if not shuffle:
            raise _sf.ModelError("spikeforge always shuffles each epoch (seeded by "
                                 "shuffle_seed and the epoch, so runs repeat exactly)")
        train = self._dataset(x, y, "train")
        validation = None
        if validation_x is not None:
            validation = self._dataset(validation_x, validation_y, "validation")
        fit = self.fit_options
        fit.epochs = num_epochs
        start = _sf.ResumePoint(0)
        if resume_from is not None:
            start = _sf.resume_from_checkpoint(self.core, os.fspath(resume_from), fit)
        hooks = self._callbacks(callbacks, start.epoch)
        reports = _sf.fit(self.core, train, validation, fit, hooks, start)
        history = [_epoch_logs(r) for r in reports]
        if not reports:
            raise _sf.ModelError(f"nothing to train: the checkpoint is at epoch {start.epoch} "
                                 f"and num_epochs is {num_epochs}")
        last = reports[-1]
        data = {"history": history, "host_fraction": _sf.host_fraction(reports)}
        if validation is None:
            return {self.output: Result(last.train)}, data
        return ({self.output: Result(last.train)}, {self.output: Result(last.validation)},
                data, {})

    def _callbacks(self, callbacks, start_epoch: int) -> list:
        hooks = []
        for c in callbacks:
            if c in ("batch_progress_bar", "progress_bar"):
                hooks.append(ProgressBar(self.options.batch_size))
            elif isinstance(c, Checkpoint):
                if _sf.prepare_checkpoint_dir(c.dir) and start_epoch == 0:
                    raise _sf.ModelError(f"checkpoint directory '{c.dir}' holds the checkpoint "
                                         "of an earlier run; continue it with resume_from, or "
                                         "choose another directory")
                hooks.append(_sf.CheckpointCallback(self.core, c.dir, c.every, self.fit_options))
            elif isinstance(c, MetricsCSV):
                if start_epoch == 0 and os.path.exists(c.path):
                    raise _sf.ModelError(f"metrics file '{c.path}' already exists; continue "
                                         "its run with resume_from, or remove it")
                hooks.append(_sf.MetricsCsvCallback(c.path, start_epoch))
            elif isinstance(c, ProgressBar):
                hooks.append(c)
            elif isinstance(c, str):
                raise _sf.ModelError(f"unknown callback '{c}' (batch_progress_bar, or an object)")
            else:
                hooks.append(_UserCallback(c))
        return hooks

    def save_state(self) -> dict:
        """Weights, Adam moments and step counters as {name: bytes}."""
        return self.core.save_state()

    def load_state(self, state: dict) -> None:
        self.core.load_state(state)

    def load_checkpoint(self, dir: str | os.PathLike):
        """Loads a checkpoint written by Checkpoint or `spikeforge train`; its info."""
        return _sf.load_checkpoint(self.core, os.fspath(dir))


class CompiledInferenceNetwork(_Compiled):
    def load_checkpoint(self, dir: str | os.PathLike):
        """The weights of a checkpoint (its optimiser state is ignored); its info."""
        info, state = _sf.read_checkpoint(os.path.join(os.fspath(dir),
                                                       _sf.CHECKPOINT_FILE_NAME))
        self.core.load_weights(state)
        return info
