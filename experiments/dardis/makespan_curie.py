"""Why DARDIS's makespan is long on the ch. 7 Curie workloads (docs/dardis.md,
"Makespan on Curie"): ``dardis-throughput`` against EASY and FIFO on the first DAYS days
of a workload, with the two knobs that isolate the cause (more retry windows, the
thesis's whole backfilling window), and, for the preset, the machine's busy share per
day beside the jobs waiting.

    .venv/bin/python experiments/dardis/makespan_curie.py --workload medium --days 10
    .venv/bin/python experiments/dardis/makespan_curie.py --workload high --days 40 \
        --setups easy dardis-throughput last_resort=nodes --ewt 3600

Every job's latest start is ``arrival + EWT``: by default the workload's queue, the mean
wait of the log's ``large`` partition (11,400 s, the thesis's ``aqt(partition)``, §5.5);
``--ewt`` sets another (the first figures of docs/dardis.md used 3,600).

Makespan here is the last job end, in days from the first day's midnight.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from dispatchlab.dispatchers.base import Dispatcher
from dispatchlab.dispatchers.dardis import Dardis
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.simulation import simulate
from dispatchlab.workload.workload import Queue

HYBRID = Path(__file__).resolve().parents[1] / "hybrid"
sys.path.insert(0, str(HYBRID))
from workload import build  # noqa: E402  (experiments/hybrid/workload.py)

DAY = 86_400


def setups() -> dict[str, Dispatcher | str]:
    """Rule-based references, the preset, and the preset with one knob changed."""
    def throughput(**kw: object) -> Dardis:
        return Dardis("first", "min-start", backfill=True, depth=32, **kw)  # type: ignore[arg-type]

    return {"easy": "easy", "fifo": "fifo", "dardis-throughput": "dardis-throughput",
            "retries=6": throughput(retries=6),
            "full_window": throughput(full_window=True),
            "retries=6 + full_window": throughput(retries=6, full_window=True),
            "last_resort=nodes": throughput(last_resort="nodes")}


def busy_by_day(wl, start: np.ndarray) -> list[tuple[int, float, float]]:  # type: ignore[no-untyped-def]
    """Per day: mean busy share of 9,600 cores and mean number of waiting jobs (hourly)."""
    end = start + wl.runtime
    cores = wl.units * wl.req[:, 0]
    out = []
    for d in range(int(end.max() // DAY) + 1):
        ts = np.arange(d * DAY, (d + 1) * DAY, 3600)
        busy = [cores[(start <= t) & (end > t)].sum() / 9600 for t in ts]
        waiting = [((wl.submit <= t) & (start > t)).sum() for t in ts]
        out.append((d, float(np.mean(busy)), float(np.mean(waiting))))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--workload", default="medium", choices=("low", "medium", "high"))
    ap.add_argument("--days", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--setups", nargs="*", default=None, help="run only these setups")
    ap.add_argument("--ewt", type=int, default=None, help="latest start = arrival + EWT s")
    args = ap.parse_args()
    wl = build(args.workload)
    wl = wl.take(np.flatnonzero(wl.submit < args.days * DAY))
    if args.ewt is not None:
        wl = replace(wl, queues=tuple(Queue(q.name, args.ewt) for q in wl.queues))
    plat = resolve_platform(str(HYBRID / "thesis300-power.toml"))
    print(f"{args.workload}, first {args.days} days: {wl.n_jobs} jobs, queue ewt "
          f"{sorted(set(wl.ewt().tolist()))} s, median wall-time / run time "
          f"{float(np.median(wl.walltime / np.maximum(wl.runtime, 1))):.1f}")
    print("| setup | makespan (d) | retried | after last termination | backfill moves | s |")
    print("|---|---|---|---|---|---|")
    chosen = {k: v for k, v in setups().items() if args.setups is None or k in args.setups}
    days: list[tuple[int, float, float]] = []
    for name, disp in chosen.items():
        t0 = time.perf_counter()
        res = simulate(wl, plat, disp, seed=args.seed, loop="general")
        wall = time.perf_counter() - t0
        start = res.recorder.start_time
        span = float((start + wl.runtime).max()) / DAY
        st = res.summary.get("dispatcher_stats", {})
        print(f"| {name} | {span:.2f} | {st.get('retried_jobs', '')} | "
              f"{st.get('after_last_termination', '')} | {st.get('backfill_moves', '')} | "
              f"{wall:.1f} |", flush=True)
        if name == "dardis-throughput":
            days = busy_by_day(wl, start)
    if not days:
        return
    print("\ndardis-throughput, per day: busy share of the cores, jobs waiting (hourly means)")
    for d, busy, waiting in days:
        print(f"day {d:2d}: busy {busy:.2f}, waiting {waiting:.0f}")


if __name__ == "__main__":
    main()
