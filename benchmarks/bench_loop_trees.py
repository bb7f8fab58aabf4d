"""The compiled loop's own CPU time on two source trees, alternated in the same run.

A change to the compiled loops must not slow the runs it does not concern: each case of
:mod:`schedule_digests` runs ``--repeats`` times per tree, in a fresh interpreter with
``--loop auto``, the trees alternated (so a shared machine's load falls on both alike); the
table gives the medians of the loop's own CPU time (the compiled call, timed as
:mod:`bench_changing_machines` times it), their ratio, and whether every run's schedule
digest agrees. The load average is recorded before and after.

Usage: ``python benchmarks/bench_loop_trees.py --before DIR --after DIR [--repeats 5]
[--only hpc2n-fifo hpc2n-easy] [--out benchmarks/results/NAME]`` (``.json`` and ``.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from script_args import ready, runner_options, skip

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_changing_machines import measure_loop  # noqa: E402


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    """Alternate the trees on every case; write the medians."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--before", type=Path, default=None,
                    help="checkout whose src/ runs first (without it: skipped)")
    ap.add_argument("--after", type=Path, default=HERE.parent, help="default: this checkout")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--only", nargs="*", default=["hpc2n-fifo", "hpc2n-easy"])
    ap.add_argument("--out", type=Path, default=None, help="path without suffix")
    runner_options(ap, out=False)
    args = ap.parse_args()
    from schedule_digests import HPC2N

    if args.before is None:
        skip("needs --before CHECKOUT: it compares the compiled loop of two trees")
    ready(args, HPC2N)
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    load_before = _load()
    rows = []
    for case in args.only:
        runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
        for _ in range(args.repeats):
            for name, tree in trees.items():
                runs[name].append(measure_loop(tree, case))
        med = {name: statistics.median(r["loop_cpu_seconds"] for r in rs)
               for name, rs in runs.items()}
        row = {"case": case, "jobs": runs["after"][0]["jobs"],
               "loop_cpu_seconds": med, "ratio": med["after"] / med["before"],
               "runs": {n: [r["loop_cpu_seconds"] for r in rs] for n, rs in runs.items()},
               "engines": sorted({r["engine"] for rs in runs.values() for r in rs}),
               "same_schedule": len({r["digest"] for rs in runs.values() for r in rs}) == 1,
               "load": _load()}
        rows.append(row)
        print(json.dumps(row), flush=True)
    load_after = _load()
    lines = [f"Compiled loop CPU, two trees — {time.strftime('%Y-%m-%d %H:%M')} UTC, "
             f"{platform.node()}, Python {platform.python_version()}; medians of "
             f"{args.repeats} fresh-process runs per tree with `--loop auto`, alternated; "
             f"before `{trees['before']}`, after `{trees['after']}`; load average before "
             f"{load_before}, after {load_after} (2 cores, shared).", "",
             "| case | jobs | loop | before: loop CPU s | after: loop CPU s | after / before "
             "| same schedule |", "|---|---:|---|---:|---:|---:|---|"]
    for r in rows:
        m = r["loop_cpu_seconds"]
        lines.append(f"| {r['case']} | {r['jobs']:,} | {'/'.join(r['engines'])} | "
                     f"{m['before']:.3f} | {m['after']:.3f} | {r['ratio']:.2f} | "
                     f"{'yes' if r['same_schedule'] else 'NO'} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.with_suffix(".md").write_text(text)
        args.out.with_suffix(".json").write_text(json.dumps(
            {"repeats": args.repeats, "trees": {k: str(v) for k, v in trees.items()},
             "load_before": load_before, "load_after": load_after, "rows": rows},
            indent=1) + "\n")


if __name__ == "__main__":
    main()
