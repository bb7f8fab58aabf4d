"""Tables, figures and claim counts of the power-capping study from the run stores.

Reads every finished run under ``results/store/*/runs`` (``dispatchlab run-experiment`` of
the ``campaign_*.toml`` files) and writes to ``results/``:

- ``runs.csv`` — one row per run: platform, set, size, instance, cap (W and share of the
  machine's full power), dispatcher, the mean weighted queue time in EWT units (each job's
  wait ÷ its queue's expected wait, averaged over the instance's jobs: §6.1's metric),
  mean wait, energy, decision (solver) time and the dispatcher's solver statistics;
- ``pooled.csv`` — per platform, set, size, cap and dispatcher: instances, mean of the
  metric, and the paper's ratio ``PRB / method`` of the mean metrics over the instances
  both ran (``pairs``; > 1: the method waits less than PRB), with per-instance counts of
  better / equal / worse than PRB;
- ``claims.md`` — the paper's statements checked instance by instance (counts);
- ``solver_times.csv`` — decision time per run, per dispatcher and size (median, p90, max);
- ``tables.md`` — the numbers behind Figures 1–5 (per cap: pairs, ratios, counts) and the
  solver times;
- ``fig<N>_<platform>_<set>.png`` — the paper's Figures 1–5: the ratio PRB / DEC_feedBack
  (solid) and PRB / DEC_noFeedBack (dashed) against the cap, a colour per size (the
  rule-based baselines as thin faded lines); ``wqt_<platform>_<set>.png``
  — the metric itself per dispatcher against the cap.

Usage: ``python experiments/power_capping/analyse.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from dispatchlab.experiments.collect import stores_table
from dispatchlab.report.format import markdown_table

HERE = Path(__file__).resolve().parent
OUT = HERE / "results"
NAME = re.compile(r"^(?P<set>[A-Za-z]+)_(?P<size>\d+)_i(?P<instance>\d+)_cap(?P<cap>\d+)$")
PRB = "prb-power"
HYBRID = ("dec-feedback", "dec")
BASELINES = ("easy-power", "easy")
#: The paper's figures: number → (platform, set, sizes shown).
FIGURES = {1: ("eurora-8", "base", (25, 50)), 2: ("eurora-8", "highLoad", (25, 50)),
           3: ("eurora-8", "manyUnits", (25, 50)), 4: ("eurora-32", "base", (40, 100)),
           5: ("eurora-32", "highLoad", (40, 100))}
#: Relative difference below which two mean weighted queue times count as equal.
TIE = 0.01
COLS = ["platform", "set", "size", "instance", "cap_w", "cap_share", "dispatcher",
        "mean_weighted_queue_time", "mean_wait", "makespan", "energy_kwh", "jobs_run",
        "dispatch_time_total_s", "dispatch_time_max_ms", "run_seconds", "experiment", "run"]


def load() -> pd.DataFrame:
    """Every finished run of every store, with the instance fields parsed from its name."""
    runs = stores_table(OUT / "store")
    fields = runs["workload"].str.extract(NAME)
    runs = pd.concat([runs, fields], axis=1)
    runs["size"] = runs["size"].astype(int)
    runs["instance"] = runs["instance"].astype(int)
    runs["cap_w"] = runs["cap"].astype(int)
    index = pd.read_csv(HERE / "instances" / "index.csv").drop_duplicates("platform")
    full = dict(zip(index["platform"], index["full_w"], strict=True))
    runs["cap_share"] = (runs["cap_w"] / runs["platform"].map(full)).round(2)
    extra = [c for c in runs.columns if c.startswith("dispatcher_") and c != "dispatcher_spec"]
    # a configuration run twice (two stores) keeps its latest copy
    runs = runs.drop_duplicates(["platform", "set", "size", "instance", "cap_w", "dispatcher"],
                                keep="last")
    return runs[COLS + extra].sort_values(["platform", "set", "size", "cap_w", "instance",
                                           "dispatcher"]).reset_index(drop=True)


def compare(runs: pd.DataFrame, other: str) -> pd.DataFrame:
    """Per (platform, set, size, cap, instance): PRB's and ``other``'s metric side by side."""
    key = ["platform", "set", "size", "cap_w", "cap_share", "instance"]
    a = runs[runs.dispatcher == PRB].set_index(key)["mean_weighted_queue_time"]
    b = runs[runs.dispatcher == other].set_index(key)["mean_weighted_queue_time"]
    both = pd.concat([a.rename("prb"), b.rename("other")], axis=1, join="inner").reset_index()
    scale = np.maximum(both[["prb", "other"]].max(axis=1), 1e-12)
    diff = (both["prb"] - both["other"]) / scale
    both["verdict"] = np.where(diff > TIE, "better", np.where(diff < -TIE, "worse", "equal"))
    both["method"] = other
    return both


def pooled(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean metric per group and dispatcher (all its instances), and for each method the
    paper's ratio PRB / method of the mean metrics over the instances both ran (paired),
    with per-instance counts of better / equal / worse than PRB."""
    key = ["platform", "set", "size", "cap_w", "cap_share"]
    out = runs.groupby([*key, "dispatcher"]).agg(
        instances=("instance", "nunique"),
        mean_wqt=("mean_weighted_queue_time", "mean"),
        mean_wait_s=("mean_wait", "mean"),
        energy_kwh=("energy_kwh", "mean")).reset_index()
    parts = []
    for d in out.dispatcher.unique():
        if d == PRB:
            continue
        c = compare(runs, d)
        g = c.groupby(key)
        part = g.agg(pairs=("instance", "size"), prb_paired=("prb", "mean"),
                     method_paired=("other", "mean")).join(
            g["verdict"].value_counts().unstack(fill_value=0)
            .reindex(columns=["better", "equal", "worse"], fill_value=0)).reset_index()
        part["dispatcher"] = d
        parts.append(part)
    if parts:
        out = out.merge(pd.concat(parts), on=[*key, "dispatcher"], how="left")
        out["ratio_prb_over"] = out.prb_paired / out.method_paired.where(out.method_paired > 0)
        counts = ["pairs", "better", "equal", "worse"]
        out[counts] = out[counts].astype("Int64")
    return out


def ratio_figure(table: pd.DataFrame, number: int, platform: str, name: str,
                 sizes: tuple[int, ...]) -> Path | None:
    """The paper's figure: PRB / method ratio of the mean metric against the cap."""
    part = table[(table.platform == platform) & (table.set == name)]
    if part.empty:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4.2), layout="constrained")
    styles = {"dec-feedback": "-", "dec": "--", "easy-power": ":", "easy": "-."}
    colors = plt.get_cmap("tab10")
    for k, size in enumerate(sizes):
        for d, ls in styles.items():
            s = part[(part["size"] == size) & (part.dispatcher == d)].sort_values("cap_w")
            if s.empty:
                continue
            n = f"{int(s.pairs.min())}–{int(s.pairs.max())}" \
                if s.pairs.min() != s.pairs.max() else f"{int(s.pairs.min())}"
            hybrid = d in HYBRID
            ax.plot(s.cap_w, s.ratio_prb_over, ls, marker="o" if hybrid else None, ms=3,
                    color=colors(k), lw=1.6 if hybrid else 0.9, alpha=1.0 if hybrid else 0.5,
                    label=f"{size} jobs: PRB / {d} (n = {n})")
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_xlabel("power cap (W)")
    ax.set_ylabel("mean WQT of PRB / of the method (paired)")
    ax.set_title(f"Figure {number}: {platform} — {name} set (> 1: the method waits less)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    path = OUT / f"fig{number}_{platform}_{name}.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def wqt_figure(table: pd.DataFrame, platform: str, name: str) -> Path | None:
    """The mean weighted queue time per dispatcher against the cap, a panel per size."""
    part = table[(table.platform == platform) & (table.set == name)]
    if part.empty:
        return None
    sizes = sorted(part["size"].unique())
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.2 * len(sizes), 3.8),
                             layout="constrained", squeeze=False)
    for ax, size in zip(axes[0], sizes, strict=True):
        for d in (PRB, *HYBRID, *BASELINES):
            s = part[(part["size"] == size) & (part.dispatcher == d)].sort_values("cap_w")
            if len(s):
                ax.plot(s.cap_w, s.mean_wqt, marker="o", ms=3, label=d)
        ax.set_title(f"{size} jobs")
        ax.set_xlabel("power cap (W)")
        ax.set_ylabel("mean weighted queue time (EWT)")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(f"{platform} — {name} set: mean over the instances feasible at each cap")
    path = OUT / f"wqt_{platform}_{name}.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def claims(runs: pd.DataFrame, table: pd.DataFrame) -> str:
    """The paper's statements, counted instance by instance where the data allow."""
    have = set(runs.dispatcher)
    lines = ["# The paper's statements against these runs", "",
             f"Equal: within {TIE:.0%} of the larger value. Counts are (instance, cap) pairs.",
             ""]

    def verdicts(c: pd.DataFrame) -> str:
        v = c["verdict"].value_counts()
        return (f"better {int(v.get('better', 0))}, equal {int(v.get('equal', 0))}, "
                f"worse {int(v.get('worse', 0))} (of {len(c)})")

    if {"dec", "dec-feedback"} <= have:
        key = ["platform", "set", "size", "cap_w", "instance"]
        a = runs[runs.dispatcher == "dec"].set_index(key)["mean_weighted_queue_time"]
        b = runs[runs.dispatcher == "dec-feedback"].set_index(key)["mean_weighted_queue_time"]
        both = pd.concat([a.rename("nofb"), b.rename("fb")], axis=1, join="inner")
        worse = both[both.fb > both.nofb * (1 + 1e-9) + 1e-12]
        better = both[both.fb < both.nofb * (1 - 1e-9) - 1e-12]
        much = both[both.fb > both.nofb * (1 + TIE) + 1e-12]
        lines += ["## 1. Feedback is never worse than no feedback", "",
                  f"dec-feedback vs dec on {len(both)} (instance, cap) pairs: better on "
                  f"{len(better)}, identical on {len(both) - len(better) - len(worse)}, "
                  f"worse on {len(worse)} (by more than {TIE:.0%}: {len(much)}).", ""]
        for (plat, name), part in both.reset_index().groupby(["platform", "set"]):
            w = int((part.fb > part.nofb * (1 + 1e-9) + 1e-12).sum())
            b = int((part.fb < part.nofb * (1 - 1e-9) - 1e-12).sum())
            lines.append(f"- {plat} {name}: {len(part)} pairs, better {b}, worse {w}; mean "
                         f"WQT dec {part.nofb.mean():.3f}, dec-feedback {part.fb.mean():.3f}")
        lines.append("")
        if len(worse):
            lines += ["Worst cases (relative, first 10):", "",
                      markdown_table(worse.assign(excess=worse.fb / worse.nofb - 1)
                                     .sort_values("excess", ascending=False).head(10)
                                     .reset_index().set_index("platform"), 4), ""]
    else:
        lines += ["## 1. Feedback never worse than no feedback", "",
                  "Not checked: the dec / dec-feedback runs are missing.", ""]
    lines += ["## 2–4. Each method against PRB, per platform, set and cap band", ""]
    for d in [x for x in (*HYBRID, *BASELINES) if x in have]:
        c = compare(runs, d)
        lines += [f"### PRB vs {d}", "",
                  "'better' = the method's mean weighted queue time is lower than PRB's.", ""]
        rows = []
        for (plat, name), part in c.groupby(["platform", "set"]):
            for band, sel in (("tight (≤ 35 %)", part.cap_share <= 0.35),
                              ("mid (40–60 %)", (part.cap_share > 0.35) & (part.cap_share <= 0.6)),
                              ("loose (≥ 70 %)", part.cap_share > 0.6)):
                s = part[sel]
                if len(s):
                    rows.append({"platform": plat, "set": name, "caps": band,
                                 "pairs": len(s), "verdict": verdicts(s),
                                 "mean ratio PRB/method": round(float(
                                     s.prb.mean() / s.other.mean()), 3)
                                 if s.other.mean() > 0 else np.nan})
        lines += [markdown_table(pd.DataFrame(rows).set_index("platform"), 3), ""]
    loose = table[(table.cap_share >= 0.99) & (table.dispatcher != PRB)]
    if len(loose):
        lines += ["## 4. At the loosest cap (the whole machine's full power)", "",
                  markdown_table(loose[["platform", "set", "size", "dispatcher", "pairs",
                                        "prb_paired", "method_paired", "ratio_prb_over",
                                        "better", "equal", "worse"]].set_index("platform"),
                                 3), ""]
    return "\n".join(lines)


def figure_tables(table: pd.DataFrame, times: pd.DataFrame) -> str:
    """Per paper figure and size: each cap's paired ratios and counts; solver times."""
    lines = ["# The figures' numbers", "",
             "Per cap: instances run with both PRB and the method (n), mean weighted queue "
             "time (EWT units) of each over those, the ratio PRB / method (> 1: the method "
             "waits less) and per-instance counts better / equal / worse than PRB.", ""]
    for number, (plat, name, sizes) in FIGURES.items():
        for size in sizes:
            part = table[(table.platform == plat) & (table.set == name)
                         & (table["size"] == size) & table.dispatcher.isin(HYBRID)]
            if part.empty:
                continue
            rows = []
            for cap, g in part.groupby("cap_w"):
                row: dict[str, object] = {"cap (W)": int(cap),
                                          "share": float(g.cap_share.iloc[0])}
                for d in HYBRID:
                    r = g[g.dispatcher == d]
                    if len(r):
                        r0 = r.iloc[0]
                        row[f"n {d}"] = int(r0.pairs)
                        row[f"PRB / {d}"] = float(r0.ratio_prb_over)
                        row[f"b/e/w {d}"] = f"{r0.better}/{r0.equal}/{r0.worse}"
                rows.append(row)
            lines += [f"## Figure {number}: {plat}, {name}, {size} jobs", "",
                      markdown_table(pd.DataFrame(rows).set_index("cap (W)"), 2), ""]
    lines += ["## Decision (solver) time per run", "",
              "Sum over the run's decision points of the dispatcher's time (s), on the "
              "loaded 2-core machine.", "",
              markdown_table(times.set_index("platform"), 3), ""]
    return "\n".join(lines)


def main() -> None:
    runs = load()
    OUT.mkdir(exist_ok=True)
    runs.to_csv(OUT / "runs.csv", index=False, float_format="%.6g")
    table = pooled(runs)
    table.to_csv(OUT / "pooled.csv", index=False, float_format="%.6g")
    times = runs.groupby(["platform", "size", "dispatcher"])["dispatch_time_total_s"].agg(
        runs="size", median_s="median", p90_s=lambda v: v.quantile(0.9),
        max_s="max").reset_index()
    times.to_csv(OUT / "solver_times.csv", index=False, float_format="%.4g")
    (OUT / "claims.md").write_text(claims(runs, table) + "\n", encoding="utf-8")
    (OUT / "tables.md").write_text(figure_tables(table, times) + "\n", encoding="utf-8")
    for number, (plat, name, sizes) in FIGURES.items():
        ratio_figure(table, number, plat, name, sizes)
    for plat, name in runs[["platform", "set"]].drop_duplicates().itertuples(index=False):
        wqt_figure(table, plat, name)
    print(f"{len(runs)} runs; wrote {OUT.relative_to(HERE.parents[1])}/")


if __name__ == "__main__":
    main()
