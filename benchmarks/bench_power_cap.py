"""Speed of a rule-based run under a fixed power cap: EASY on the full HPC2N trace.

HPC2N as in ``bench_core.py`` (240 one-core nodes) with the generic node power model (SPEC
§8: idle 95 W, busy 190.74 W); the cap counts idle power. Three runs, all audited off, in
this process, medians reported side by side:

- ``easy`` without a cap (the compiled loop when it qualifies),
- ``easy`` without a cap on the general engine,
- ``easy`` under a cap equal to the full machine's power (never binds: the cost of the
  power bookkeeping alone),
- ``easy`` under a binding cap (general engine: the compiled loop takes no power budget);
  its queues grow long, so EASY's backfill scan costs more per event as well.

Usage: ``python benchmarks/bench_power_cap.py [--repeats 3] [--cap 42000]`` (42,000 W: the
idle machine, 22,800 W, plus the widest job, 200 nodes × 95.74 W, alone; every job can start).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRACE = (HERE.parent / ".." / "shared" / "traces" / "swf" / "HPC2N-2002-2.2-cln.swf.gz").resolve()


def main() -> None:
    from dispatchlab.platform.power import GENERIC
    from dispatchlab.platform.resolve import resolve_platform
    from dispatchlab.simulation import simulate
    from dispatchlab.workload import load_swf
    from dispatchlab.workload.swf import SwfOptions

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    # idle 240 × 95 W = 22,800 W; the widest job (200 nodes) alone adds 200 × 95.74 W
    ap.add_argument("--cap", type=float, default=42_000.0)
    ap.add_argument("--limit", type=int, default=None, help="first N jobs only")
    ap.add_argument("--skip-binding", action="store_true",
                    help="leave out the binding cap (its queues make EASY slow)")
    args = ap.parse_args()
    wl = load_swf(TRACE, SwfOptions(limit=args.limit))
    plat = resolve_platform("nodes=240,cores=1").with_node_model(GENERIC)
    full = 240 * 190.74  # every node busy: the cap never binds, only its bookkeeping runs
    cases = [("easy, no cap", {"engine": "auto"}),
             ("easy, no cap, general", {"engine": "general"}),
             (f"easy, cap {full:.0f} W (never binds)", {"power_cap": full}),
             (f"easy, cap {args.cap:.0f} W (binds)", {"power_cap": args.cap})]
    if args.skip_binding:
        cases = cases[:3]
    print(f"{TRACE.name}: {wl.n_jobs} jobs; load {os.getloadavg()}")
    print("| case | engine | median s | jobs/s | over-cap s | mean wait s |")
    print("|---|---|---|---|---|---|")
    for label, kw in cases:
        times, res = [], None
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            res = simulate(wl, plat, "easy", check=False, tables=False, **kw)  # type: ignore[arg-type]
            times.append(time.perf_counter() - t0)
        assert res is not None
        med = statistics.median(times)
        over = res.summary.get("power", {}).get("over_cap_seconds", "-")
        print(f"| {label} | {res.summary['engine']} | {med:.2f} | {wl.n_jobs / med:,.0f} | "
              f"{over} | {res.summary['mean_wait']:.0f} |", flush=True)
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
