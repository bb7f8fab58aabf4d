"""Figures that are not over time: CDFs of wait and bounded slowdown, and mean wait and
bounded slowdown per duration class or queue."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from dispatchlab.report.figures import RunView, group_axis
from dispatchlab.report.web.encode import rounded
from dispatchlab.report.web.figure import WebFigure, layout

#: Points per CDF line (quantiles of the sorted values).
CDF_POINTS = 400


def ecdf_points(values: np.ndarray, points: int = CDF_POINTS) -> tuple[list[Any], list[Any]]:
    """The empirical CDF at ``points`` evenly spaced quantiles (all values when fewer)."""
    x = np.sort(np.asarray(values, dtype=np.float64))
    n = len(x)
    if not n:
        return [], []
    k = np.unique(np.linspace(0, n - 1, min(n, points)).round().astype(np.int64))
    return rounded(x[k]), rounded((k + 1) / n)


def cdf_figure(runs: Sequence[RunView]) -> WebFigure:
    """Empirical CDFs of wait (waits under 1 s drawn at 1 s) and bounded slowdown."""
    traces: list[dict[str, Any]] = []
    for run in runs:
        ran = run.jobs[~run.jobs["rejected"]]
        for col, axis, floor in (("wait", "x", 1.0), ("bounded_slowdown", "x2", 0.0)):
            x, y = ecdf_points(np.maximum(ran[col].to_numpy(dtype=np.float64), floor))
            traces.append({"type": "scatter", "mode": "lines", "x": x, "y": y,
                           "xaxis": axis, "name": run.label, "legendgroup": run.label,
                           "showlegend": axis == "x", "line": {"color": run.color,
                                                              "shape": "hv", "width": 1.5},
                           "hovertemplate": ("%{x:,.0f} s" if col == "wait" else "%{x:.3g}")
                           + ": %{y:.1%} of jobs<extra>" + run.label + "</extra>"})
    lay = layout(height=360, ytitle="fraction of jobs ≤ x")
    lay["xaxis"].update({"type": "log", "domain": [0, 0.47],
                         "title": {"text": "wait (s, log scale)"}})
    lay["xaxis2"] = {**lay["xaxis"], "domain": [0.53, 1],
                     "title": {"text": "bounded slowdown, τ = 10 s (log scale)"}}
    lay["yaxis"]["range"] = [0, 1.02]
    return WebFigure("web-cdf", "Distributions of wait and bounded slowdown",
                     f"Empirical CDFs over the jobs that ran (at most {CDF_POINTS} quantiles "
                     "per line): the higher and further left, the better.", traces, lay)


def group_figure(runs: Sequence[RunView], table: pd.DataFrame, kind: str) -> WebFigure:
    """Grouped bars: mean wait and mean bounded slowdown per group and dispatcher (runs
    of one dispatcher averaged)."""
    keys, labels = group_axis(table, kind)
    labels = [lab.replace("\n", "<br>") for lab in labels]
    part = (table[table["kind"] == kind].assign(group=lambda d: d["group"].astype(str))
            .groupby(["dispatcher", "group"], as_index=False, sort=False)
            [["mean_wait", "mean_bounded_slowdown"]].mean())
    traces = []
    for run in runs:
        rows = part[part["dispatcher"] == run.label].set_index("group").reindex(list(keys))
        for col, axes, div in (("mean_wait", ("x", "y"), 60.0),
                               ("mean_bounded_slowdown", ("x2", "y2"), 1.0)):
            traces.append({"type": "bar", "x": labels,
                           "y": rounded(rows[col].to_numpy(dtype=np.float64) / div),
                           "xaxis": axes[0], "yaxis": axes[1], "name": run.label,
                           "legendgroup": run.label, "showlegend": col == "mean_wait",
                           "marker": {"color": run.color}})
    lay = layout(height=360, barmode="group")
    lay["xaxis"]["domain"] = [0, 0.47]
    lay["xaxis2"] = {**lay["xaxis"], "domain": [0.53, 1], "anchor": "y2"}
    lay["yaxis"]["title"] = {"text": "mean wait (min)"}
    lay["yaxis2"] = {**lay["yaxis"], "anchor": "x2", "type": "log", "rangemode": "normal",
                     "title": {"text": "mean bounded slowdown (log)"}}
    what = "duration class" if kind == "class" else "queue"
    return WebFigure(f"web-{kind}-bars", f"Mean wait and bounded slowdown per {what}",
                     f"Per {what}" + (" (short < 1 h, medium 1–5 h, long > 5 h of actual "
                                       "run time)" if kind == "class" else "") + ".",
                     traces, lay)
