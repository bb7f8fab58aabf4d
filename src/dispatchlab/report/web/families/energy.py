"""Energy and power: energy per dispatcher by node state, power and the cap, waiting
against the cap."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dispatchlab.report.analysis import Comparison
from dispatchlab.report.figures import ENERGY_PARTS, RunView, cap_values, has_cap_sweep
from dispatchlab.report.web.encode import rounded
from dispatchlab.report.web.families.common import Family, fmt, hbar_layout, means_table, runs_have
from dispatchlab.report.web.figure import WebFigure, layout
from dispatchlab.report.web.page import Section


def energy_section(cmp: Comparison, views: Sequence[RunView],
                   colors: dict[str, str]) -> Family | None:
    """Energy per dispatcher by node state, power figures, waiting against the cap."""
    if not runs_have(cmp, "energy_kwh", "power_mean_w"):
        return None
    table, html = means_table(cmp, {
        "energy_kwh": ("energy kWh", "energy from the first submission to the last end (kWh)",
                       fmt(2)),
        "energy_busy_kwh": ("busy kWh", "energy of busy nodes (kWh)", fmt(2)),
        "energy_idle_kwh": ("idle kWh", "energy of idle nodes (kWh)", fmt(2)),
        "energy_other_kwh": ("off/boot kWh", "energy of off, booting, shutting-down nodes",
                             fmt(2)),
        "power_mean_w": ("mean kW", "mean IT power (kW)", fmt(2)),
        "power_peak_w": ("peak kW", "peak IT power (kW)", fmt(2)),
        "power_cap_mean_w": ("cap kW", "power cap, time-weighted mean (kW)", fmt(2)),
        "power_over_cap_seconds": ("over cap", "seconds spent above the cap", fmt(0, " s")),
    }, colors, "Means over each dispatcher's runs.",
        divide={"power_mean_w": 1000, "power_peak_w": 1000, "power_cap_mean_w": 1000})
    sec = Section("energy", "Energy and power").add(html)
    figs: list[WebFigure] = []
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
                              traces, hbar_layout(names, "energy (kWh)")))
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
