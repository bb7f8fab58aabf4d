"""Offered load of the generated days, per resource, test and seed.

Offered load of a resource = Σ over jobs of units × per-unit request × run time, divided
by the machine's capacity of that resource × one day (86,400 s, the generator's arrival
span). Above 1 the day brings more work than the machine can do in a day.

Usage: ``python experiments/thesis_tables/offered_load.py`` → ``results/offered_load.csv``
(one row per test × seed, and a mean row per test) and a summary on stdout.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from dispatchlab.engine.simulator import map_requests
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.workload.load import load_workload

HERE = Path(__file__).resolve().parent
DAY = 86_400
#: test → (platform file, generator spec with {seed}, seeds) as in t413–t415.toml.
TESTS = {
    "t413": ("platforms/eurora-4.toml", "gen:eurora-like:jobs=99,seed={seed},nmax=2", 5),
    "t414": ("platforms/eurora-65.toml", "gen:eurora-like:jobs=330,seed={seed}", 3),
    "t415": ("platforms/eurora-65.toml", "gen:eurora-like:jobs=700,seed={seed}", 2),
}


def offered(test: str, seed: int) -> dict[str, float | int | str]:
    """Offered load per resource of one generated day on the test's machine."""
    plat_file, spec, _ = TESTS[test]
    plat = resolve_platform(HERE / plat_file)
    wl = load_workload(spec.format(seed=seed))
    req = map_requests(wl, plat)
    work = (wl.units[:, None] * req * np.minimum(wl.runtime, wl.walltime)[:, None]).sum(axis=0)
    cap = plat.capacity.sum(axis=0)
    row: dict[str, float | int | str] = {"test": test, "seed": seed}
    for k, name in enumerate(plat.resources):
        row[name] = float(work[k] / (cap[k] * DAY)) if cap[k] else float("nan")
    return row


def main() -> None:
    rows = [offered(t, s) for t, (_, _, n) in TESTS.items() for s in range(n)]
    table = pd.DataFrame(rows)
    means = table.groupby("test", as_index=False).mean(numeric_only=True).assign(seed="mean")
    table = pd.concat([table, means], ignore_index=True)
    table.to_csv(HERE / "results" / "offered_load.csv", index=False, float_format="%.3f")
    print(table.round(2).to_string(index=False))


if __name__ == "__main__":
    main()
