"""Zoomable time series: utilization per resource (with the desired profile), queue
length, alive nodes, IT power with the cap in force, cooling power and temperature.

Long series are downsampled to time-weighted means over round bins (at most
:data:`MAX_POINTS` per line); the bin is stated in each figure's title.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from dispatchlab.report.figures import RunView, bin_label, binned_mean, end_time, nice_bin
from dispatchlab.report.web.encode import rounded
from dispatchlab.report.web.figure import WebFigure, layout

#: Most points per line (bins over the whole run).
MAX_POINTS = 1500


@dataclass(frozen=True)
class TimeAxis:
    """The time axis every linked figure shares: its span, unit and bins."""

    span: float
    div: float
    unit: str
    edges: npt.NDArray[np.float64]

    @property
    def bin_seconds(self) -> float:
        return float(self.edges[1] - self.edges[0])

    @property
    def x(self) -> list[Any]:
        """Bin midpoints in the axis unit."""
        return rounded((self.edges[:-1] + self.edges[1:]) / 2 / self.div, 6)

    @property
    def title(self) -> str:
        return f"time since the first submission ({self.unit})"

    @property
    def means(self) -> str:
        return f"{bin_label(self.bin_seconds)} means"


def time_axis(runs: Sequence[RunView], max_points: int = MAX_POINTS) -> TimeAxis:
    """Hours for runs up to two days, days beyond; bins giving at most ``max_points``."""
    span = float(max(max((end_time(r) for r in runs), default=1), 1))
    for r in runs:
        if r.cooling is not None and len(r.cooling):
            span = max(span, float(r.cooling["time"].max()))
    div, unit = (3600.0, "hours") if span <= 2 * 86400 else (86400.0, "days")
    b = nice_bin(span, max_points)
    n = max(1, math.ceil(span / b))
    return TimeAxis(span, div, unit, np.arange(n + 1, dtype=np.float64) * b)


def _line(run: RunView, x: list[Any], y: Any, name: str, **extra: Any) -> dict[str, Any]:
    trace: dict[str, Any] = {"type": "scatter", "mode": "lines", "x": x, "y": rounded(y),
                             "name": name, "legendgroup": run.label,
                             "line": {"color": run.color, "width": 1.5}}
    for k, v in extra.items():
        trace[k] = {**trace[k], **v} if isinstance(v, dict) and k in trace else v
    return trace


def _series(run: RunView, col: str, axis: TimeAxis) -> npt.NDArray[np.float64]:
    ts = run.timeseries
    return binned_mean(ts["time"], ts[col].astype(float), axis.edges)


def _figure(name: str, title: str, caption: str, traces: list[dict[str, Any]],
            axis: TimeAxis, ytitle: str, **extra: Any) -> WebFigure:
    lay = layout(xtitle=axis.title, ytitle=ytitle, hovermode="x unified", **extra)
    lay["xaxis"]["range"] = [0, axis.span / axis.div]
    return WebFigure(name, title, caption, traces, lay, linked=True)


def utilization_figures(runs: Sequence[RunView], axis: TimeAxis) -> list[WebFigure]:
    """One figure per resource: the share in use, a line per dispatcher; dashed, the
    desired profile when the run had one."""
    resources = [r for r, tot in runs[0].totals.items() if tot > 0]
    figs = []
    x = axis.x
    for res in resources:
        traces: list[dict[str, Any]] = []
        desired = False
        for run in runs:
            total = run.totals.get(res, 0)
            if f"used_{res}" not in run.timeseries or not total:
                continue
            traces.append(_line(run, x, 100 * _series(run, f"used_{res}", axis) / total,
                                run.label))
            if f"desired_{res}" in run.timeseries:
                desired = True
                traces.append(_line(run, x, 100 * _series(run, f"desired_{res}", axis) / total,
                                    f"{run.label}: desired", line={"dash": "dash",
                                                                   "width": 1.1}))
        if not traces:
            continue
        extra = "; dashed: the desired profile" if desired else ""
        figs.append(_figure(
            f"web-util-{res}", f"Utilization of {res} ({axis.means}{extra})",
            f"Share of the machine's {res} held by running jobs"
            + (" and, dashed, the share the desired power/utilization profile asked for"
               if desired else "") + ".",
            traces, axis, f"{res} in use (%)", yaxis={"range": [0, 105]}))
    return figs


def queue_figure(runs: Sequence[RunView], axis: TimeAxis) -> WebFigure:
    """Queued jobs over time, a line per dispatcher."""
    traces = [_line(r, axis.x, _series(r, "queue_length", axis), r.label) for r in runs]
    return _figure("web-queue", f"Queue length ({axis.means})",
                   "Jobs waiting in the queue.", traces, axis, "queued jobs")


def alive_figure(runs: Sequence[RunView], axis: TimeAxis) -> WebFigure | None:
    """Nodes alive (not failed or withdrawn) over time, for machines whose nodes come
    and go."""
    have = [r for r in runs if "alive_nodes" in r.timeseries]
    if not have:
        return None
    traces = [_line(r, axis.x, _series(r, "alive_nodes", axis), r.label,
                    line={"shape": "hv"}) for r in have]
    return _figure("web-alive", f"Alive nodes ({axis.means})",
                   "Nodes available to run jobs (the machine's capacity scenario).",
                   traces, axis, "alive nodes")


def _cap_trace(run: RunView, axis: TimeAxis) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    ts = run.timeseries
    if "power_cap" not in ts:
        return None
    t = ts["time"].to_numpy(dtype=np.float64)
    cap = ts["power_cap"].to_numpy(dtype=np.float64)
    if not np.isfinite(cap).any():
        return None
    change = np.r_[True, cap[1:] != cap[:-1]]
    if change.sum() > MAX_POINTS:  # a cap changing very often: its bin means
        tx: Any = axis.x
        ty = binned_mean(t, np.where(np.isfinite(cap), cap, np.nan), axis.edges) / 1000
    else:
        tx = rounded(np.r_[t[change], axis.span] / axis.div, 6)
        ty = np.r_[cap[change], cap[-1]] / 1000
    key = (tuple(tx), tuple(rounded(ty)))
    return key, {"type": "scatter", "mode": "lines", "x": tx, "y": rounded(ty),
                 "line": {"color": "black", "dash": "dash", "width": 1.2, "shape": "hv"}}


def power_figure(runs: Sequence[RunView], axis: TimeAxis) -> WebFigure | None:
    """IT power drawn, a line per dispatcher, and the cap in force (dashed)."""
    have = [r for r in runs if "power_used" in r.timeseries]
    if not have:
        return None
    traces = [_line(r, axis.x, _series(r, "power_used", axis) / 1000, r.label) for r in have]
    caps: dict[tuple[Any, ...], list[str]] = {}
    cap_traces: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in have:
        got = _cap_trace(r, axis)
        if got is not None:
            caps.setdefault(got[0], []).append(r.label)
            cap_traces.setdefault(got[0], got[1])
    for key, trace in cap_traces.items():
        who = caps[key]
        trace["name"] = "power cap" + ("" if len(cap_traces) == 1 else f" ({', '.join(who)})")
        traces.append(trace)
    return _figure("web-power", f"IT power ({axis.means}; dashed: the cap in force)",
                   "Power drawn by the machine (jobs and, when the platform counts them, "
                   "idle and transitioning nodes) and the power cap in force.",
                   traces, axis, "IT power (kW)")


def cooling_figures(runs: Sequence[RunView], axis: TimeAxis) -> list[WebFigure]:
    """Cooling power (a line per dispatcher) and ambient temperature (a line per distinct
    weather), from the runs' profit accounting."""
    have = [r for r in runs if r.cooling is not None and len(r.cooling)]
    if not have:
        return []
    cool, temps = [], []
    seen: list[npt.NDArray[np.float64]] = []
    for r in have:
        c = r.cooling
        assert c is not None
        t = c["time"].to_numpy(dtype=np.float64)
        cool.append(_line(r, axis.x, binned_mean(t, c["cooling_w"].astype(float), axis.edges)
                          / 1000, r.label))
        temp = binned_mean(t, c["temperature_c"].astype(float), axis.edges)
        temp[axis.edges[:-1] > t[-1]] = np.nan
        if not any(np.allclose(temp, s, atol=1e-3, equal_nan=True) for s in seen):
            seen.append(temp)
            temps.append(_line(r, axis.x, temp, f"{r.label}: ambient"))
    return [
        _figure("web-cooling", f"Cooling power ({axis.means})",
                "Cooling power = IT power × (PUE − 1) under each run's cooling model.",
                cool, axis, "cooling power (kW)"),
        _figure("web-temperature", f"Ambient temperature ({axis.means})",
                "The outside temperature the cooling model saw (one line per distinct "
                "weather).", temps, axis, "ambient (°C)",
                yaxis={"rangemode": "normal"}),
    ]


def time_figures(runs: Sequence[RunView], axis: TimeAxis) -> list[WebFigure]:
    """Every time series the runs have, in reading order."""
    figs = utilization_figures(runs, axis)
    figs.append(queue_figure(runs, axis))
    for extra in (alive_figure(runs, axis), power_figure(runs, axis)):
        if extra is not None:
            figs.append(extra)
    figs += cooling_figures(runs, axis)
    return figs
