"""The dispatchers' own statistics (CP solver calls, statuses, times, …) and the CP
solve time per decision."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dispatchlab.report.analysis import Comparison
from dispatchlab.report.figures import RunView
from dispatchlab.report.web.encode import rounded
from dispatchlab.report.web.families.common import (
    Family,
)
from dispatchlab.report.web.figure import WebFigure, layout
from dispatchlab.report.web.page import Section
from dispatchlab.report.web.tables import Cell, Column, swatch, table_html
from dispatchlab.report.web.timeseries import time_axis


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
    axis = time_axis(views) if views else None
    for v in views:
        log = stats.get(v.label, {}).get("decision_log")
        if not isinstance(log, dict) or "solve_ms" not in log or axis is None:
            continue
        t = np.asarray(log["time"], dtype=np.float64)
        ms = np.asarray([x if x is not None else np.nan for x in log["solve_ms"]], dtype=float)
        keep = np.flatnonzero(np.isfinite(ms) & (ms > 0))
        if len(keep) > SOLVER_POINTS:
            keep = keep[np.unique(np.linspace(0, len(keep) - 1, SOLVER_POINTS).astype(int))]
        traces.append({"type": "scatter", "mode": "markers",
                       "x": rounded(t[keep] / axis.div, 6),
                       "y": rounded(ms[keep]), "name": v.label,
                       "marker": {"color": v.color, "size": 4, "opacity": 0.6},
                       "hovertemplate": "%{y:,.1f} ms<extra>" + v.label + "</extra>"})
    if traces and axis is not None:
        lay = layout(height=320, xtitle=axis.title, ytitle="solve time (ms, log)",
                     yaxis={"type": "log", "rangemode": "normal"})
        lay["xaxis"]["range"] = [0, axis.span / axis.div]
        figs.append(WebFigure("web-solver", "CP solve time per decision",
                              "Each point a decision for which the CP model was solved (at "
                              f"most {SOLVER_POINTS:,} per dispatcher, evenly sampled).",
                              traces, lay, linked=True))
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
