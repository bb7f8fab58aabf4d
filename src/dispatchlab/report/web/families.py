"""A section per family of results, shown only when the runs have its data: energy and
power, variable capacity, desired profiles (DARDIS / hybrid), profit per pricing
scenario, malleable jobs, and the dispatchers' own statistics (CP solver, …)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from dispatchlab.report.analysis import Comparison
from dispatchlab.report.figures import ENERGY_PARTS, RunView, cap_values, has_cap_sweep
from dispatchlab.report.web.encode import rounded
from dispatchlab.report.web.figure import WebFigure, layout
from dispatchlab.report.web.page import Section
from dispatchlab.report.web.tables import Cell, Column, swatch, table_html

Family = tuple[Section, list[WebFigure]]


def per_dispatcher(cmp: Comparison, cols: Sequence[str]) -> pd.DataFrame:
    """Mean of ``cols`` over each dispatcher's runs, rows in the comparison's order."""
    have = [c for c in cols if c in cmp.runs]
    if not have or not len(cmp.runs):
        return pd.DataFrame()
    data = cmp.runs[["dispatcher", *have]].copy()
    for c in have:
        data[c] = pd.to_numeric(data[c], errors="coerce")
    table = data.groupby("dispatcher", sort=False)[have].mean()
    return table.reindex([d for d in cmp.order if d in table.index])


def plain_table(df: pd.DataFrame, columns: dict[str, tuple[str, str, Callable[[float], str]]],
                colors: dict[str, str], caption: str = "") -> str:
    """A sortable table of ``df`` (index: dispatchers); ``columns``: key → (short header,
    full name, formatter)."""
    keys = [k for k in columns if k in df.columns]
    cols = [Column("dispatcher", "dispatcher", numeric=False),
            *(Column(columns[k][0], columns[k][1]) for k in keys)]
    rows = []
    for d, row in df.iterrows():
        cells = [Cell(swatch(str(d), colors), str(d), raw_html=True)]
        for k in keys:
            v = float(row[k]) if pd.notna(row[k]) else float("nan")
            cells.append(Cell(columns[k][2](v) if v == v else "–", v))
        rows.append(cells)
    return table_html(cols, rows, caption=caption)


def _f(digits: int, unit: str = "") -> Callable[[float], str]:
    return lambda v: f"{v:,.{digits}f}{unit}"


def _hbar_layout(names: Sequence[str], xtitle: str, height: int | None = None) -> dict[str, Any]:
    lay = layout(height=height or 90 + 34 * len(names), xtitle=xtitle, barmode="stack")
    lay["yaxis"].update({"autorange": "reversed", "automargin": True, "rangemode": "normal"})
    return lay


# --- energy and power ---------------------------------------------------------------------

def energy_section(cmp: Comparison, views: Sequence[RunView],
                   colors: dict[str, str]) -> Family | None:
    """Energy per dispatcher by node state, power figures, waiting against the cap."""
    if "energy_kwh" not in cmp.runs and "power_mean_w" not in cmp.runs:
        return None
    sec = Section("energy", "Energy and power")
    figs: list[WebFigure] = []
    table = per_dispatcher(cmp, ["energy_kwh", "energy_busy_kwh", "energy_idle_kwh",
                                 "energy_other_kwh", "power_mean_w", "power_peak_w",
                                 "power_cap_mean_w", "power_over_cap_seconds"])
    for c in ("power_mean_w", "power_peak_w", "power_cap_mean_w"):
        if c in table:
            table[c] = table[c] / 1000
    sec.add(plain_table(table, {
        "energy_kwh": ("energy kWh", "energy from the first submission to the last end (kWh)",
                       _f(2)),
        "energy_busy_kwh": ("busy kWh", "energy of busy nodes (kWh)", _f(2)),
        "energy_idle_kwh": ("idle kWh", "energy of idle nodes (kWh)", _f(2)),
        "energy_other_kwh": ("off/boot kWh", "energy of off, booting, shutting-down nodes",
                             _f(2)),
        "power_mean_w": ("mean kW", "mean IT power (kW)", _f(2)),
        "power_peak_w": ("peak kW", "peak IT power (kW)", _f(2)),
        "power_cap_mean_w": ("cap kW", "power cap, time-weighted mean (kW)", _f(2)),
        "power_over_cap_seconds": ("over cap", "seconds spent above the cap", _f(0, " s")),
    }, colors, "Means over each dispatcher's runs."))
    if "energy_busy_kwh" in table:
        names = list(table.index)
        traces = [{"type": "bar", "orientation": "h", "y": names,
                   "x": rounded(table[col].to_numpy(dtype=np.float64)), "name": label,
                   "marker": {"color": [colors.get(d, "#888") for d in names],
                              "opacity": alpha, "line": {"color": "#333", "width": 0.5}},
                   "showlegend": False,
                   "hovertemplate": "%{y}: %{x:,.2f} kWh<extra>" + label + "</extra>"}
                  for col, label, alpha in ENERGY_PARTS]
        figs.append(WebFigure("web-energy", "Energy per dispatcher by node state",
                              "Energy of each run from its first submission to its last end, "
                              "split by node state: darkest busy nodes, then idle nodes, "
                              "lightest off, booting and shutting-down nodes (hover a part "
                              "for its name); mean over runs.",
                              traces, _hbar_layout(names, "energy (kWh)")))
    if has_cap_sweep(cmp.runs):
        figs.append(cap_sweep_figure(cmp, colors))
    sec.add(*figs)
    return sec, figs


def cap_sweep_figure(cmp: Comparison, colors: dict[str, str]) -> WebFigure:
    """Mean wait (and mean weighted queue time) against the power cap, a line per
    dispatcher."""
    data = cmp.runs.assign(cap=cap_values(cmp.runs)).dropna(subset=["cap"])
    wqt = "mean_weighted_queue_time" in data and bool((data["mean_weighted_queue_time"] > 0)
                                                       .any())
    traces: list[dict[str, Any]] = []
    for d in [d for d in cmp.order if d in set(data["dispatcher"])]:
        part = data[data["dispatcher"] == d].groupby("cap")[
            ["mean_wait", *(["mean_weighted_queue_time"] if wqt else [])]].mean()
        x = rounded(part.index.to_numpy(dtype=np.float64) / 1000)
        traces.append({"type": "scatter", "mode": "lines+markers", "x": x,
                       "y": rounded(part["mean_wait"].to_numpy() / 60), "name": d,
                       "legendgroup": d, "line": {"color": colors.get(d, "#888")}})
        if wqt:
            traces.append({"type": "scatter", "mode": "lines+markers", "x": x,
                           "y": rounded(part["mean_weighted_queue_time"].to_numpy()),
                           "name": d, "legendgroup": d, "showlegend": False, "xaxis": "x2",
                           "yaxis": "y2", "line": {"color": colors.get(d, "#888")}})
    lay = layout(height=360, xtitle="power cap (kW)", ytitle="mean wait (min)")
    if wqt:
        lay["xaxis"]["domain"] = [0, 0.47]
        lay["xaxis2"] = {**lay["xaxis"], "domain": [0.53, 1], "anchor": "y2"}
        lay["yaxis2"] = {**lay["yaxis"], "anchor": "x2",
                         "title": {"text": "mean weighted queue time (EWT units)"}}
    return WebFigure("web-cap-sweep", "Waiting against the power cap",
                     "Each point: the mean over a dispatcher's runs at that cap (a varying "
                     "cap: its time-weighted mean).", traces, lay)


# --- variable capacity ---------------------------------------------------------------------

def capacity_section(cmp: Comparison, views: Sequence[RunView],
                     colors: dict[str, str]) -> Family | None:
    """Goodput, aborted work and alive nodes of machines whose nodes come and go."""
    if "goodput" not in cmp.runs and "aborted_segments" not in cmp.runs:
        return None
    table = per_dispatcher(cmp, ["goodput", "aborted_count", "aborted_volume",
                                 "lost_work_core_seconds", "max_stretch", "mean_stretch",
                                 "utilization_alive", "mean_alive_nodes", "min_alive_nodes"])
    for c in ("aborted_volume", "lost_work_core_seconds"):
        if c in table:
            table[c] = table[c] / 3600
    pct: Callable[[float], str] = lambda v: f"{100 * v:.1f} %"  # noqa: E731
    sec = Section("capacity", "Variable capacity").add(plain_table(table, {
        "goodput": ("goodput", "goodput: completed work ÷ alive capacity in the metrics "
                    "window (higher is better)", pct),
        "aborted_count": ("aborted", "runs aborted when their nodes left", _f(0)),
        "aborted_volume": ("aborted core-h", "work of aborted runs (core-hours)", _f(1)),
        "lost_work_core_seconds": ("lost core-h", "work lost to aborts (core-hours)", _f(1)),
        "max_stretch": ("max stretch", "maximum stretch", _f(1)),
        "mean_stretch": ("mean stretch", "mean stretch", _f(2)),
        "utilization_alive": ("util. alive", "utilization of the alive cores", pct),
        "mean_alive_nodes": ("alive nodes", "mean number of alive nodes", _f(1)),
        "min_alive_nodes": ("min alive", "fewest alive nodes", _f(0)),
    }, colors, "Means over each dispatcher's runs; the alive nodes over time are in "
       "\"Over time\"."))
    figs: list[WebFigure] = []
    if "goodput" in table and "aborted_volume" in table:
        names = list(table.index)
        bar = {"type": "bar", "orientation": "h", "y": names, "showlegend": False,
               "marker": {"color": [colors.get(d, "#888") for d in names]}}
        traces = [{**bar, "x": rounded(100 * table["goodput"].to_numpy(dtype=np.float64)),
                   "hovertemplate": "%{y}: goodput %{x:.2f} %<extra></extra>"},
                  {**bar, "x": rounded(table["aborted_volume"].to_numpy(dtype=np.float64)),
                   "xaxis": "x2", "yaxis": "y2",
                   "hovertemplate": "%{y}: %{x:,.1f} core-h aborted<extra></extra>"}]
        lay = _hbar_layout(names, "goodput (%)")
        lay["xaxis"]["domain"] = [0, 0.45]
        lay["xaxis2"] = {**lay["xaxis"], "domain": [0.55, 1], "anchor": "y2",
                         "title": {"text": "aborted work (core-hours)"}}
        lay["yaxis2"] = {**lay["yaxis"], "anchor": "x2", "showticklabels": False}
        figs.append(WebFigure("web-capacity", "Goodput and aborted work",
                              "Goodput (left) and the work of runs aborted when their nodes "
                              "left (right), mean over each dispatcher's runs.", traces, lay))
    sec.add(*figs)
    return sec, figs


# --- desired profiles (DARDIS, hybrid) -----------------------------------------------------

def _profile_rows(cmp: Comparison) -> pd.DataFrame:
    rows = {}
    for d, rec in cmp.main.items():
        prof = rec.summary.get("profile")
        if isinstance(prof, dict):
            for res, vals in prof.items():
                if isinstance(vals, dict):
                    rows[d] = {"resource": res, **{k: v for k, v in vals.items()
                                                  if isinstance(v, (int, float))}}
                    break
    return pd.DataFrame.from_dict(rows, orient="index")


def daily_overuse(run: RunView, res: str) -> tuple[np.ndarray, np.ndarray]:
    """Per day: used beyond the desired profile (resource-hours), and the days."""
    from dispatchlab.report.figures import binned_mean, end_time

    ts = run.timeseries
    over = np.maximum(ts[f"used_{res}"].to_numpy(dtype=np.float64)
                      - ts[f"desired_{res}"].to_numpy(dtype=np.float64), 0)
    days = max(1, int(np.ceil(max(end_time(run), 1) / 86400)))
    edges = np.arange(days + 1, dtype=np.float64) * 86400
    return np.arange(days), binned_mean(ts["time"], over, edges) * 86400 / 3600


def profile_section(cmp: Comparison, views: Sequence[RunView],
                    colors: dict[str, str]) -> Family | None:
    """Over-use of the desired profile, dissimilarity, and the daily picture."""
    prof = _profile_rows(cmp)
    desired = [(v, c[len("desired_"):]) for v in views for c in v.timeseries.columns
               if c.startswith("desired_")]
    if not len(prof) and not desired:
        return None
    sec = Section("profile", "Desired profile (DARDIS, hybrid)")
    if len(prof):
        res = str(prof["resource"].iloc[0])
        if "over_utilization" in prof:
            prof["over_utilization"] = prof["over_utilization"] / 3600
        sec.add(plain_table(prof, {
            "over_utilization": ("over-use", f"{res} used beyond the desired profile "
                                 f"({res}-hours; lower is better)", _f(1)),
            "dissimilarity": ("dissim.", "dissimilarity between the used and desired "
                              "profiles, to the deadline horizon", _f(3)),
            "dissimilarity_to_last_end": ("dissim. (end)", "dissimilarity up to the last "
                                          "job end", _f(3)),
            "late_jobs_lst": ("late (lst)", "jobs started after their latest start time",
                              _f(0)),
            "tardiness_lst_s": ("tardiness", "total tardiness against the latest start "
                                "times (h)", lambda v: f"{v / 3600:,.1f} h"),
        }, colors, f"The first run of each dispatcher; profile of {res}."))
    figs: list[WebFigure] = []
    if desired:
        traces = []
        for v, res in desired:
            days, over = daily_overuse(v, res)
            traces.append({"type": "bar", "x": rounded(days + 0.5), "y": rounded(over),
                           "name": v.label, "marker": {"color": v.color},
                           "hovertemplate": "day %{x:.0f}: %{y:,.1f} " + res
                           + "-h over<extra>" + v.label + "</extra>"})
        figs.append(WebFigure("web-profile-daily", "Daily over-use of the desired profile",
                              "Per day of the run: resource-hours used beyond the desired "
                              "profile (the profile itself is dashed in the utilization "
                              "figures).", traces,
                              layout(height=320, xtitle="day of the run",
                                     ytitle="over-use (resource-hours)", barmode="group")))
    planned = plan_table(cmp, views, colors)
    sec.add(*figs, planned)
    return sec, figs


def plan_table(cmp: Comparison, views: Sequence[RunView], colors: dict[str, str]) -> str:
    """How closely jobs started at their planned (daily plan) start, for planning runs."""
    rows = {}
    for v in views:
        if "planned_start" not in v.jobs:
            continue
        j = v.jobs[(v.jobs["planned_start"] >= 0) & ~v.jobs["rejected"]]
        if not len(j):
            continue
        dev = (j["start"] - j["planned_start"]).to_numpy(dtype=np.float64)
        rows[v.label] = {"planned": len(j), "on_plan": float(np.mean(np.abs(dev) <= 60)),
                         "mean_dev": float(np.mean(np.abs(dev))), "late": float(np.mean(dev > 60))}
    if not rows:
        return ""
    return "<h3>Daily plans</h3>" + plain_table(pd.DataFrame.from_dict(rows, orient="index"), {
        "planned": ("planned jobs", "jobs with a planned start", _f(0)),
        "on_plan": ("on plan", "share started within a minute of the plan",
                    lambda v: f"{100 * v:.1f} %"),
        "late": ("later", "share started more than a minute after the plan",
                 lambda v: f"{100 * v:.1f} %"),
        "mean_dev": ("mean |dev.|", "mean absolute deviation from the planned start",
                     lambda v: f"{v / 60:,.1f} min"),
    }, colors)


# --- profit and pricing scenarios -----------------------------------------------------------

def profit_section(cmp: Comparison, views: Sequence[RunView],
                   colors: dict[str, str]) -> Family | None:
    """Profit, PUE and energy per dispatcher, broken down per pricing scenario."""
    if "profit" not in cmp.runs or not cmp.runs["profit"].notna().any():
        return None
    sec = Section("profit", "Profit and pricing scenarios")
    figs: list[WebFigure] = []
    runs = cmp.runs.dropna(subset=["profit"])
    scenarios = [s for s in dict.fromkeys(runs["pricing"]) if s is not None and s == s] \
        if "pricing" in runs else []
    cols = {
        "profit": ("profit", "profit over the run: income − energy cost (higher is better)",
                   _f(0)),
        "profit_sub": ("profit (sub.)", "profit up to the last submission", _f(0)),
        "mean_pue": ("PUE", "mean PUE", _f(4)),
        "it_kwh": ("IT kWh", "IT energy (kWh)", _f(0)),
        "cooling_kwh": ("cooling kWh", "cooling energy (kWh)", _f(1)),
        "core_hours": ("core-h", "core-hours sold", _f(0)),
    }
    if len(scenarios) >= 2:
        for key, label in (("profit", "Profit"), ("mean_pue", "Mean PUE")):
            wide = (runs.groupby(["dispatcher", "pricing"], sort=False)[key].mean()
                    .unstack("pricing").reindex(columns=scenarios))
            wide = wide.reindex([d for d in cmp.order if d in wide.index])
            sec.add(f"<h3>{label} per pricing scenario</h3>", plain_table(
                wide, {s: (str(s), f"{label} in scenario {s}", _f(0 if key == "profit" else 4))
                       for s in scenarios}, colors,
                "Mean over each dispatcher's runs in that scenario."))
        prof = (runs.groupby(["dispatcher", "pricing"], sort=False)["profit"].mean()
                .unstack("pricing"))
        traces = [{"type": "bar", "x": [str(s) for s in scenarios],
                   "y": rounded(prof.loc[d].reindex(scenarios).to_numpy(dtype=np.float64)),
                   "name": d, "marker": {"color": colors.get(d, "#888")}}
                  for d in cmp.order if d in prof.index]
        figs.append(WebFigure("web-profit", "Profit per pricing scenario",
                              "Profit of each dispatcher in each pricing scenario (one "
                              "schedule priced several ways when the dispatcher does not read "
                              "prices).", traces,
                              layout(height=340, ytitle="profit", barmode="group")))
    sec.add(plain_table(per_dispatcher(cmp, list(cols)), cols, colors,
                        "Means over each dispatcher's runs"
                        + (" (all pricing scenarios)." if len(scenarios) >= 2 else ".")))
    sec.add(*figs)
    return sec, figs


# --- malleable jobs -------------------------------------------------------------------------

def malleable_section(cmp: Comparison, views: Sequence[RunView],
                      colors: dict[str, str]) -> Family | None:
    """Reconfigurations and power-offs per dispatcher, and jobs that changed size."""
    keys = ["dispatcher_reconfigurations", "dispatcher_power_offs"]
    if not any(k in cmp.runs for k in keys):
        return None
    table = per_dispatcher(cmp, [*keys, "energy_kwh", "makespan", "mean_wait"])
    resized = {v.label: float(np.mean(v.jobs["units_used"] != v.jobs["units"]))
               for v in views if "units_used" in v.jobs and len(v.jobs)}
    if resized:
        table["resized"] = pd.Series(resized)
    sec = Section("malleable", "Malleable jobs").add(plain_table(table, {
        "dispatcher_reconfigurations": ("reconfig.", "job reconfigurations (grow or shrink)",
                                        _f(0)),
        "dispatcher_power_offs": ("power-offs", "nodes switched off", _f(0)),
        "resized": ("resized", "share of jobs that ended on another number of units than "
                    "they asked for", lambda v: f"{100 * v:.1f} %"),
        "energy_kwh": ("energy kWh", "energy (kWh)", _f(2)),
        "makespan": ("makespan", "makespan (h)", lambda v: f"{v / 3600:,.1f} h"),
        "mean_wait": ("mean wait", "mean wait (min)", lambda v: f"{v / 60:,.1f} min"),
    }, colors, "Means over each dispatcher's runs; nodes switched off show as fewer alive "
       "nodes in \"Over time\"."))
    names = list(table.index)
    traces = [{"type": "bar", "x": names, "y": rounded(table[k].to_numpy(dtype=np.float64)),
               "name": label} for k, label in zip(keys, ("reconfigurations", "power-offs"),
                                                 strict=True) if k in table]
    fig = WebFigure("web-malleable", "Reconfigurations and power-offs",
                    "Per dispatcher, mean over its runs.", traces,
                    layout(height=320, barmode="group", ytitle="count"))
    sec.add(fig)
    return sec, [fig]


# --- dispatchers' own statistics (CP solver, …) ------------------------------------------

def solver_section(cmp: Comparison, views: Sequence[RunView],
                   colors: dict[str, str]) -> Family | None:
    """Numbers the dispatchers report about themselves: CP solver calls, statuses, solve
    times; solve time per decision over time."""
    stats: dict[str, dict[str, Any]] = {
        d: s for d, rec in cmp.main.items()
        if isinstance(s := rec.summary.get("dispatcher_stats"), dict) and s}
    if not stats:
        return None
    flat: dict[str, dict[str, float]] = {}
    for d, s in stats.items():
        row: dict[str, float] = {}
        for k, v in s.items():
            if isinstance(v, bool):
                continue
            if isinstance(v, (int, float)):
                row[k] = float(v)
            elif isinstance(v, dict) and k in ("statuses", "paths"):
                row.update({f"{k[:-2] if k == 'statuses' else k[:-1]}: {kk}": float(vv)
                            for kk, vv in v.items() if isinstance(vv, (int, float))})
            elif isinstance(v, dict) and "mean_s" in v:
                row[f"{k} mean ms"] = 1000 * float(v["mean_s"])
        flat[d] = row
    sec = Section("solver", "Dispatcher statistics (CP solver, …)").add(
        stats_table(flat, colors), "<p class='muted'>What each dispatcher counted about its "
        "own decisions (its first run); a row per statistic.</p>")
    figs: list[WebFigure] = []
    traces = []
    for v in views:
        log = stats.get(v.label, {}).get("decision_log")
        if not isinstance(log, dict) or "solve_ms" not in log:
            continue
        t = np.asarray(log["time"], dtype=np.float64)
        ms = np.asarray([x if x is not None else np.nan for x in log["solve_ms"]], dtype=float)
        keep = np.flatnonzero(np.isfinite(ms) & (ms > 0))
        if len(keep) > SOLVER_POINTS:
            keep = keep[np.unique(np.linspace(0, len(keep) - 1, SOLVER_POINTS).astype(int))]
        span = max(float(t.max()) if len(t) else 1.0, 1.0)
        div = 3600.0 if span <= 2 * 86400 else 86400.0
        traces.append({"type": "scatter", "mode": "markers", "x": rounded(t[keep] / div, 6),
                       "y": rounded(ms[keep]), "name": v.label,
                       "marker": {"color": v.color, "size": 4, "opacity": 0.6},
                       "hovertemplate": "%{y:,.1f} ms<extra>" + v.label + "</extra>"})
    if traces:
        figs.append(WebFigure("web-solver", "CP solve time per decision",
                              f"Each point a decision that called the solver (at most "
                              f"{SOLVER_POINTS:,} per dispatcher, evenly sampled).", traces,
                              layout(height=320, xtitle="time of the decision",
                                     ytitle="solve time (ms, log)",
                                     yaxis={"type": "log", "rangemode": "normal"})))
    sec.add(*figs)
    return sec, figs


def stats_table(flat: dict[str, dict[str, float]], colors: dict[str, str]) -> str:
    """Statistics (rows) × dispatchers (columns): fits the page however many statistics."""
    names = list(flat)
    keys = list(dict.fromkeys(k for row in flat.values() for k in row))
    cols = [Column("statistic", "statistic", numeric=False),
            *(Column(d, d) for d in names)]
    rows = []
    for k in keys:
        cells = [Cell(k.replace("_", " "), k)]
        for d in names:
            v = flat[d].get(k, float("nan"))
            text = "–" if v != v else (f"{v:,.0f}" if float(v).is_integer() else f"{v:,.2f}")
            cells.append(Cell(text, v))
        rows.append(cells)
    head = "".join(f"{swatch(d, colors)} " for d in names)
    return f"<p>{head}</p>" + table_html(cols, rows)


#: Points per dispatcher in the solve-time figure.
SOLVER_POINTS = 5000


FAMILIES: tuple[Callable[[Comparison, Sequence[RunView], dict[str, str]], Family | None], ...] = (
    energy_section,
    capacity_section,
    profile_section,
    profit_section,
    malleable_section,
    solver_section,
)


def family_sections(cmp: Comparison, views: Sequence[RunView],
                    colors: dict[str, str]) -> list[Family]:
    """The sections of every family the runs have data for."""
    out = []
    for build in FAMILIES:
        got = build(cmp, views, colors)
        if got is not None:
            out.append(got)
    return out



