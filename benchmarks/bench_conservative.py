"""Conservative backfilling on the full HPC2N trace: jobs per second of simulation.

Every measurement runs in a fresh Python process (trace loading and the result audit
excluded; the compiled code is loaded before the clock starts). The table gives the
median of ``--repeats`` runs — simulation wall time as the summary reports it and the
process's CPU time over the same call (steadier on a loaded machine) — of:

- ``-d conservative`` as a user runs it on the full trace (``loop=auto``: the compiled
  conservative loop; the target is ≥ 30,000 jobs/s);
- the general loop on the full trace (``loop=general``: the ``Conservative`` selection
  over the array slot availability; also what runs with a depth limit or a dynamic ordering);
- the general loop and the previous implementation (kept in
  ``tests/dispatchers/reference_conservative.py``) on the first ``--slice`` jobs, for a
  ratio measured in the same run (``--old-full`` runs the old one on the full trace too:
  ~1 min a run on a quiet machine);
- with ``--pure``, the general loop and the previous implementation on the slice with
  Numba disabled (``DISPATCHLAB_NO_NUMBA=1``: the operations run as plain Python).

Each run checks its schedule: the full-trace runs against the reference digests of
``tests/dispatchers/test_conservative_reference.py``, the new and old runs on the slice
against each other. The load average is printed before and after.

Usage: ``python benchmarks/bench_conservative.py [--repeats 3] [--slice 20000] [--old-full]
[--pure] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from script_args import ready, runner_options

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TRACE = (REPO / ".." / "shared" / "traces" / "swf" / "HPC2N-2002-2.2-cln.swf.gz").resolve()
PLATFORM = "nodes=120,cores=2"
TARGET = 30_000

CHILD = r"""
import json, sys, time
from dispatchlab.dispatchers.rule_based.policy import Policy
from dispatchlab.dispatchers.rule_based.selection import Conservative
from dispatchlab.engine.compiled.compiled_ops import slot_availability_ops
from dispatchlab.simulation import simulate
from dispatchlab.workload import SwfOptions, load_swf
from tests.dispatchers.reference_conservative import ReferenceConservative
from tests.dispatchers.test_conservative_reference import schedule_digests
path, plat, which, engine, limit = sys.argv[1:5] + [int(sys.argv[5])]
wl = load_swf(path, SwfOptions(limit=limit or None))
ops = slot_availability_ops()  # load (or build) the compiled code before the clock
if ops.compiled:
    from dispatchlab.dispatchers.rule_based.compiled.kernel import conservative_loop_kernel
    conservative_loop_kernel()
sel = Conservative() if which == "new" else ReferenceConservative()
cpu = time.process_time()
res = simulate(wl, plat, Policy("fifo", sel), check=False, loop=engine)
cpu = time.process_time() - cpu
s = res.summary
print(json.dumps({"jobs": wl.n_jobs, "sim_s": s["sim_seconds"], "cpu_s": cpu,
                  "engine": s["loop"], "compiled": bool(ops.compiled),
                  "digests": schedule_digests(res)}))
"""


def measure(which: str, engine: str, limit: int, pure: bool = False) -> dict[str, object]:
    """One run in a fresh interpreter."""
    env = dict(os.environ)
    if pure:
        env["DISPATCHLAB_NO_NUMBA"] = "1"
    out = subprocess.run([sys.executable, "-c", CHILD, str(TRACE), PLATFORM, which, engine,
                          str(limit)], check=True, capture_output=True, text=True,
                         cwd=REPO, env=env)
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def median_row(label: str, runs: list[dict[str, object]], goal: str = "") -> str:
    """A table row: median simulation wall and CPU time and throughputs of ``runs``."""
    jobs = int(str(runs[0]["jobs"]))
    each = ", ".join(f"{float(str(r['sim_s'])):.2f}" for r in runs)
    sim, cpu = _median(runs, "sim_s"), _median(runs, "cpu_s")
    return (f"| {label} | {runs[0]['engine']} | {jobs:,} | {sim:.2f} ({each}) | "
            f"{jobs / sim:,.0f} | {cpu:.2f} | {jobs / cpu:,.0f} | {goal} |")


def _median(runs: list[dict[str, object]], key: str) -> float:
    return statistics.median(float(str(r[key])) for r in runs)


def rate(runs: list[dict[str, object]]) -> float:
    """Median jobs per second of simulation (wall)."""
    return int(str(runs[0]["jobs"])) / _median(runs, "sim_s")


def load() -> str:
    """The 1, 5 and 15 minute load averages."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    """Print the table as Markdown (and write it to ``--out``)."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--slice", type=int, default=20_000)
    ap.add_argument("--old-full", action="store_true")
    ap.add_argument("--pure", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    runner_options(ap, out=False)
    args = ap.parse_args()
    ready(args, TRACE)
    if not TRACE.exists():
        print(f"skipping: {TRACE} not found", file=sys.stderr)
        return
    sys.path.insert(0, str(REPO))
    from tests.dispatchers.test_conservative_reference import HPC2N_PLANNED, HPC2N_STARTS_NODES

    before = load()
    reps = range(args.repeats)
    full = [measure("new", "auto", 0) for _ in reps]
    full_gen = [measure("new", "general", 0) for _ in reps]
    part_new = [measure("new", "general", args.slice) for _ in reps]
    part_old = [measure("old", "general", args.slice) for _ in reps]
    full_old = [measure("old", "general", 0) for _ in reps] if args.old_full else []
    pure_new = [measure("new", "general", args.slice, True) for _ in reps] if args.pure else []
    pure_old = [measure("old", "general", args.slice, True) for _ in reps] if args.pure else []
    after = load()
    expected = [HPC2N_STARTS_NODES, HPC2N_PLANNED]
    for r in full + full_gen + full_old:
        assert r["digests"] == expected, "full HPC2N: schedule differs from the reference"
    for r in part_old + pure_new + pure_old:
        assert r["digests"] == part_new[0]["digests"], "slice: schedules differ"
    assert all(r["engine"] == "compiled" for r in full)
    assert not any(r["compiled"] for r in pure_new + pure_old)
    goal = f"≥ {TARGET:,} {'met' if rate(full) >= TARGET else 'MISSED'}"
    rows = [
        "| run | engine | jobs | simulation s, median (each) | jobs/s | CPU s | jobs/CPU s "
        "| note |",
        "|---|---|---:|---:|---:|---:|---:|---|",
        median_row("full trace, `-d conservative`", full, goal),
        median_row("full trace, general loop", full_gen,
                   f"≥ {TARGET:,} {'met' if rate(full_gen) >= TARGET else 'missed'}"),
    ]
    if full_old:
        rows.append(median_row("full trace, previous", full_old,
                               f"general loop {rate(full_gen) / rate(full_old):.1f}× faster"))
    rows += [
        median_row(f"first {args.slice:,} jobs, general loop", part_new),
        median_row(f"first {args.slice:,} jobs, previous", part_old,
                   f"general loop {rate(part_new) / rate(part_old):.1f}× faster"),
    ]
    if pure_new:
        rows += [
            median_row(f"first {args.slice:,} jobs, general loop, no Numba", pure_new),
            median_row(f"first {args.slice:,} jobs, previous, no Numba", pure_old,
                       f"general loop {rate(pure_new) / rate(pure_old):.1f}× faster"),
        ]
    lines = [
        f"Conservative backfilling benchmark — {time.strftime('%Y-%m-%d %H:%M')}, "
        f"{platform.node()}, Python {platform.python_version()}; HPC2N "
        f"({PLATFORM}), median of {args.repeats} runs; load average before {before}, "
        f"after {after}. Every schedule checked (identical to the previous implementation).",
        "",
        *rows,
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
