"""Engine speed before/after a change, measured in the same run: alternating fresh processes.

Each case runs in a fresh interpreter on this tree and, with ``--baseline DIR`` (another
checkout, e.g. a worktree of ``main``), on that tree too, alternately, ``--repeats`` times;
the table gives the median engine time (``summary["sim_seconds"]``), jobs/s and the ratio
baseline / this tree, with the load average before and after (the machine may be shared).
Every run also records its schedule digest (:mod:`schedule_digests`): the table says
whether both trees produced the same schedule.

Usage: ``python benchmarks/bench_general_loop.py [--baseline ../wt-base] [--repeats 3]
[--only hpc2n-fifo hpc2n-easy] [--loop general] [--out benchmarks/results/general_loop]``
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

CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from schedule_digests import run_case
print(json.dumps(run_case(sys.argv[2], sys.argv[3])))
"""


def measure(tree: Path, case: str, engine: str) -> dict[str, Any]:
    """One run of ``case`` on ``tree``'s sources, in a fresh interpreter."""
    env = dict(os.environ, PYTHONPATH=str(tree / "src"))
    out = subprocess.run([sys.executable, "-c", CHILD, str(HERE), case, engine], env=env,
                         check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    """Alternate the trees on every case; write the medians."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--baseline", type=Path, default=None)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=["hpc2n-fifo", "hpc2n-easy"])
    ap.add_argument("--loop", "--engine", dest="engine", default="general",
                    help="auto | compiled | general (--engine: its old name)")
    ap.add_argument("--out", type=Path, default=None, help="path without suffix")
    runner_options(ap, out=False)
    args = ap.parse_args()
    from schedule_digests import HPC2N

    ready(args, HPC2N)
    sys.path.insert(0, str(HERE))
    from schedule_digests import CASES

    here = HERE.parent
    trees = [("this", here)] + ([("baseline", args.baseline.resolve())]
                                if args.baseline else [])
    load_before = _load()
    rows = []
    for case in args.only:
        if case not in CASES:
            raise SystemExit(f"unknown case {case}; cases: {', '.join(CASES)}")
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in trees}
        for _ in range(args.repeats):
            for name, tree in trees:
                runs[name].append(measure(tree, case, args.engine))
        row: dict[str, Any] = {"case": case, "jobs": runs["this"][0]["jobs"]}
        for name, _ in trees:
            sim = statistics.median(r["sim_seconds"] for r in runs[name])
            cpu = statistics.median(r["call_cpu_seconds"] for r in runs[name])
            row[name] = {"engine": runs[name][0]["engine"], "sim_seconds": sim,
                         "jobs_per_s": row["jobs"] / sim, "call_cpu_seconds": cpu,
                         "runs": [r["sim_seconds"] for r in runs[name]],
                         "digest": runs[name][0]["digest"]}
        if args.baseline:
            row["speedup"] = row["baseline"]["sim_seconds"] / row["this"]["sim_seconds"]
            row["cpu_speedup"] = (row["baseline"]["call_cpu_seconds"]
                                  / row["this"]["call_cpu_seconds"])
            row["same_schedule"] = row["baseline"]["digest"] == row["this"]["digest"]
        rows.append(row)
        print(json.dumps(row), flush=True)
    load_after = _load()
    lines = [f"Engine speed — {time.strftime('%Y-%m-%d %H:%M')}, {platform.node()}, Python "
             f"{platform.python_version()}, engine `{args.engine}`, median of {args.repeats} "
             f"alternating fresh-process runs; load average before {load_before}, after "
             f"{load_after}.", "",
             "Engine s: `summary['sim_seconds']` (wall clock of the loop); CPU s: process "
             "CPU time of the whole `simulate()` call (less sensitive to a loaded machine).",
             "",
             "| case | jobs | this: engine | this s | this jobs/s | this CPU s | baseline s | "
             "baseline jobs/s | baseline CPU s | speed-up (engine s) | speed-up (CPU s) | "
             "same schedule |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        b = r.get("baseline")
        lines.append(
            f"| {r['case']} | {r['jobs']:,} | {r['this']['engine']} | "
            f"{r['this']['sim_seconds']:.2f} | {r['this']['jobs_per_s']:,.0f} | "
            f"{r['this']['call_cpu_seconds']:.2f} | "
            + (f"{b['sim_seconds']:.2f} | {b['jobs_per_s']:,.0f} | {b['call_cpu_seconds']:.2f} "
               f"| {r['speedup']:.2f}× | {r['cpu_speedup']:.2f}× | "
               f"{'yes' if r['same_schedule'] else 'NO'} |" if b else "- | - | - | - | - | - |"))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.with_suffix(".md").write_text(text)
        args.out.with_suffix(".json").write_text(json.dumps(
            {"engine": args.engine, "repeats": args.repeats, "load_before": load_before,
             "load_after": load_after, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
