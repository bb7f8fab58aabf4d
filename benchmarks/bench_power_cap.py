"""Speed of a rule-based run under a fixed power cap: EASY on the full HPC2N trace.

HPC2N as in ``bench_core.py`` (240 one-core nodes) with the generic node power model (SPEC
§8: idle 95 W, busy 190.74 W); the cap counts idle power. All runs audited off, in this
process, medians reported side by side with two figures each: the engine's own time
(``summary["sim_seconds"]``, the loop and its recording: what ``jobs_per_second``
reports) and the whole ``simulate()`` call (results, energy accounting included):

- ``easy`` without a cap (compiled loop),
- ``easy`` under a cap equal to the full machine's power (never binds: the cost of the
  power bookkeeping alone), compiled,
- ``easy`` under a cap that binds mildly (``--cap``, 44,000 W), compiled and general,
- ``easy`` under a cap that overloads the machine (``--hard-cap``, 42,000 W: the idle
  machine, 22,800 W, plus the widest job, 200 nodes × 95.74 W; its queue holds thousands of
  jobs and EASY's backfill scans all of them at every event), compiled, one run.

Usage: ``python benchmarks/bench_power_cap.py [--repeats 3] [--cap 44000] [--hard-cap
42000] [--skip-slow]`` (``--skip-slow`` leaves out the general-engine and hard-cap runs).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Any

from script_args import keep_output, ready, runner_options

HERE = Path(__file__).resolve().parent
TRACE = (HERE.parent / ".." / "shared" / "traces" / "swf" / "HPC2N-2002-2.2-cln.swf.gz").resolve()


def main() -> None:
    from dispatchlab.dispatchers.rule_based.compiled.kernel import kernel_kind
    from dispatchlab.platform.power import GENERIC
    from dispatchlab.platform.resolve import resolve_platform
    from dispatchlab.simulation import simulate
    from dispatchlab.workload import load_swf
    from dispatchlab.workload.swf import SwfOptions

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cap", type=float, default=44_000.0)
    ap.add_argument("--hard-cap", type=float, default=42_000.0)
    ap.add_argument("--limit", type=int, default=None, help="first N jobs only")
    ap.add_argument("--skip-slow", action="store_true",
                    help="leave out the general engine and the hard cap")
    runner_options(ap)
    args = ap.parse_args()
    ready(args, TRACE)
    keep_output(args.out)
    wl = load_swf(TRACE, SwfOptions(limit=args.limit))
    plat = resolve_platform("nodes=240,cores=1").with_node_model(GENERIC)
    full = 240 * 190.74  # every node busy: the cap never binds, only its bookkeeping runs
    cases: list[tuple[str, dict[str, Any], int]] = [
        ("easy, no cap", {}, args.repeats),
        (f"easy, cap {full:.0f} W (never binds)", {"power_cap": full}, args.repeats),
        (f"easy, cap {args.cap:.0f} W (binds)", {"power_cap": args.cap}, args.repeats),
    ]
    if not args.skip_slow:
        cases += [
            (f"easy, cap {args.cap:.0f} W (binds), general",
             {"power_cap": args.cap, "engine": "general"}, 1),
            (f"easy, cap {args.hard_cap:.0f} W (overloads)", {"power_cap": args.hard_cap}, 1),
        ]
    simulate(wl, plat, "easy", check=False, tables=False, power_cap=full)  # load kernels
    print(f"{TRACE.name}: {wl.n_jobs} jobs; kernel {kernel_kind()}; load {os.getloadavg()}")
    print("| case | engine | runs | engine s | engine jobs/s | simulate() s | simulate() "
          "jobs/s | peak W | mean wait s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, kw, repeats in cases:
        wall, loop, res = [], [], None
        for _ in range(repeats):
            t0 = time.perf_counter()
            res = simulate(wl, plat, "easy", check=False, tables=False, **kw)
            wall.append(time.perf_counter() - t0)
            loop.append(res.summary["sim_seconds"])
        assert res is not None
        w, s = statistics.median(wall), statistics.median(loop)
        peak = res.summary.get("power", {}).get("peak_w")
        print(f"| {label} | {res.summary['loop']} | {repeats} | {s:.2f} | "
              f"{wl.n_jobs / s:,.0f} | {w:.2f} | {wl.n_jobs / w:,.0f} | "
              f"{'-' if peak is None else f'{peak:,.0f}'} | {res.summary['mean_wait']:.0f} |",
              flush=True)
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
