"""Thesis ch. 6 analysis (Table 6.2 layout, Figs. 6.2-6.3) of a profit campaign.

Usage: python experiments/profit/analyse.py RESULTS_DIR [MORE_RESULTS_DIRS ...]
       [--analysis analysis.toml]

Reads every stored run of every given campaign (``DIR/runs/*/run.json`` and
``cooling.parquet``; e.g. the rule-based campaign and the planner's), groups them by
scenario (cooling × season × workload level × price), and writes to the first RESULTS_DIR:

- ``per_run.csv`` — every run: profit, core-hours, IT and cooling kWh and mean PUE, both up
  to the last submission (the window the thesis compares on, §6.8.3) and over the whole run;
  makespan, mean wait, utilization.
- ``table62.csv`` / ``table62.md`` — per scenario: the best rule-based dispatcher (highest
  profit at the last submission among ``rule_based`` of analysis.toml), its mean PUE,
  the mean PUE of every search listed in ``searches``, our slope-change PUE (time-weighted
  mean over the window of the PUE where each temperature row's PUE rises most, §6.8.3) and
  the thesis's Table 6.2 figures beside them; the profit gain (%) of each search over the
  best rule-based dispatcher (Figs. 6.2-6.3).
"""

from __future__ import annotations

import argparse
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd

from dispatchlab.energy.cooling import pue_table
from dispatchlab.experiments.store import RunStore

HERE = Path(__file__).resolve().parent
#: Thesis Table 6.2: (cooling, season, level, price) -> (Delay-S. PUE, best RB PUE, slope).
THESIS = {
    ("air", "summer", "high", "cheap"): (1.43355, 1.43451, 1.43497),
    ("air", "summer", "high", "expensive"): (1.43377, 1.43451, 1.43497),
    ("air", "summer", "low", "cheap"): (1.41022, 1.41701, 1.43497),
    ("air", "summer", "low", "expensive"): (1.41049, 1.41701, 1.43497),
    ("air", "winter", "high", "cheap"): (1.11254, 1.11295, 1.11726),
    ("air", "winter", "high", "expensive"): (1.11253, 1.11295, 1.11726),
    ("air", "winter", "low", "cheap"): (1.09388, 1.09478, 1.11726),
    ("air", "winter", "low", "expensive"): (1.09413, 1.09478, 1.11726),
    ("hybrid", "summer", "high", "cheap"): (1.09222, 1.09207, 1.08727),
    ("hybrid", "summer", "high", "expensive"): (1.09242, 1.09207, 1.08727),
    ("hybrid", "summer", "low", "cheap"): (1.07353, 1.07513, 1.08727),
    ("hybrid", "summer", "low", "expensive"): (1.07345, 1.07513, 1.08727),
    ("hybrid", "winter", "high", "cheap"): (1.00319, 1.00317, 1.00302),
    ("hybrid", "winter", "high", "expensive"): (1.00326, 1.00317, 1.00302),
    ("hybrid", "winter", "low", "cheap"): (1.00277, 1.00284, 1.00302),
    ("hybrid", "winter", "low", "expensive"): (1.00284, 1.00286, 1.00302),
}
SCENARIO = ["cooling", "season", "level", "price"]


def slope_change_pue(cooling: pd.DataFrame, table: str, t1: int) -> float:
    """Time-weighted mean, up to ``t1``, of the slope-change PUE of the temperature row in
    force (the thesis: "the Slope change point as the average PUE weighted in time")."""
    tab = pue_table(table)
    c = cooling[cooling["time"] < t1]
    dt = np.diff(np.r_[c["time"].to_numpy(), t1]).astype(float)
    temps = c["temperature_c"].to_numpy(float)
    cache = {t: tab.slope_change(t)[1] for t in np.unique(temps)}
    vals = np.array([cache[t] for t in temps])
    return float((vals * dt).sum() / dt.sum())


def load_runs(results: Path) -> pd.DataFrame:
    """One row per stored run."""
    rows = []
    for rec in RunStore(results).records():
        s, lab = rec.summary, rec.labels
        p = s.get("profit")
        if p is None:
            continue
        at = p["at_last_submission"]
        row = {**{k: lab["params"].get(k) for k in SCENARIO}, "dispatcher": lab["dispatcher"],
               "seed": lab["seed"],
               "profit": at["profit"], "core_hours": at["core_hours"], "it_kwh": at["it_kwh"],
               "cooling_kwh": at["cooling_kwh"], "mean_pue": at["mean_pue"],
               "profit_run": p["profit"], "mean_pue_run": p["mean_pue"],
               "core_hours_run": p["core_hours"], "cooling_kwh_run": p["cooling_kwh"],
               "makespan_d": s["makespan"] / 86400, "mean_wait_h": s["mean_wait"] / 3600,
               "utilization": s["utilization"], "t_last_submission": at["window_s"][1],
               "sim_seconds": s.get("sim_seconds"), "run": rec.path.name,
               "folder": str(rec.path)}
        cool = rec.path / "cooling.parquet"
        row["slope_change"] = row["daily_pue_trend"] = np.nan
        if cool.is_file():
            series = pd.read_parquet(cool)
            row["slope_change"] = slope_change_pue(series, row["cooling"], at["window_s"][1])
            row["daily_pue_trend"] = trend(daily_pue(series, at["window_s"][1]))
        rows.append(row)
    return pd.DataFrame(rows)


def daily_pue(cooling: pd.DataFrame, t1: int) -> pd.DataFrame:
    """PUE of each whole day up to ``t1`` (days since time 0; Fig. 6.6's daily PUE)."""
    c = cooling[cooling["time"] < t1]
    t = c["time"].to_numpy()
    edges = np.unique(np.r_[t, np.arange(0, t1, 86400), t1])
    k = np.searchsorted(t, edges[:-1], side="right") - 1
    dt = np.diff(edges).astype(float)
    it = np.where(k >= 0, c["it_power_w"].to_numpy()[np.maximum(k, 0)], 0.0) * dt
    cool = np.where(k >= 0, c["cooling_w"].to_numpy()[np.maximum(k, 0)], 0.0) * dt
    day = edges[:-1] // 86400
    g = pd.DataFrame({"day": day, "it": it, "cool": cool}).groupby("day").sum()
    g = g[g["it"] > 0]
    return pd.DataFrame({"day": g.index, "pue": (g["it"] + g["cool"]) / g["it"]})


def trend(d: pd.DataFrame) -> float:
    """Least-squares slope of the daily PUE (per day)."""
    return float(np.polyfit(d["day"], d["pue"], 1)[0]) if len(d) > 1 else float("nan")


def table62(runs: pd.DataFrame, rule_based: list[str], searches: list[str]) -> pd.DataFrame:
    """Per scenario: best rule-based dispatcher and PUEs, searches' PUE and profit gain."""
    out = []
    for key, g in runs.groupby(SCENARIO, sort=True):
        rb = g[g["dispatcher"].isin(rule_based)]
        if rb.empty:
            continue
        best = rb.loc[rb["profit"].idxmax()]
        th = THESIS.get(tuple(key))  # type: ignore[arg-type]
        row = dict(zip(SCENARIO, key, strict=True))
        row.update({"best_rb": best["dispatcher"], "best_rb_profit": best["profit"],
                    "best_rb_daily_pue_trend": best.get("daily_pue_trend", np.nan),
                    "best_rb_pue": best["mean_pue"], "slope_change": best["slope_change"],
                    "rb_profit_spread_pct": 100 * (rb["profit"].max() - rb["profit"].min())
                    / abs(best["profit"]),
                    "thesis_best_rb_pue": th[1] if th else np.nan,
                    "thesis_delay_pue": th[0] if th else np.nan,
                    "thesis_slope_change": th[2] if th else np.nan})
        for name in searches:
            s = g[g["dispatcher"] == name]
            if len(s):
                r = s.iloc[0]
                row[f"{name}_pue"] = r["mean_pue"]
                row[f"{name}_gain_pct"] = 100 * (r["profit"] - best["profit"]) / abs(
                    best["profit"])
        out.append(row)
    return pd.DataFrame(out)


def markdown(t: pd.DataFrame, searches: list[str]) -> str:
    """Table 6.2 layout as Markdown."""
    head = ["cooling", "season", "workload", "price", *[f"{s} PUE (gain %)" for s in searches],
            "best RB", "best RB PUE", "slope change", "thesis: Delay-S. PUE", "thesis: best RB",
            "thesis: slope"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _, r in t.iterrows():
        cells = [r["cooling"], r["season"], r["level"], r["price"]]
        for s in searches:
            cells.append(f"{r[f'{s}_pue']:.5f} ({r[f'{s}_gain_pct']:+.2f})"
                         if f"{s}_pue" in r and pd.notna(r[f"{s}_pue"]) else "–")
        cells += [r["best_rb"], f"{r['best_rb_pue']:.5f}", f"{r['slope_change']:.5f}",
                  f"{r['thesis_delay_pue']:.5f}", f"{r['thesis_best_rb_pue']:.5f}",
                  f"{r['thesis_slope_change']:.5f}"]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(lines) + "\n"


def figures(results: Path, runs: pd.DataFrame, t: pd.DataFrame) -> list[Path]:
    """The report's cooling figure (IT power, cooling power, temperature) for each workload
    level in the air-cooled summer scenario with expensive core-hours: the best and the worst
    rule-based dispatcher."""
    import matplotlib

    matplotlib.use("Agg")
    from dispatchlab.report.figures import RunView, cooling_figure

    out = []
    for level in sorted(runs["level"].unique()):
        key = ("air", "summer", level, "expensive")
        g = runs[(runs[SCENARIO] == pd.Series(dict(zip(SCENARIO, key, strict=True)))).all(
            axis=1)]
        if g.empty:
            continue
        pick = [g.loc[g["profit"].idxmax()], g.loc[g["profit"].idxmin()]]
        views = []
        for r, color in zip(pick, ("#1f77b4", "#d62728"), strict=True):
            folder = Path(r["folder"])
            views.append(RunView(f"{r['dispatcher']} (profit {r['profit']:,.0f} €)", color,
                                 pd.read_parquet(folder / "jobs.parquet"),
                                 pd.read_parquet(folder / "timeseries.parquet"),
                                 {"cores": 9600}, 300,
                                 cooling=pd.read_parquet(folder / "cooling.parquet")))
        fig = cooling_figure(views)
        path = results / f"cooling_air_summer_{level}.png"
        fig.savefig(path, dpi=110)
        out.append(path)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path, nargs="+",
                    help="campaign result folders; outputs go to the first")
    ap.add_argument("--analysis", type=Path, default=HERE / "analysis.toml")
    a = ap.parse_args()
    cfg = tomllib.loads(a.analysis.read_text())
    rule_based, searches = list(cfg["rule_based"]), list(cfg.get("searches", []))
    runs = pd.concat([load_runs(r) for r in a.results], ignore_index=True)
    if runs.empty:
        raise SystemExit(f"{a.results[0]}: no run with a profit entry")
    out = a.results[0]
    runs.drop(columns="folder").sort_values([*SCENARIO, "dispatcher"]).to_csv(
        out / "per_run.csv", index=False)
    t = table62(runs, rule_based, searches)
    t.to_csv(out / "table62.csv", index=False)
    md = markdown(t, searches)
    (out / "table62.md").write_text(md)
    print(md)
    wide = runs.pivot_table(index=SCENARIO, columns="dispatcher", values="profit")
    wide.to_csv(out / "profit_by_dispatcher.csv")
    for path in figures(out, runs, t):
        print(f"figure {path}")
    print(f"{len(runs)} runs; per_run.csv, table62.csv/.md, profit_by_dispatcher.csv written "
          f"to {out}")


if __name__ == "__main__":
    main()
