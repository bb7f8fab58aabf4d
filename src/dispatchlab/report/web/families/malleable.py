"""Malleable jobs: the paper's cost (mean stretch × normalised power), reconfigurations,
power-offs and jobs that changed size."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from dispatchlab.report.analysis import Comparison
from dispatchlab.report.figures import RunView
from dispatchlab.report.web.encode import rounded
from dispatchlab.report.web.families.common import Family, fmt, means_table, runs_have
from dispatchlab.report.web.figure import WebFigure, layout
from dispatchlab.report.web.page import Section

COST_KEYS = ("malleable_cost", "malleable_mean_stretch", "malleable_norm_power")


def malleable_section(cmp: Comparison, views: Sequence[RunView],
                      colors: dict[str, str]) -> Family | None:
    """Cost, reconfigurations and power-offs per dispatcher, and jobs that changed size."""
    keys = ["dispatcher_reconfigurations", "dispatcher_power_offs"]
    if not runs_have(cmp, *keys, *COST_KEYS):
        return None
    resized = {v.label: float(np.mean(v.jobs["units_used"] != v.jobs["units"]))
               for v in views if "units_used" in v.jobs and len(v.jobs)}
    table, html = means_table(cmp, {
        "malleable_cost": ("cost", "the paper's cost: mean stretch × normalised mean power",
                           fmt(3)),
        "malleable_mean_stretch": ("stretch", "mean stretch: (end − submission) / the "
                                   "job's mass", fmt(3)),
        "malleable_norm_power": ("norm. power", "mean power / (servers × idle power)", fmt(3)),
        "dispatcher_reconfigurations": ("reconfig.", "job reconfigurations (grow or shrink)",
                                        fmt(0)),
        "dispatcher_power_offs": ("power-offs", "nodes switched off", fmt(0)),
        "resized": ("resized", "share of jobs that ended on another number of units than "
                    "they asked for", lambda v: f"{100 * v:.1f} %"),
        "energy_kwh": ("energy kWh", "energy (kWh)", fmt(2)),
        "makespan": ("makespan", "makespan (h)", lambda v: f"{v / 3600:,.1f} h"),
        "mean_wait": ("mean wait", "mean wait (min)", lambda v: f"{v / 60:,.1f} min"),
    }, colors, "Means over each dispatcher's runs; nodes switched off show as fewer alive "
       "nodes in \"Over time\".", extra={"resized": pd.Series(resized)} if resized else None)
    sec = Section("malleable", "Malleable jobs").add(html)
    names = list(table.index)
    traces = [{"type": "bar", "x": names, "y": rounded(table[k].to_numpy(dtype=np.float64)),
               "name": label} for k, label in zip(keys, ("reconfigurations", "power-offs"),
                                                 strict=True) if k in table]
    fig = WebFigure("web-malleable", "Reconfigurations and power-offs",
                    "Per dispatcher, mean over its runs.", traces,
                    layout(height=320, barmode="group", ytitle="count"))
    figs = [fig, *cost_figure(table, colors)]
    sec.add(*figs)
    return sec, figs


def cost_figure(table: pd.DataFrame, colors: dict[str, str]) -> list[WebFigure]:
    """The paper's cost per dispatcher, mean stretch and normalised power on hover; none
    when the runs did not store it."""
    if "malleable_cost" not in table or not table["malleable_cost"].notna().any():
        return []
    names = list(table.index)
    extra = table.reindex(columns=list(COST_KEYS[1:])).to_numpy(dtype=np.float64)
    trace = {"type": "bar", "x": names,
             "y": rounded(table["malleable_cost"].to_numpy(dtype=np.float64)),
             "marker": {"color": [colors.get(d, "#888") for d in names]},
             "customdata": [rounded(row) for row in extra], "showlegend": False,
             "hovertemplate": "%{x}: cost %{y:.3f}<br>mean stretch %{customdata[0]:.3f}"
                              "<br>normalised power %{customdata[1]:.3f}<extra></extra>"}
    return [WebFigure("web-malleable-cost", "Malleable cost per dispatcher",
                      "Mejri et al.'s cost of each run (mean stretch × mean power over the "
                      "servers' idle power; lower is better), mean over the dispatcher's runs; "
                      "hover a bar for its stretch and power.", [trace],
                      layout(height=320, ytitle="cost"))]
