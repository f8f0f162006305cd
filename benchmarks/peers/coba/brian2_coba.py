#!/usr/bin/python3
"""Vogels-Abbott COBA network in Brian2's C++ standalone mode, timed.

The peer half of the spikeforge COBA benchmark (benchmarks/peers/coba/run).
The model is the one of Brian2's own COBA example (Vogels & Abbott 2005,
Brette et al. 2007): conductances ge, gi are dimensionless (in units of the
leak conductance), so the membrane equation is divided by taum throughout.

Prints one JSON line on stdout (everything else goes to stderr):
  build_s      code generation + compilation [s]
  sim_wall_s   wall time of the network run loop only [s] (median of repeats),
               measured with CLOCK_MONOTONIC around Network::run inside the
               generated main(); excludes start-up, synapse creation and
               writing results
  sim_cpu_s    Brian2's own figure (results/last_run_info.txt); without
               OpenMP, Brian2 measures it with std::clock(), i.e. CPU time
  spikes, rates_hz {E, I}, neurons, synapses, and a few more fields.

Needs Brian2 (Debian 12: python3-brian, used with /usr/bin/python3; run
tools/install-deps) and a C++ compiler.
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import warnings


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--N", type=int, default=4000,
                    help="number of neurons (80%% excitatory, 20%% inhibitory)")
    ap.add_argument("--p", type=float, default=0.02,
                    help="connection probability from each source population")
    ap.add_argument("--duration-ms", type=float, default=1000.0,
                    help="simulated time [ms]")
    ap.add_argument("--threads", type=int, default=1,
                    help="simulation threads; 1 builds without OpenMP")
    ap.add_argument("--repeats", type=int, default=1,
                    help="run the compiled binary this many times; "
                         "sim_wall_s is the median")
    ap.add_argument("--build-jobs", type=int, default=1,
                    help="parallel make jobs for compiling the project")
    ap.add_argument("--seed", type=int, default=12345,
                    help="random seed for connectivity and initial state")
    ap.add_argument("--keep", metavar="DIR", default=None,
                    help="write the project to DIR and keep it "
                         "(default: a temporary directory, removed afterwards)")
    args = ap.parse_args(argv)
    if args.N < 5:
        ap.error("--N must be at least 5")
    if not 0.0 < args.p <= 1.0:
        ap.error("--p must be in (0, 1]")
    if min(args.duration_ms, args.threads, args.repeats, args.build_jobs) <= 0:
        ap.error("--duration-ms, --threads, --repeats and --build-jobs must be positive")
    return args


# Inserted into the generated main() around the network run, to time the run
# loop alone on the wall clock. Brian2's main.cpp template already includes
# <time.h> and <fstream>.
WALL_BEFORE = """
struct timespec _sfb_t0, _sfb_t1;
clock_gettime(CLOCK_MONOTONIC, &_sfb_t0);
"""
WALL_AFTER = """
clock_gettime(CLOCK_MONOTONIC, &_sfb_t1);
{
    std::ofstream _sfb_out("results/sfb_wall_time.txt");
    _sfb_out.precision(9);
    _sfb_out << (double)(_sfb_t1.tv_sec - _sfb_t0.tv_sec)
                + 1e-9 * (double)(_sfb_t1.tv_nsec - _sfb_t0.tv_nsec) << std::endl;
}
"""


def read_number(path, field=0):
    with open(path) as f:
        return float(f.read().split()[field])


def simulate(args, b2, project_dir):
    """Builds the project once, runs it args.repeats times; returns the record."""
    from brian2 import (NeuronGroup, SpikeMonitor, Synapses, device, defaultclock,
                        ms, mV, prefs, run, seed, set_device)

    set_device("cpp_standalone", directory=project_dir, build_on_run=False)
    # 0 = no OpenMP at all (plain single-threaded C++).
    prefs.devices.cpp_standalone.openmp_threads = 0 if args.threads == 1 else args.threads
    prefs.devices.cpp_standalone.extra_make_args_unix = [f"-j{args.build_jobs}"]
    defaultclock.dt = 0.1 * ms
    seed(args.seed)

    # Vogels-Abbott / Brian2 COBA example constants.
    taum, taue, taui = 20 * ms, 5 * ms, 10 * ms
    Vt, Vr, El = -50 * mV, -60 * mV, -60 * mV
    Ee, Ei = 0 * mV, -80 * mV
    I = 20 * mV
    we, wi = 0.6, 6.7  # dimensionless conductance jumps (units of g_leak)
    eqs = """
    dv/dt = (ge*(Ee-v) + gi*(Ei-v) - (v-El) + I)/taum : volt (unless refractory)
    dge/dt = -ge/taue : 1
    dgi/dt = -gi/taui : 1
    """
    n_exc = int(0.8 * args.N)
    n_inh = args.N - n_exc
    P = NeuronGroup(args.N, eqs, threshold="v > Vt", reset="v = Vr",
                    refractory=5 * ms, method="euler", name="P")
    P.v = "Vr + rand() * (Vt - Vr)"
    P.ge = 0
    P.gi = 0
    Pe, Pi = P[:n_exc], P[n_exc:]
    Ce = Synapses(Pe, P, on_pre="ge += we", name="Ce")
    Ci = Synapses(Pi, P, on_pre="gi += wi", name="Ci")
    Ce.connect(p=args.p)
    Ci.connect(p=args.p)
    # record=False keeps per-neuron counts only, as spikeforge's counters do.
    mon = SpikeMonitor(P, record=False, name="spikes")

    device.insert_code("before_network_run", WALL_BEFORE)
    device.insert_code("after_network_run", WALL_AFTER)

    t0 = time.perf_counter()
    run(args.duration_ms * ms, report=None)  # code objects are generated here
    device.build(directory=project_dir, compile=True, run=False, with_output=False)
    build_s = time.perf_counter() - t0

    walls, cpus, binary = [], [], []
    results_dir = os.path.join(project_dir, "results")
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        device.run(project_dir, with_output=False, run_args=[])
        binary.append(time.perf_counter() - t0)
        walls.append(read_number(os.path.join(results_dir, "sfb_wall_time.txt")))
        cpus.append(read_number(os.path.join(results_dir, "last_run_info.txt")))

    counts = mon.count[:]
    T = args.duration_ms * 1e-3  # [s]
    spikes_e = int(counts[:n_exc].sum())
    spikes_i = int(counts[n_exc:].sum())
    return {
        "backend": "brian2-cpp_standalone",
        "brian2_version": b2.__version__,
        "neurons": args.N,
        "neurons_by_pop": {"E": n_exc, "I": n_inh},
        "synapses": int(Ce.N[:]) + int(Ci.N[:]),
        "p": args.p,
        "dt_ms": 0.1,
        "duration_ms": args.duration_ms,
        "threads": args.threads,
        "build_jobs": args.build_jobs,
        "seed": args.seed,
        "build_s": build_s,
        "sim_wall_s": statistics.median(walls),
        "sim_wall_samples_s": walls,
        "sim_cpu_s": statistics.median(cpus),
        "run_binary_s": statistics.median(binary),
        "repeats": args.repeats,
        "spikes": spikes_e + spikes_i,
        "rates_hz": {"E": spikes_e / (n_exc * T), "I": spikes_i / (n_inh * T)},
    }


def main(argv):
    args = parse_args(argv)

    # stdout carries the JSON line alone: Brian2, make and the compiled program
    # all write to fd 1 at times, so fd 1 goes to stderr until the end.
    json_out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)

    with warnings.catch_warnings():
        # Debian 12's pythran warns about numpy aliases on import.
        warnings.simplefilter("ignore", FutureWarning)
        try:
            import brian2 as b2
        except ImportError:
            print("brian2_coba.py: Brian2 is not importable by "
                  f"{sys.executable}; run tools/install-deps "
                  "(Debian's python3-brian is for /usr/bin/python3)", file=sys.stderr)
            return 2

    if args.keep:
        project_dir = os.path.abspath(args.keep)
        os.makedirs(project_dir, exist_ok=True)
    else:
        project_dir = tempfile.mkdtemp(prefix="brian2_coba_")
    try:
        record = simulate(args, b2, project_dir)
    finally:
        if not args.keep:
            shutil.rmtree(project_dir, ignore_errors=True)

    sys.stdout.flush()
    json_out.write(json.dumps(record) + "\n")
    json_out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
