"""Desired profiles (DARDIS, hybrid): over-use, dissimilarity, daily over-use and daily
plans."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from dispatchlab.report.analysis import Comparison
from dispatchlab.report.figures import RunView
from dispatchlab.report.web.encode import rounded
from dispatchlab.report.web.families.common import (
    Family,
    fmt,
    plain_table,
)
from dispatchlab.report.web.figure import WebFigure, layout
from dispatchlab.report.web.page import Section


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
                                 f"({res}-hours; lower is better)", fmt(1)),
            "dissimilarity": ("dissim.", "dissimilarity between the used and desired "
                              "profiles, to the deadline horizon", fmt(3)),
            "dissimilarity_to_last_end": ("dissim. (end)", "dissimilarity up to the last "
                                          "job end", fmt(3)),
            "late_jobs_lst": ("late (lst)", "jobs started after their latest start time",
                              fmt(0)),
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
        "planned": ("planned jobs", "jobs with a planned start", fmt(0)),
        "on_plan": ("on plan", "share started within a minute of the plan",
                    lambda v: f"{100 * v:.1f} %"),
        "late": ("later", "share started more than a minute after the plan",
                 lambda v: f"{100 * v:.1f} %"),
        "mean_dev": ("mean |dev.|", "mean absolute deviation from the planned start",
                     lambda v: f"{v / 60:,.1f} min"),
    }, colors)
