"""The period sweep at 3 h and 9 h with 30 capacity samples (``period_sweep_long.toml``).

Reads ``store_long/*/runs`` and writes ``results/period_long.md`` (per period: each
metric's mean and 95 % interval per strategy, the Friedman ranking over the samples, and
the goodput gain of the best target strategy over the best first-fit one; the table of
means beside the 4-sample sweep's ``results/runs.csv`` rows for 3 h and 9 h) and
``results/period_long_runs.csv``.

Usage: ``python experiments/variable_capacity/period_long.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from analyse import COLS, STRATEGIES, fmt, trace_section  # noqa: E402

from dispatchlab.experiments.collect import stores_table  # noqa: E402


def main() -> None:
    """Write the tables."""
    runs = stores_table(HERE / "store_long")
    runs["period"] = runs["param_period"].astype(int)
    runs[[*COLS, "period"]].to_csv(HERE / "results" / "period_long_runs.csv", index=False)
    lines = ["# Period sweep at 3 h and 9 h, 30 capacity samples", "",
             "`period_long.py` from the store of `period_sweep_long.toml` (Borg 7-day window, "
             "walks of the slides' model, seeds 0–29); intervals are 95 % confidence "
             "intervals of the mean over the samples.", ""]
    for period, sub in runs.groupby("period"):
        lines += trace_section(sub, f"φ = {period} s")
    old = pd.read_csv(HERE / "results" / "runs.csv")
    old = old[old["workload"].str.startswith("borg-7d[period=")]
    lines += ["## Mean goodput: 30 samples beside the earlier 4", "",
              "| period (s) | samples | " + " | ".join(STRATEGIES) + " |",
              "|---|---|" + "---|" * len(STRATEGIES)]
    for label, frame in (("30", runs), ("4 (runs.csv)", old)):
        means = frame.pivot_table(index="period", columns="dispatcher", values="goodput")
        for period, row in means.iterrows():
            if period in (10800, 32400):
                lines.append(f"| {period} | {label} | "
                             + " | ".join(fmt(row[s], "goodput") for s in STRATEGIES) + " |")
    (HERE / "results" / "period_long.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
