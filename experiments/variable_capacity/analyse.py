"""Tables and plots of the variable-capacity case study from the run stores.

Reads every finished run under ``store/*/runs`` (``dispatchlab run-experiment`` of the
``*.toml`` files here), and writes to ``results/``:

- ``runs.csv`` — one row per run (workload, capacity sample = seed, period, strategy, the
  metrics): the per-instance results;
- ``summary.md`` — per trace: mean and 95 % interval of each metric per strategy, the
  Friedman ranking over the capacity samples (mean ranks, p-value, Holm-adjusted pairwise
  differences), and the goodput gain of the best target strategy over the best first-fit
  one, sample by sample; the period sweep table;
- ``case_study.png`` (goodput, max stretch, aborted volume per strategy and trace) and
  ``period_sweep.png`` (goodput against the period).

Usage: ``python experiments/variable_capacity/analyse.py``.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from dispatchlab.experiments.collect import stores_table
from dispatchlab.stats.ranking import analyze_sets

HERE = Path(__file__).resolve().parent
STRATEGIES = ["ff-aware", "ff-unaware", "target-stretch", "target-asap", "packed-target-asap"]
METRICS = ["goodput", "max_stretch", "aborted_volume", "mean_stretch", "utilization_alive"]
COLS = ["experiment", "workload", "seed", "dispatcher", *METRICS, "aborted_count",
        "mean_alive_nodes", "sim_seconds"]


def load() -> pd.DataFrame:
    """Every finished run of every store."""
    runs = stores_table(HERE / "store")
    if "param_period" not in runs:
        runs["param_period"] = np.nan
    runs["period"] = runs["param_period"].fillna(1200).astype(int)
    return runs


def fmt(v: float, metric: str) -> str:
    """A metric value as shown in the tables."""
    if metric in ("goodput", "utilization_alive"):
        return f"{100 * v:.1f} %"
    if metric == "aborted_volume":
        return f"{v / 3600:,.0f} core-h"
    return f"{v:.1f}"


def trace_section(sub: pd.DataFrame, name: str) -> list[str]:
    """Means, intervals and rankings of one trace."""
    st = analyze_sets(sub, METRICS, order=STRATEGIES)
    n = sub["seed"].nunique()
    out = [f"### {name} ({n} capacity samples)", "",
           "| strategy | " + " | ".join(METRICS) + " |",
           "|---|" + "---|" * len(METRICS)]
    m = st.means.set_index(["dispatcher", "metric"])
    for d in STRATEGIES:
        if d not in sub["dispatcher"].values:
            continue
        cells = []
        for k in METRICS:
            r = m.loc[(d, k)]
            cells.append(f"{fmt(r['mean'], k)} [{fmt(r['ci_low'], k)}, "
                         f"{fmt(r['ci_high'], k)}]")
        out.append(f"| {d} | " + " | ".join(cells) + " |")
    out.append("")
    for k in ("goodput", "max_stretch", "aborted_volume"):
        rk = st.rankings[k]
        f = rk.friedman
        ranks = ", ".join(f"{row.name} {row.mean_rank:.2f} (tier {row.tier})" for row in rk.rows)
        out.append(f"- Friedman on {k} ({'higher' if not rk.lower_is_better else 'lower'} "
                   f"is better; {rk.n_blocks} samples): p = {f.p_value:.2g}; mean ranks "
                   f"(1 = best): {ranks}.")
    wide = sub.pivot_table(index="seed", columns="dispatcher", values="goodput")
    out += ["", "Goodput gain, sample by sample (median [min, max] over the capacity samples):",
            "", "| strategy | over ff-aware | over ff-unaware |", "|---|---|---|"]
    for d in STRATEGIES[2:]:
        if d not in wide:
            continue
        cells = []
        for base in ("ff-aware", "ff-unaware"):
            g = 100 * (wide[d] / wide[base] - 1)
            cells.append(f"{g.median():+.1f} % [{g.min():+.1f}, {g.max():+.1f}]")
        out.append(f"| {d} | " + " | ".join(cells) + " |")
    out.append("")
    return out


def period_section(runs: pd.DataFrame) -> list[str]:
    """Goodput per period and strategy (Borg 7-day window)."""
    sw = runs[runs["experiment"] == "variable-capacity-period"]
    if not len(sw):
        return []
    n = sw.groupby("period")["seed"].nunique()
    out: list[str] = []
    for metric in ("goodput", "aborted_volume", "max_stretch"):
        t = sw.pivot_table(index="period", columns="dispatcher", values=metric,
                           aggfunc="mean")
        out += [f"### Period sweep (Borg 7-day window; mean {metric})", "",
                "| period (s) | samples | " + " | ".join(c for c in STRATEGIES if c in t)
                + " |", "|---|---|" + "---|" * sum(c in t for c in STRATEGIES)]
        for p, row in t.iterrows():
            out.append(f"| {p} | {n[p]} | " + " | ".join(fmt(row[c], metric)
                                                         for c in STRATEGIES if c in t) + " |")
        out.append("")
    return out


def plots(runs: pd.DataFrame) -> None:
    """The case-study bars and the period curve."""
    cs = runs[runs["experiment"] != "variable-capacity-period"]
    traces = sorted(dict.fromkeys(cs["workload"]), key=_trace_order)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    width = 0.8 / len(STRATEGIES)
    for ax, metric in zip(axes, ("goodput", "max_stretch", "aborted_volume"), strict=True):
        for i, d in enumerate(STRATEGIES):
            means, errs = [], []
            for tr in traces:
                v = cs[(cs["workload"] == tr) & (cs["dispatcher"] == d)][metric].to_numpy()
                v = v / 3600 if metric == "aborted_volume" else v
                means.append(v.mean() if len(v) else np.nan)
                errs.append(1.96 * v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else 0)
            ax.bar(np.arange(len(traces)) + i * width, means, width, yerr=errs, label=d,
                   capsize=2)
        ax.set_xticks(np.arange(len(traces)) + 0.4 - width / 2, traces, rotation=20)
        ax.set_title({"goodput": "goodput", "max_stretch": "max stretch",
                      "aborted_volume": "aborted volume (core-h)"}[metric])
        if metric == "goodput":
            ax.set_ylim(0.6, 1.0)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(HERE / "results" / "case_study.png", dpi=110)
    sw = runs[runs["experiment"] == "variable-capacity-period"]
    if len(sw):
        fig, ax = plt.subplots(figsize=(6, 4))
        for d in STRATEGIES:
            g = sw[sw["dispatcher"] == d].groupby("period")["goodput"]
            ax.errorbar(g.mean().index, g.mean().to_numpy(),
                        yerr=(1.96 * g.std(ddof=1) / np.sqrt(g.count())).to_numpy(),
                        marker="o", label=d, capsize=2)
        ax.set_xscale("log")
        ax.set_xlabel("period φ of the capacity walk (s)")
        ax.set_ylabel("goodput")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(HERE / "results" / "period_sweep.png", dpi=110)


def _trace_order(name: str) -> tuple[int, str]:
    return (["borg-7d", "borg-14d", "synt-log", "synt-uniform", "synt-three"].index(name)
            if name in ("borg-7d", "borg-14d", "synt-log", "synt-uniform", "synt-three")
            else 9, name)


def main() -> None:
    """Write results/."""
    (HERE / "results").mkdir(exist_ok=True)
    runs = load()
    runs[[c for c in [*COLS, "period"] if c in runs]].to_csv(HERE / "results" / "runs.csv",
                                                             index=False)
    lines = ["# Variable-capacity case study: results", "",
             "Generated by `analyse.py` from the run stores; intervals are 95 % confidence "
             "intervals of the mean over the capacity samples.", ""]
    cs = runs[runs["experiment"] != "variable-capacity-period"]
    for tr in sorted(dict.fromkeys(cs["workload"]), key=_trace_order):
        lines += trace_section(cs[cs["workload"] == tr], tr)
    lines += period_section(runs)
    (HERE / "results" / "summary.md").write_text("\n".join(lines))
    plots(runs)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
