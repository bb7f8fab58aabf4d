"""Tables 5.1 and 5.2 and the utilization-vs-profile figure from ``results/*.json``.

Usage: ``python experiments/dardis/report.py [--results experiments/dardis/results]``;
writes ``tables.md`` and ``utilization_vs_profile.png`` beside the results.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

HERE = Path(__file__).parent
ORDER = ("dardis-throughput", "dardis-balanced", "dardis-profile", "rb-fcfs", "rb-df", "rb-wt")
YEAR = 365 * 86400
#: The thesis's Table 5.1 (MKS days, wait years, tardiness years, late jobs, over-util.,
#: dissimilarity), for the comparison of directions.
THESIS = {
    "dardis-throughput": (11.69, 79.85, 79.58, 14722, 781886, 0.990),
    "dardis-balanced": (178.05, 661.75, 611.38, 12725, 1227779, 0.981),
    "dardis-profile": (200.44, 759.96, 759.46, 13141, 785639, 0.974),
    "rb-fcfs": (19.70, 158.33, 158.70, 29102, 257856, 0.976),
    "rb-df": (19.97, 129.44, 128.47, 30098, 368234, 0.980),
    "rb-wt": (19.93, 116.50, 115.34, 27908, 395657, 0.998),
}


def metrics(row: dict) -> tuple[float, ...]:  # type: ignore[type-arg]
    pm = row["profile_metrics"]
    return (row["makespan_s"] / 86400, row["total_wait_s"] / YEAR,
            pm["tardiness_lst_s"] / YEAR, pm["late_jobs_lst"],
            pm["over_utilization"] / 3600, pm["dissimilarity"],
            pm.get("dissimilarity_to_last_end", float("nan")))


def fmt(values: list[float], digits: int) -> str:
    m = float(np.mean(values))
    if len(values) == 1:
        return f"{m:,.{digits}f}"
    return f"{m:,.{digits}f} ± {float(np.std(values, ddof=1)):,.{digits}f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--results", type=Path, default=HERE / "results")
    args = ap.parse_args()
    rows = [json.loads(p.read_text()) for p in sorted(args.results.glob("*-seed*.json"))]
    by: dict[str, list[dict]] = {}  # type: ignore[type-arg]
    for r in rows:
        by.setdefault(r["setup"], []).append(r)
    names = [n for n in ORDER if n in by]
    digits = (2, 2, 2, 0, 0, 3, 3)
    out = ["## Table 5.1 (ours): mean ± sample std over seeds", "",
           "| setup | runs | MKS (days) | wait (years) | tardiness (years) | late jobs "
           "| over-util. (core-h) | dissimilarity | dissim. to last end |",
           "|---|---|---|---|---|---|---|---|---|"]
    for n in names:
        cols = list(zip(*[metrics(r) for r in by[n]], strict=True))
        out.append(f"| {n} | {len(by[n])} | "
                   + " | ".join(fmt(list(c), d) for c, d in zip(cols, digits, strict=True))
                   + " |")
    out += ["", "Per run:", "", "| setup | seed | MKS (days) | wait (years) | tardiness "
            "(years) | late jobs | over-util. (core-h) | dissimilarity | dissim. to last end "
            "| CPU (s) | wall (s) |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for n in names:
        for r in sorted(by[n], key=lambda r: r["seed"]):
            m = metrics(r)
            out.append(f"| {n} | {r['seed']} | " + " | ".join(
                f"{v:,.{d}f}" for v, d in zip(m, digits, strict=True))
                + f" | {r['cpu_s']:.0f} | {r['wall_s']:.0f} |")
    out += ["", "## Thesis Table 5.1 (35,538 jobs; over-utilization unit not stated)", "",
            "| setup | MKS (days) | wait (years) | tardiness (years) | late jobs | over-util. "
            "| dissimilarity |", "|---|---|---|---|---|---|---|"]
    for n in ORDER:
        out.append(f"| {n} | " + " | ".join(f"{v:,}" for v in THESIS[n]) + " |")
    out += ["", "## Table 5.2 (ours): overhead in seconds, mean (std)", "",
            "| | per | mean (s) | std (s) |", "|---|---|---|---|"]
    for n in names:
        if n.startswith("dardis"):
            for part in ("scheduling", "dispatching", "backfilling"):
                st = [r["dispatcher_stats"].get(part) for r in by[n]]
                st = [s for s in st if s and s["mean_s"] > 0]
                if st:
                    out.append(f"| {n} {part} | protocol round | "
                               f"{np.mean([s['mean_s'] for s in st]):.5f} | "
                               f"{np.mean([s['std_s'] for s in st]):.5f} |")
            msgs = np.mean([r["dispatcher_stats"]["messages"] for r in by[n]])
            rounds = np.mean([r["dispatcher_stats"]["rounds"] for r in by[n]])
            out.append(f"| {n} messages | run | {msgs:,.0f} ({rounds:,.0f} rounds) | |")
        out.append(f"| {n} whole decision | decision point | "
                   f"{np.mean([r['decision_s']['mean'] for r in by[n]]):.5f} | "
                   f"{np.mean([r['decision_s']['std'] for r in by[n]]):.5f} |")
    out += ["", "Thesis Table 5.2: DARDIS scheduling 0.018 (0.129), dispatching 0.006 "
            "(0.025), rule-based total 5.356 (5.077) s."]
    (args.results.parent / "tables.md").write_text("\n".join(out) + "\n")
    print("\n".join(out))
    figure(by, names, args.results.parent / "utilization_vs_profile.png")


def figure(by: dict, names: list[str], path: Path) -> None:  # type: ignore[type-arg]
    """Hourly used cores of the first seed of each setup against the desired profile,
    over the first 30 days."""
    days = 30
    fig = Figure(figsize=(11, 1.6 * len(names) + 1))
    axes = fig.subplots(len(names), 1, sharex=True, sharey=True, squeeze=False)[:, 0]
    hours = np.arange(days * 24)
    local = hours % 24
    desired = np.where((local >= 8) & (local < 18), 0.6, 1.0) * 100
    for ax, n in zip(axes, names, strict=True):
        r = min(by[n], key=lambda r: r["seed"])
        used = np.zeros(len(hours))
        h = np.array(r["hourly_used_cores"])[:len(hours)]
        used[:len(h)] = h / (300 * 32) * 100
        ax.fill_between(hours / 24, used, step="post", alpha=0.4, lw=0)
        ax.step(hours / 24, desired, where="post", color="black", lw=0.8, ls="--")
        ax.set_ylim(0, 110)
        ax.text(0.005, 0.93, n, transform=ax.transAxes, va="top", fontsize=9,
                bbox={"facecolor": "white", "alpha": 0.8, "lw": 0})
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("days since the window's first midnight")
    fig.supylabel("cores in use (%), hourly mean")
    fig.suptitle("Utilization against the desired day/night profile (dashed)")
    fig.savefig(path, dpi=110, bbox_inches="tight")


if __name__ == "__main__":
    main()
