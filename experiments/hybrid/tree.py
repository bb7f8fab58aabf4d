"""The zone decision tree of thesis §6.8.3 on our plans: when does raising utilization
pay?

Items: for each ch. 7 workload, day and scenario (summer / winter × air / hybrid), the
day's jobs (submitted that day, logged run times, as the thesis's offline study) planned
by the planner's job-based heuristic (Alg. 5, arrival order) — the thesis used
Delay-Search's near-optimal plans, which are not available here yet. Each day is labelled
by whether its mean IT power (the jobs' power, as the thesis's model) went past the PUE
table's slope change at the day's mean temperature; the tree learns the label from the
previous day's utilization, the cooling type and the temperature.

    .venv/bin/python experiments/hybrid/tree.py     # results/tree.json, printed tree
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from dispatchlab.dispatchers.hybrid.decision_tree import Schedule, daily_features, fit_tree
from dispatchlab.dispatchers.offline_plan.planner.heuristic import heuristic
from dispatchlab.dispatchers.offline_plan.planner.instance import from_workload
from dispatchlab.energy.cooling import pue_table
from dispatchlab.energy.profit import THESIS_PRICES
from dispatchlab.engine.temperature import season_profile
from dispatchlab.platform.presets import thesis_300
from dispatchlab.workload.load import load_workload

HERE = Path(__file__).resolve().parent
DAY = 86_400


def plan_days(name: str) -> tuple[Schedule, int]:
    """Every day's jobs planned from the day's start (days planned independently, as
    the pipeline does), joined into one schedule."""
    wl = load_workload(f"gen:curie-thesis:level=ch7-{name},seed=0")
    plat = thesis_300()
    days = int(wl.submit.max()) // DAY + 1
    starts, ends, cores, power = [], [], [], []
    for d in range(days):
        rows = np.flatnonzero((wl.submit >= d * DAY) & (wl.submit < (d + 1) * DAY))
        if not len(rows):
            continue
        inst = from_workload(wl, plat, rows, duration="runtime", origin=d * DAY, step=300)
        order = np.argsort(inst.submit, kind="stable")
        sched = heuristic(inst, order)
        assert sched is not None
        plan = sched.to_plan(inst)
        starts.append(plan.starts)
        ends.append(plan.ends)
        cores.append((plan.units * plan.cores_per_unit).astype(float))
        power.append(plan.power)
    return Schedule(np.concatenate(starts), np.concatenate(ends), np.concatenate(cores),
                    np.concatenate(power), int(plat.capacity[:, 0].sum())), days


def main() -> None:
    rows = []
    for name in ("low", "medium", "high"):
        sched, days = plan_days(name)
        for season in ("summer", "winter"):
            temp = season_profile(season, days=days + 1, seed=1)
            for cool in ("air", "hybrid"):
                table = pue_table(cool).scaled(9600 * 11.11)
                df = daily_features(sched, temp, table, THESIS_PRICES["cheap"], 0, days,
                                    hybrid=cool == "hybrid")
                df["workload"], df["season"], df["cooling"] = name, season, cool
                rows.append(df)
    data = pd.concat(rows, ignore_index=True)
    res = fit_tree(data, seed=1)
    counts = data.dropna(subset=["prev_utilization"]).groupby(
        ["cooling", "season", "label"]).size()
    out = {"items": res.n_items, "accuracy_cv": res.accuracy, "accuracy_std": res.accuracy_std,
           "utilization_thresholds": res.thresholds, "tree": res.text,
           "labels": {" / ".join(k): int(v) for k, v in counts.items()}}
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "tree.json").write_text(json.dumps(out, indent=1))
    data.to_csv(HERE / "results" / "tree_items.csv", index=False)
    print(json.dumps({k: v for k, v in out.items() if k != "tree"}, indent=1))
    print(res.text)


if __name__ == "__main__":
    main()
