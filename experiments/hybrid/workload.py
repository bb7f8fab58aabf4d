"""The three Curie workloads of thesis ch. 7 (§7.6), written to ``data/``.

The thesis: low 3,207 jobs in 30 days, medium 8,125 in 30 days, high 10,892 in 23 days,
on 300 fat nodes; which days it took is not said. From the fat-node (``large``)
partition of the cleaned 2012 Curie log, with the job preparation of the ch. 6
generator (``gen:curie-thesis``: units, wall-times, U(7.8, 11.11) W per core, times
from Paris midnight):

- **medium**: ``gen:curie-thesis:level=low`` — 30 days from 2012-07-11, 8,165 jobs
  (offered load 0.62 of 9,600 cores);
- **high**: the 23 days from 2012-03-07, 10,861 jobs (load 0.98), the 23-day window
  whose count is closest to 10,892;
- **low**: no 30-day window holds as few as 3,207 jobs (the fewest: 4,670 from
  2012-02-06, load 0.61); we take that window and keep 3,207 of its jobs drawn
  uniformly at random (seed 0), load ≈ 0.42 — a thinning, not a window of the log.

    .venv/bin/python experiments/hybrid/workload.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dispatchlab.workload.generators import curie_thesis as ct
from dispatchlab.workload.load import save_workload

HERE = Path(__file__).resolve().parent
#: name → (first day, days, keep this many jobs at random or None)
CH7 = {"low": ("2012-02-06", 30, 3207), "medium": ("2012-07-11", 30, None),
       "high": ("2012-03-07", 23, None)}


def build(name: str, seed: int = 0):  # type: ignore[no-untyped-def]
    """The ch. 7 workload ``name`` (job power drawn with ``seed``)."""
    first, days, keep = CH7[name]
    key = f"ch7-{name}"
    ct.LEVELS[key] = (first, days, None)  # a window of every job, as the ch. 6 'low'
    try:
        wl = ct.curie_thesis(key, seed=seed)
    finally:
        del ct.LEVELS[key]
    if keep is not None:
        rows = np.sort(np.random.default_rng(0).choice(wl.n_jobs, keep, replace=False))
        wl = wl.take(rows)
    return wl


def main() -> None:
    out = HERE / "data"
    out.mkdir(exist_ok=True)
    for name in CH7:
        wl = build(name)
        path = save_workload(wl, out / f"curie-ch7-{name}.parquet")
        days = CH7[name][1]
        load = float((wl.units * wl.req[:, 0] * wl.runtime).sum()) / (9600 * days * 86400)
        print(f"{name}: {wl.n_jobs} jobs, offered load {load:.3f} -> {path}")


if __name__ == "__main__":
    main()
