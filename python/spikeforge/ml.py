"""Training with mlGeNN's shape (docs/python.md, "Training API").

A ``Network`` holds ``Population``s and ``Connection``s declared inside ``with network:``;
a compiler (``EventPropCompiler`` or ``InferenceCompiler``) turns it into a compiled network
whose ``train`` and ``evaluate`` take numpy event data and labels. Underneath it is the C++
training library (include/spikeforge/train): the whole dataset is uploaded to the device once,
each epoch runs its batches back to back with no host work between them, and Python callbacks
are called only between stretches of batches.

    from spikeforge.ml import *
    network = Network()
    with network:
        inp = Population(SpikeInput(), 5, name="In")
        hid = Population(LeakyIntegrateFire(v_thresh=1.0, tau_mem=20.0), 200, name="Hidden")
        out = Population(FirstSpikeReadout(tau_mem=20.0), 3, name="Out")
        Connection(inp, hid, Dense(Normal(mean=1.5, sd=0.78)), Exponential(5.0))
        Connection(hid, out, Dense(Normal(mean=0.93, sd=0.1)), Exponential(5.0))
    compiler = EventPropCompiler(example_timesteps=800, dt=0.05, batch_size=32,
                                 optimiser=Adam(2e-3))
    compiled = compiler.compile(network)
    with compiled:
        metrics, data = compiled.train({inp: x}, {out: y}, num_epochs=10)
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from . import _spikeforge as _sf
from .ml_compiled import (  # noqa: F401  (part of this module's API)
    Checkpoint,
    CompiledInferenceNetwork,
    CompiledTrainingNetwork,
    MetricsCSV,
    ProgressBar,
    Result,
)
from .ml_data import EventDataset, events_to_dataset, read_heidelberg, synthetic_shd, yin_yang

__all__ = [
    "Adam", "BlockSparse", "Checkpoint", "Connection", "Delta", "Dense", "EventDataset",
    "EventPropCompiler", "Exponential", "FirstSpikeReadout", "FixedProbability",
    "InferenceCompiler", "LeakyIntegrate", "LeakyIntegrateFire", "MetricsCSV", "Network",
    "Normal", "Population", "ProgressBar", "Result", "SpikeInput", "events_to_dataset",
    "read_heidelberg", "synthetic_shd", "yin_yang",
]

# ---------------------------------------------------------------------------- neurons


class SpikeInput:
    """Spike sources fed from the dataset: neuron c emits the events of channel c. With
    ``delay_copies`` d the population holds d + 1 copies, copy k delayed by k * delay_step ms."""

    def __init__(self, delay_copies: int = 0, delay_step: float = 30.0):
        self.delay_copies = delay_copies
        self.delay_step = delay_step


class LeakyIntegrateFire:
    """LIF neurons with a current synapse (Wunderlich & Pehle 2021); ``spike_buffer_size`` bounds
    the spikes one neuron may emit in an example. ``reg_strength`` > 0 pulls each neuron's
    spike count towards ``reg_target`` per example."""

    def __init__(self, v_thresh: float = 1.0, tau_mem: float = 20.0,
                 spike_buffer_size: int = 500, reg_strength: float = 0.0,
                 reg_target: float = 14.0):
        self.v_thresh = v_thresh
        self.tau_mem = tau_mem
        self.spike_buffer_size = spike_buffer_size
        self.reg_strength = reg_strength
        self.reg_target = reg_target

    def _params(self):
        p = _sf.LifParams()
        p.v_thresh, p.tau_mem = self.v_thresh, self.tau_mem
        p.spike_buffer_size = self.spike_buffer_size
        p.reg_strength, p.reg_target = self.reg_strength, self.reg_target
        return p


_READOUTS = {
    "sum_var": _sf.Readout.SumVar,
    "avg_var": _sf.Readout.AvgVar,
    "avg_var_exp_weight": _sf.Readout.AvgVarExpWeight,
    "max_var": _sf.Readout.MaxVar,
    "var": _sf.Readout.Var,
}


def _choice(table: Mapping[str, Any], value: str, what: str):
    if value not in table:
        raise _sf.ModelError(f"unknown {what} '{value}' (one of: {', '.join(table)})")
    return table[value]


class LeakyIntegrate:
    """Non-spiking readout neurons; ``readout`` is one of sum_var, avg_var,
    avg_var_exp_weight, max_var, var (mlGeNN's names)."""

    def __init__(self, tau_mem: float = 20.0, readout: str = "avg_var"):
        self.tau_mem = tau_mem
        self.readout = readout


class FirstSpikeReadout:
    """LIF outputs trained on the time of their first spike (Wunderlich & Pehle's Yin-Yang
    loss): cross-entropy of softmax(-t / tau0) plus alpha * (exp(t_label / tau1) - 1)."""

    def __init__(self, tau_mem: float = 20.0, v_thresh: float = 1.0,
                 spike_buffer_size: int = 2, tau0: float = 0.5, tau1: float = 6.4,
                 alpha: float = 3e-3, silent_push: float = 1.0):
        self.lif = LeakyIntegrateFire(v_thresh, tau_mem, spike_buffer_size)
        self.tau0, self.tau1, self.alpha, self.silent_push = tau0, tau1, alpha, silent_push


# ---------------------------------------------------------------------------- connections


class Normal:
    """Weights drawn from a normal distribution (sd 0: every weight is ``mean``)."""

    def __init__(self, mean: float = 0.0, sd: float = 1.0):
        self.mean, self.sd = mean, sd


def _weight(w) -> Normal:
    if isinstance(w, Normal):
        return w
    if isinstance(w, (int, float)):
        return Normal(float(w), 0.0)
    raise _sf.ModelError(f"a weight is a number or Normal(mean, sd), got {w!r}")


class Dense:
    """Every source connected to every target."""

    def __init__(self, weight=Normal()):
        self.weight = _weight(weight)

    def _apply(self, p):
        p.probability = 1.0


class FixedProbability:
    """Each pair connected independently with probability ``p`` (stored sparse)."""

    def __init__(self, p: float, weight=Normal()):
        self.p = p
        self.weight = _weight(weight)

    def _apply(self, params):
        params.probability = self.p


class BlockSparse:
    """b x b weight blocks (docs/block-sparse.md); ``layout`` etc. as ``spikeforge.block_sparse``.
    ``prune_every`` > 0 prunes and regrows ``prune_fraction`` of the tiles every that many
    batches (RigL at block level; cosine decay to 0 at ``prune_until`` when given)."""

    def __init__(self, weight=Normal(), block_size: int = 16, layout: str = "random",
                 density: float = 0.1, prune_every: int = 0, prune_fraction: float = 0.1,
                 prune_until: int = 0, **layout_options):
        self.weight = _weight(weight)
        self.blocks = _sf.block_sparse(block_size=block_size, layout=layout, density=density,
                                       **layout_options)
        self.pruning = None
        if prune_every:
            self.pruning = _sf.BlockPruning()
            self.pruning.every_batches = prune_every
            self.pruning.fraction = prune_fraction
            self.pruning.until_batch = prune_until

    def _apply(self, p):
        p.probability = 1.0
        p.blocks = self.blocks
        p.pruning = self.pruning


class Exponential:
    """A current synapse: tau dI/dt = -I, I += w at a spike."""

    def __init__(self, tau: float = 5.0):
        self.tau = tau


class Delta:
    """V += w at a spike (only into a LeakyIntegrate readout)."""


# ---------------------------------------------------------------------------- network


class Network:
    """Populations and connections, declared inside ``with network:``."""

    _current: list[Network] = []

    def __init__(self):
        self.populations: list[Population] = []
        self.connections: list[Connection] = []

    def __enter__(self):
        Network._current.append(self)
        return self

    def __exit__(self, *exc):
        Network._current.pop()

    @staticmethod
    def _active() -> Network:
        if not Network._current:
            raise _sf.ModelError("Population and Connection are declared inside "
                                 "`with network:`")
        return Network._current[-1]

    def _core(self):
        net = _sf.TrainingNetwork()
        for p in self.populations:
            p._add_to(net)
        for c in self.connections:
            c._add_to(net)
        return net


class Population:
    """A population of ``shape`` neurons (an int, or a tuple whose product is taken).
    ``record_spikes`` keeps its spikes per example in evaluate()."""

    def __init__(self, neuron, shape, name: str | None = None, record_spikes: bool = False):
        network = Network._active()
        self.neuron = neuron
        self.size = int(np.prod(shape))
        self.name = name or f"Pop{len(network.populations)}"
        self.record_spikes = record_spikes
        network.populations.append(self)

    def _add_to(self, net):
        n = self.neuron
        if isinstance(n, SpikeInput):
            p = _sf.SpikeInputParams()
            p.num_channels, p.delay_copies, p.delay_step = self.size, n.delay_copies, n.delay_step
            net.add_spike_input(self.name, p)
        elif isinstance(n, LeakyIntegrateFire):
            net.add_lif(self.name, self.size, n._params())
        elif isinstance(n, LeakyIntegrate):
            p = _sf.LeakyIntegrateParams()
            p.tau_mem = n.tau_mem
            p.readout = _choice(_READOUTS, n.readout, f"readout of population '{self.name}'")
            net.add_leaky_integrate(self.name, self.size, p)
        elif isinstance(n, FirstSpikeReadout):
            p = _sf.FirstSpikeReadoutParams()
            p.lif = n.lif._params()
            p.tau0, p.tau1, p.alpha, p.silent_push = n.tau0, n.tau1, n.alpha, n.silent_push
            net.add_first_spike_readout(self.name, self.size, p)
        else:
            raise _sf.ModelError(f"population '{self.name}': unknown neuron {n!r} (SpikeInput, "
                                 "LeakyIntegrateFire, LeakyIntegrate or FirstSpikeReadout)")

    def __repr__(self):
        return f"<Population '{self.name}' {type(self.neuron).__name__} x{self.size}>"


class Connection:
    """A projection from ``source`` to ``target`` with ``connectivity`` (Dense,
    FixedProbability, BlockSparse) and ``synapse`` (Exponential, Delta)."""

    def __init__(self, source: Population, target: Population, connectivity,
                 synapse=None, name: str | None = None):
        network = Network._active()
        self.source, self.target = source, target
        self.connectivity = connectivity
        self.synapse = synapse if synapse is not None else Exponential()
        self.name = name or f"Conn{len(network.connections)}"
        network.connections.append(self)

    def _add_to(self, net):
        p = _sf.ConnectionParams()
        c = self.connectivity
        if not isinstance(c, (Dense, FixedProbability, BlockSparse)):
            raise _sf.ModelError(f"connection '{self.name}': connectivity is Dense, "
                                 f"FixedProbability or BlockSparse, got {c!r}")
        c._apply(p)
        p.weight_mean, p.weight_sd = c.weight.mean, c.weight.sd
        if isinstance(self.synapse, Exponential):
            p.synapse, p.tau_syn = _sf.Synapse.Exponential, self.synapse.tau
        elif isinstance(self.synapse, Delta):
            p.synapse = _sf.Synapse.Delta
        else:
            raise _sf.ModelError(f"connection '{self.name}': synapse is Exponential or Delta, "
                                 f"got {self.synapse!r}")
        net.add_connection(self.name, self.source.name, self.target.name, p)


# ---------------------------------------------------------------------------- compilers


class Adam:
    """Adam (on the device); ``warmup_start`` > 0 eases the rate in as
    min(alpha, warmup_start * warmup_factor^(t-1))."""

    def __init__(self, alpha: float = 1e-3, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, warmup_start: float = 0.0, warmup_factor: float = 1.05):
        self.alpha, self.beta1, self.beta2, self.epsilon = alpha, beta1, beta2, epsilon
        self.warmup_start, self.warmup_factor = warmup_start, warmup_factor


_LOSSES = {
    "sparse_categorical_crossentropy": _sf.Loss.SparseCategoricalCrossEntropy,
    "mean_square_error": _sf.Loss.MeanSquaredError,
}


class _Backend:
    """Where a compiled network runs: backend name and its options (as Simulation's)."""

    def __init__(self, backend: str, threads: int, device: str, fast_math: bool,
                 cache_dir: str):
        self.kwargs = dict(backend=backend, threads=threads, device=device,
                           fast_math=fast_math, cache_dir=cache_dir)


def _ends(network: Network) -> tuple[Population, Population]:
    """The network's spike input and readout populations (exactly one of each)."""

    def only(kinds, what: str) -> Population:
        found = [p for p in network.populations if isinstance(p.neuron, kinds)]
        if len(found) != 1:
            raise _sf.ModelError(f"the network needs exactly one {what} population "
                                 f"(it has {len(found)})")
        return found[0]

    return (only(SpikeInput, "spike input"),
            only((LeakyIntegrate, FirstSpikeReadout), "readout"))


class EventPropCompiler:
    """EventProp training (Wunderlich & Pehle 2021) with mlGeNN's arguments; the rest are the
    keys of a training config's [training] table (docs/training.md)."""

    def __init__(self, example_timesteps: int, losses="sparse_categorical_crossentropy",
                 optimiser: Adam | None = None, batch_size: int = 32, dt: float = 1.0,
                 precision: str = "float", seed: int = 1234, learning_rate_decay: float = 1.0,
                 shuffle_seed: int = 1, plateau_patience: int = 0, plateau_factor: float = 0.5,
                 blend: bool = False, silent_boost: float = 0.0, channel_shift: int = 0,
                 backend: str = "cpu", threads: int = 0, device: str = "",
                 fast_math: bool = False, cache_dir: str = ""):
        self.options = _sf.EventPropOptions()
        o = self.options
        o.example_timesteps, o.batch_size, o.dt = example_timesteps, batch_size, dt
        o.precision, o.seed, o.channel_shift = precision, seed, channel_shift
        self.losses = losses
        opt = optimiser if optimiser is not None else Adam()
        a = _sf.AdamParams()
        a.learning_rate, a.beta1, a.beta2, a.epsilon = opt.alpha, opt.beta1, opt.beta2, opt.epsilon
        a.warmup_start, a.warmup_factor = opt.warmup_start, opt.warmup_factor
        o.adam = a
        self.fit = _sf.FitOptions()
        f = self.fit
        f.shuffle_seed, f.learning_rate, f.learning_rate_decay = shuffle_seed, opt.alpha, \
            learning_rate_decay
        f.plateau_patience, f.plateau_factor = plateau_patience, plateau_factor
        f.blend, f.silent_boost = blend, silent_boost
        self.backend = _Backend(backend, threads, device, fast_math, cache_dir)

    def compile(self, network: Network) -> "CompiledTrainingNetwork":
        losses = self.losses
        if isinstance(losses, Mapping):
            if len(losses) != 1:
                raise _sf.ModelError("EventProp trains one readout: give one loss")
            losses = next(iter(losses.values()))
        self.options.loss = _choice(_LOSSES, losses, "loss")
        self.options.record_spikes = [p.name for p in network.populations if p.record_spikes]
        core = _sf.EventPropCompilerCore(network._core(), self.options, **self.backend.kwargs)
        return CompiledTrainingNetwork(network, core, self.options, self.fit,
                                       *_ends(network))


class InferenceCompiler:
    """The forward pass of a trained network alone (mlGeNN's InferenceCompiler)."""

    def __init__(self, example_timesteps: int, batch_size: int = 32, dt: float = 1.0,
                 precision: str = "float", seed: int = 1234, backend: str = "cpu",
                 threads: int = 0, device: str = "", fast_math: bool = False,
                 cache_dir: str = ""):
        self.options = _sf.InferenceOptions()
        o = self.options
        o.example_timesteps, o.batch_size, o.dt = example_timesteps, batch_size, dt
        o.precision, o.seed = precision, seed
        self.backend = _Backend(backend, threads, device, fast_math, cache_dir)

    def compile(self, network: Network) -> "CompiledInferenceNetwork":
        self.options.record_spikes = [p.name for p in network.populations if p.record_spikes]
        core = _sf.InferenceCompilerCore(network._core(), self.options, **self.backend.kwargs)
        return CompiledInferenceNetwork(network, core, self.options, *_ends(network))
