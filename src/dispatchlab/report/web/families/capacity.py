"""Variable capacity: goodput, aborted and lost work, alive nodes."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from dispatchlab.report.analysis import Comparison
from dispatchlab.report.figures import RunView
from dispatchlab.report.web.encode import rounded
from dispatchlab.report.web.families.common import Family, fmt, hbar_layout, means_table, runs_have
from dispatchlab.report.web.figure import WebFigure
from dispatchlab.report.web.page import Section


def capacity_section(cmp: Comparison, views: Sequence[RunView],
                     colors: dict[str, str]) -> Family | None:
    """Goodput, aborted work and alive nodes of machines whose nodes come and go."""
    if not runs_have(cmp, "goodput", "aborted_segments"):
        return None
    pct: Callable[[float], str] = lambda v: f"{100 * v:.1f} %"  # noqa: E731
    table, html = means_table(cmp, {
        "goodput": ("goodput", "goodput: completed work ÷ alive capacity in the metrics "
                    "window (higher is better)", pct),
        "aborted_count": ("aborted", "runs aborted when their nodes left", fmt(0)),
        "aborted_volume": ("aborted core-h", "work of aborted runs (core-hours)", fmt(1)),
        "lost_work_core_seconds": ("lost core-h", "work lost to aborts (core-hours)", fmt(1)),
        "max_stretch": ("max stretch", "maximum stretch", fmt(1)),
        "mean_stretch": ("mean stretch", "mean stretch", fmt(2)),
        "utilization_alive": ("util. alive", "utilization of the alive cores", pct),
        "mean_alive_nodes": ("alive nodes", "mean number of alive nodes", fmt(1)),
        "min_alive_nodes": ("min alive", "fewest alive nodes", fmt(0)),
    }, colors, "Means over each dispatcher's runs; the alive nodes over time are in "
       "\"Over time\".", divide={"aborted_volume": 3600, "lost_work_core_seconds": 3600})
    sec = Section("capacity", "Variable capacity").add(html)
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
        lay = hbar_layout(names, "goodput (%)")
        lay["xaxis"]["domain"] = [0, 0.45]
        lay["xaxis2"] = {**lay["xaxis"], "domain": [0.55, 1], "anchor": "y2",
                         "title": {"text": "aborted work (core-hours)"}}
        lay["yaxis2"] = {**lay["yaxis"], "anchor": "x2", "showticklabels": False}
        figs.append(WebFigure("web-capacity", "Goodput and aborted work",
                              "Goodput (left) and the work of runs aborted when their nodes "
                              "left (right), mean over each dispatcher's runs.", traces, lay))
    sec.add(*figs)
    return sec, figs
