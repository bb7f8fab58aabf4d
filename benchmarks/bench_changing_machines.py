"""Machines that change, at compiled speed: HPC2N EASY under a node walk, a cap walk, both.

Issue 27 asks for HPC2N (202,871 jobs) EASY with 20 % of the nodes leaving and coming back
on a seeded random walk, and EASY under a varying power cap, to run compiled at
≥ 300,000 jobs/s with the general loop's schedule. Each case runs ``--repeats`` times in a
fresh interpreter with ``--loop auto`` (the compiled loop when it qualifies) and
``--general`` times with the general loop, alternately; the table gives the medians of the
loop's own time (``summary["sim_seconds"]``), jobs/s, the process CPU time of the
``simulate()`` call, which loop ran, and whether the schedule digests
(:mod:`schedule_digests`: every segment, node-state row, sample and decision point) of
the two loops agree. The load average is recorded before and after (the machine may be
shared).

Cases with idle nodes switched off (``hpc2n-easy-poweroff``, ``hpc2n-fifo-poweroff``:
``--only``) time the ``+poweroff`` loop's call the same way.

Usage: ``python benchmarks/bench_changing_machines.py [--repeats 3] [--general 1]
[--only hpc2n-easy-nodewalk ...] [--tree DIR] [--out benchmarks/results/changing_machines]``
(writes ``.json`` and ``.md``).
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
from typing import Any

from script_args import ready, runner_options

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_general_loop import measure  # noqa: E402

#: One run in a fresh interpreter, the compiled loop's own call timed (CPU and wall): the
#: loaders are wrapped where the runner calls them.
CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from dispatchlab.dispatchers.rule_based.compiled import runner
spent = []
def timed(load):
    def get():
        fn = load()
        def call(*args):
            c0, w0 = time.process_time(), time.perf_counter()
            out = fn(*args)
            spent.append((time.process_time() - c0, time.perf_counter() - w0))
            return out
        return call
    return get
runner.slot_loop_kernel = timed(runner.slot_loop_kernel)
runner.scenario_loop_kernel = timed(runner.scenario_loop_kernel)
runner.conservative_loop_kernel = timed(runner.conservative_loop_kernel)
runner.conservative_scenario_loop_kernel = timed(runner.conservative_scenario_loop_kernel)
try:  # the +poweroff loop (trees from 2026-11-27 on)
    from dispatchlab.dispatchers.rule_based.compiled import poweroff_run
    poweroff_run.poweroff_loop_kernel = timed(poweroff_run.poweroff_loop_kernel)
except ImportError:
    pass
from schedule_digests import run_case
out = run_case(sys.argv[2], sys.argv[3])
out["loop_cpu_seconds"] = sum(c for c, _ in spent) if spent else None
out["loop_seconds"] = sum(w for _, w in spent) if spent else None
print(json.dumps(out))
"""


def measure_loop(tree: Path, case: str) -> dict[str, Any]:
    """One ``--loop auto`` run of ``case`` on ``tree``'s sources in a fresh interpreter,
    with the compiled loop's own CPU and wall seconds (``None``: the general loop ran)."""
    env = dict(os.environ, PYTHONPATH=str(tree / "src"))
    done = subprocess.run([sys.executable, "-c", CHILD, str(HERE), case, "auto"], env=env,
                          check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result

#: The issue's cases (defined in :mod:`schedule_digests`).
CASES = ("hpc2n-easy-nodewalk", "hpc2n-easy-capwalk", "hpc2n-easy-nodewalk-capwalk")
#: The issue's target for the compiled loop on these cases.
TARGET_JOBS_PER_S = 300_000


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians of fresh-process runs of one case on one loop."""
    sim = statistics.median(r["sim_seconds"] for r in runs)
    loop_cpu = [r["loop_cpu_seconds"] for r in runs if r.get("loop_cpu_seconds") is not None]
    return {"engine": sorted({r["engine"] for r in runs}),
            "loop_cpu_seconds": statistics.median(loop_cpu) if loop_cpu else None,
            "sim_seconds": sim, "jobs_per_s": runs[0]["jobs"] / sim,
            "call_cpu_seconds": statistics.median(r["call_cpu_seconds"] for r in runs),
            "runs": [r["sim_seconds"] for r in runs],
            "digests": sorted({r["digest"] for r in runs})}


def table(rows: list[dict[str, Any]], head: str) -> str:
    """The Markdown report."""
    lines = [head, "",
             "| case | jobs | auto: loop | engine s | jobs/s | loop CPU s | jobs per loop CPU s "
             "| call CPU s | general: engine s | jobs/s | CPU s | speed-up (engine s) | "
             "≥ 300,000 jobs per loop CPU s | same schedule |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in rows:
        a, g = r["auto"], r["general"]
        lc = a.get("loop_cpu_seconds")
        rate = r["jobs"] / lc if lc else 0.0
        lines.append(
            f"| {r['case']} | {r['jobs']:,} | {'/'.join(a['engine'])} | "
            f"{a['sim_seconds']:.3f} | {a['jobs_per_s']:,.0f} | "
            + (f"{lc:.3f} | {rate:,.0f} | " if lc else "- | - | ")
            + f"{a['call_cpu_seconds']:.2f} | "
            f"{g['sim_seconds']:.2f} | {g['jobs_per_s']:,.0f} | {g['call_cpu_seconds']:.2f} | "
            f"{g['sim_seconds'] / a['sim_seconds']:.1f}× | "
            f"{'yes' if rate >= TARGET_JOBS_PER_S else 'NO'} | "
            f"{'yes' if r['same_schedule'] else 'NO'} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    """Alternate the loops on every case; write the medians."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3, help="fresh runs with --loop auto")
    ap.add_argument("--general", type=int, default=1, help="fresh runs with the general loop")
    ap.add_argument("--only", nargs="*", default=list(CASES))
    ap.add_argument("--out", type=Path, default=None, help="path without suffix")
    ap.add_argument("--tree", type=Path, default=HERE.parent,
                    help="the checkout whose src/ runs (default: this one)")
    ap.add_argument("--reference", type=Path, default=None,
                    help="a JSON this script wrote: its general-loop rows stand for this "
                         "run's (when the general loop is the same code; --general 0)")
    runner_options(ap, out=False)
    args = ap.parse_args()
    from schedule_digests import HPC2N

    ready(args, HPC2N)
    reference = ({r["case"]: r["general"] for r in json.loads(args.reference.read_text())["rows"]}
                 if args.reference else {})
    load_before = _load()
    rows = []
    tree = args.tree.resolve()
    for case in args.only:
        runs: dict[str, list[dict[str, Any]]] = {"auto": [], "general": []}
        for k in range(max(args.repeats, args.general)):
            if k < args.repeats:
                runs["auto"].append(measure_loop(tree, case))
            if k < args.general:
                runs["general"].append(measure(tree, case, "general"))
        auto = summarize(runs["auto"])
        general = summarize(runs["general"]) if runs["general"] else reference[case]
        row = {"case": case, "jobs": runs["auto"][0]["jobs"], "auto": auto,
               "general": general,
               "same_schedule": len(auto["digests"]) == 1 and auto["digests"]
               == general["digests"], "load": _load()}
        rows.append(row)
        print(json.dumps(row), flush=True)
    load_after = _load()
    head = (f"Machines that change — {time.strftime('%Y-%m-%d %H:%M')} UTC, "
            f"{platform.node()}, Python {platform.python_version()}; medians of "
            f"{args.repeats} fresh-process runs of `{tree}` with `--loop auto` and "
            f"{args.general} with the general loop, alternated; load average before "
            f"{load_before}, after {load_after} (2 cores, shared)"
            + (f"; general-loop figures and digests from `{args.reference.name}`"
               if args.reference else "") + ".\n\n"
            "Engine s: `summary['sim_seconds']` (wall clock of the loop and its recording); "
            "loop CPU s: process CPU time of the compiled loop's own call (what a loaded "
            "machine inflates least; the target is judged on it); call CPU s: process CPU "
            "time of the whole `simulate()` call (workload and platform already loaded); "
            "same schedule: every run's schedule digest (`schedule_digests.py`) equal.")
    text = table(rows, head)
    print(text)
    if args.out:
        args.out.with_suffix(".md").write_text(text)
        args.out.with_suffix(".json").write_text(json.dumps(
            {"repeats": args.repeats, "general": args.general, "load_before": load_before,
             "load_after": load_after, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
