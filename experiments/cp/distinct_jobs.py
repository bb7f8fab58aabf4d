"""How many distinct jobs a set of Eurora batches holds (the batches overlap).

Each historical batch is a window of the same Eurora log, so consecutive batches share
jobs. Counts job records (every batch's jobs, as the pooled tables count them) and
distinct PBS job ids among them, both over all records and over the records the Eurora
platform can host (the others are rejected with ``on_infeasible = "reject"``); optionally
for the jobs of one queue.

Usage::

    python experiments/cp/distinct_jobs.py experiments/cp/results/eurora_hist/results.csv
    python experiments/cp/distinct_jobs.py --all-batches --queue np_longpar --out FILE.csv

With a ``results.csv`` the batches are those every dispatcher finished (as
``report_eurora.py`` pools them); ``--all-batches`` takes all 206 historical batches.
Writes one row per batch (records, hostable records, new distinct ids) and a total row
(with how many of the batches the most repeated job, and the median job, appear in).
"""

from __future__ import annotations

import argparse
from collections import Counter
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from dispatchlab.engine.simulator import map_requests
from dispatchlab.platform.platform import Platform, units_fitting
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.workload import Workload
from dispatchlab.workload.eurora import list_eurora_batches
from dispatchlab.workload.load import load_workload

HERE = Path(__file__).resolve().parent
TRACES = (HERE.parents[1] / ".." / "shared" / "traces" / "eurora" / "job_instances"
          / "historical_traces").resolve()


@cache
def load(path: Path) -> Workload:
    """A batch, loaded once per process (counts per queue reuse it)."""
    return load_workload(path)


def hostable(wl: Workload, plat: Platform) -> np.ndarray:
    """Which jobs the empty platform can host (enough nodes for their units), as the
    engine decides before a run."""
    req = map_requests(wl, plat)
    fit = np.array([int(units_fitting(plat.capacity, row).sum()) for row in req])
    return np.asarray(wl.min_units <= fit)


def complete_batches(results: Path) -> list[tuple[str, Path]]:
    """(name, path) of the batches on which every dispatcher of ``results`` finished."""
    runs = pd.read_csv(results)
    n = runs["dispatcher"].nunique()
    done = runs.groupby("workload")["dispatcher"].nunique()
    names = set(done[done == n].index)
    first = runs.drop_duplicates("workload")
    return [(w, Path(p)) for w, p in zip(first["workload"], first["workload_path"],
                                           strict=True) if w in names]


def count(batches: list[tuple[str, Path]], queue: str | None,
          platform: str = "eurora") -> pd.DataFrame:
    """One row per batch and a total: records, hostable records, distinct ids."""
    plat = resolve_platform(platform)
    seen: set[int] = set()
    seen_ok: set[int] = set()
    copies: Counter[int] = Counter()
    rows = []
    for name, path in batches:
        wl = load(path)
        ok = hostable(wl, plat)
        keep = np.ones(wl.n_jobs, bool)
        if queue is not None:
            names = [q.name for q in wl.queues]
            keep = np.array([names[q] == queue for q in wl.queue])
        ids = wl.job_id[keep]
        ids_ok = wl.job_id[keep & ok]
        new = len(set(ids.tolist()) - seen)
        new_ok = len(set(ids_ok.tolist()) - seen_ok)
        copies.update(set(ids.tolist()))
        seen.update(ids.tolist())
        seen_ok.update(ids_ok.tolist())
        rows.append({"batch": name, "records": int(keep.sum()),
                     "hostable_records": int((keep & ok).sum()),
                     "new_distinct": new, "new_distinct_hostable": new_ok})
    table = pd.DataFrame(rows)
    total = {"batch": "TOTAL", "records": int(table["records"].sum()),
             "hostable_records": int(table["hostable_records"].sum()),
             "new_distinct": len(seen), "new_distinct_hostable": len(seen_ok),
             "max_copies": max(copies.values(), default=0),
             "median_copies": float(np.median(list(copies.values()))) if copies else 0.0}
    return pd.concat([table, pd.DataFrame([total])], ignore_index=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", nargs="?", type=Path, help="a results.csv of a campaign")
    ap.add_argument("--all-batches", action="store_true", help="all historical batches")
    ap.add_argument("--queue", help="count only the jobs of this queue")
    ap.add_argument("--out", type=Path, help="write the table here (CSV)")
    args = ap.parse_args()
    if args.all_batches:
        batches = [(f"{p.parent.name}/{p.name}", p) for p in list_eurora_batches(TRACES)]
    elif args.results is not None:
        batches = complete_batches(args.results)
    else:
        ap.error("give a results.csv or --all-batches")
    table = count(batches, args.queue)
    if args.out is not None:
        table.to_csv(args.out, index=False)
    tot = table.iloc[-1]
    print(f"{len(batches)} batches: {tot['records']} records ({tot['hostable_records']} "
          f"hostable), {tot['new_distinct']} distinct jobs ({tot['new_distinct_hostable']} "
          f"hostable); a job appears in up to {int(tot['max_copies'])} batches (median "
          f"{tot['median_copies']:g})" + (f", queue {args.queue}" if args.queue else ""))


if __name__ == "__main__":
    main()
