"""One DARDIS decision on a large machine: all node managers' fitting index and start
generation (numpy over nodes), then the task manager's choice; and the same round as
simulations run it, compiled (the index read from the grid in place; First + Min start
in one pass that stops at the chosen start).

Nodes of 32 cores hold random reservations (a day of slots, each node 0–32 cores busy in
random stretches) under a day/night desired profile; a job of 64 one-core units, 24 h
wall-time, a 1 h window. Median over repeated calls per (nodes, slot) setting, the three
generators and their policies. Usage:
``python benchmarks/bench_dardis_decision.py [--repeat 30]
[--out benchmarks/results/dardis_decision.md]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

from dispatchlab.dispatchers.dardis.first_min_start import first_min_start
from dispatchlab.dispatchers.dardis.fitting import fitting_index
from dispatchlab.dispatchers.dardis.fitting_kernel import grid_fitting_index
from dispatchlab.dispatchers.dardis.generators import get_generator, responses
from dispatchlab.dispatchers.dardis.grid import UsageGrid
from dispatchlab.dispatchers.dardis.task_manager import get_policy
from script_args import ready, runner_options

SETUPS = (("first", "min-start"), ("uniform", "random"), ("exponential", "max-probability"))
CORES, UNITS, WALLTIME, WINDOW = 32, 64, 86400, 3600


def busy_grid(nodes: int, slot: int, rng: np.random.Generator) -> UsageGrid:
    """Random reservations over the next two days."""
    horizon = 2 * 86400 // slot + 1
    grid = UsageGrid(1, nodes, slot, horizon)
    for _ in range(4):
        first = rng.integers(0, horizon // 2, nodes)
        length = rng.integers(1, horizon // 2, nodes)
        amount = rng.integers(0, CORES // 4 + 1, nodes).astype(np.float64)
        for n in range(nodes):
            grid.up[0, n, first[n]:first[n] + length[n]] += amount[n]
    return grid


def one_decision(grid: UsageGrid, share: np.ndarray, gen: str, pol: str,
                 rng: np.random.Generator) -> tuple[float, float]:
    """Seconds spent by the node managers and by the task manager."""
    slot = grid.slot
    n_starts = WINDOW // slot + 1
    width = WALLTIME // slot
    cap = np.full((grid.up.shape[1], 1), float(CORES))
    t0 = time.perf_counter()
    up = grid.window(0, n_starts - 1 + width)
    index = fitting_index(up, share[:, :n_starts - 1 + width], cap, np.array([1.0]),
                          n_starts, width, width)
    offered = get_generator(gen)(index, responses(UNITS, n_starts, grid.up.shape[1]), rng)
    t1 = time.perf_counter()
    choice = get_policy(pol)(index, offered, UNITS, rng)
    t2 = time.perf_counter()
    assert choice is not None
    return t1 - t0, t2 - t1


def compiled_round(grid: UsageGrid, share: np.ndarray, gen: str, pol: str,
                   rng: np.random.Generator) -> float:
    """Seconds of the whole round as the simulator runs it (same choice)."""
    slot = grid.slot
    n_starts = WINDOW // slot + 1
    width = WALLTIME // slot
    nodes = grid.up.shape[1]
    cap = np.full((nodes, 1), float(CORES))
    req = np.array([1.0])
    count = responses(UNITS, n_starts, nodes)
    t0 = time.perf_counter()
    up, a0 = grid.held(0, n_starts - 1 + width)
    if (gen, pol) == ("first", "min-start"):
        found = first_min_start(up, a0, share, 0, cap, np.ones(nodes, dtype=bool), req,
                                UNITS, count, n_starts, width, width)
        assert found is not None
    else:
        index = grid_fitting_index(up, a0, share, 0, cap, req, n_starts, width, width)
        offered = get_generator(gen)(index, count, rng)
        assert get_policy(pol)(index, offered, UNITS, rng) is not None
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--out", type=Path, default=None)
    runner_options(ap, out=False)
    args = ap.parse_args()
    ready(args)
    rng = np.random.default_rng(0)
    lines = [f"# One DARDIS decision (median of {args.repeat} calls)", "",
             f"python {platform.python_version()}, numpy {np.__version__}, "
             f"load {os.getloadavg()[0]:.2f} at start", "",
             "| nodes | slot (s) | setup | node managers (ms) | task manager (ms) | "
             "compiled round (ms) |",
             "|---|---|---|---|---|---|"]
    for nodes in (300, 5000):
        for slot in (300, 60):
            grid = busy_grid(nodes, slot, rng)
            hours = np.arange(grid.up.shape[2]) * slot // 3600 % 24
            share = np.where((hours >= 8) & (hours < 18), 0.6, 1.0)[None, :]
            for gen, pol in SETUPS:
                runs = [one_decision(grid, share, gen, pol, rng) for _ in range(args.repeat)]
                sched = statistics.median(r[0] for r in runs) * 1e3
                disp = statistics.median(r[1] for r in runs) * 1e3
                compiled_round(grid, share, gen, pol, rng)  # compiled / loaded once
                comp = statistics.median(compiled_round(grid, share, gen, pol, rng)
                                         for _ in range(args.repeat)) * 1e3
                lines.append(f"| {nodes} | {slot} | {gen} + {pol} | {sched:.2f} | {disp:.2f} "
                             f"| {comp:.2f} |")
                print(lines[-1], flush=True)
    lines += ["", f"load {os.getloadavg()[0]:.2f} at end"]
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
