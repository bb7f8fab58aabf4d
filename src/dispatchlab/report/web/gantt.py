"""The Gantt chart of one run: jobs as bars on the nodes they ran on, hovering a job
shows its id, user, queue, request, wait and outcome.

Runs with more than ``max_jobs`` jobs keep the page light: the bars show the
``max_jobs`` consecutive jobs (by start) around the middle of the run, and a shaded
heat map underneath shows every node's occupancy over the whole run; the figure says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from dispatchlab.report.figures import CLASS_COLORS, RunView, _lanes
from dispatchlab.report.format import fmt_duration
from dispatchlab.report.web.encode import rounded
from dispatchlab.report.web.figure import WebFigure, layout
from dispatchlab.report.web.timeseries import TimeAxis
from dispatchlab.stats.job_classes import CLASS_LABELS, job_class

#: Jobs drawn as bars per Gantt chart (more: a window of them, over an occupancy map).
MAX_BAR_JOBS = 5000
#: Rows and columns of the occupancy heat map.
HEAT_ROWS = 200
HEAT_COLUMNS = 400

#: Bar colors of outcomes other than "completed" (completed jobs: their duration class).
OUTCOME_COLORS = {"killed": "#7b3294", "aborted": "#d7191c", "reconfigured": "#1a9641",
                  "preempted": "#e66101", "cancelled": "#636363"}


@dataclass(frozen=True)
class GanttSample:
    """Which jobs a Gantt chart draws as bars."""

    jobs: npt.NDArray[np.int64]  # row indices into the jobs table
    total: int  # jobs that ran
    t0: float
    t1: float

    @property
    def sampled(self) -> bool:
        return len(self.jobs) < self.total


def sample_jobs(jobs: pd.DataFrame, max_jobs: int) -> GanttSample:
    """All jobs that ran, or the ``max_jobs`` consecutive ones (by start) around the
    middle of the run."""
    ran = np.flatnonzero(~jobs["rejected"].to_numpy() & (jobs["start"].to_numpy() >= 0))
    start = jobs["start"].to_numpy(dtype=np.float64)
    ran = ran[np.argsort(start[ran], kind="stable")]
    n = len(ran)
    if n > max_jobs:
        i0 = (n - max_jobs) // 2
        ran = ran[i0:i0 + max_jobs]
    if not len(ran):
        return GanttSample(ran, 0, 0.0, 0.0)
    return GanttSample(ran, n, float(start[ran[0]]), float(start[ran[-1]]))


def outcomes(jobs: pd.DataFrame, rows: npt.NDArray[np.int64]) -> list[str]:
    """A job's outcome as a reader would say it: completed, killed at its wall-time,
    aborted and restarted ×N, reconfigured, …"""
    killed = jobs["killed"].to_numpy()[rows]
    out = np.where(killed, "killed at its wall-time", "completed").astype(object)
    if "outcome" in jobs:
        final = jobs["outcome"].to_numpy()[rows]
        out = np.where(final == "completed", out, final)
    if "restarts" in jobs:
        restarts = jobs["restarts"].to_numpy()[rows]
        lost = jobs["lost_work"].to_numpy()[rows] if "lost_work" in jobs else None
        for i in np.flatnonzero(restarts > 0):
            note = f"aborted and restarted ×{int(restarts[i])}"
            if lost is not None and lost[i] > 0:
                note += f", {fmt_duration(float(lost[i]))} of work lost"
            out[i] = f"{out[i]} ({note})"
    if "units_used" in jobs:  # malleable jobs: the units of the last segment
        used = jobs["units_used"].to_numpy()[rows]
        asked = jobs["units"].to_numpy()[rows]
        for i in np.flatnonzero((used != asked) & (used > 0)):
            out[i] = f"{out[i]}; its last part ran on {int(used[i])} units (asked {int(asked[i])})"
    return [str(o) for o in out]


def _category(jobs: pd.DataFrame, rows: npt.NDArray[np.int64]) -> npt.NDArray[Any]:
    cat = job_class(jobs)[rows].astype(object)
    killed = jobs["killed"].to_numpy()[rows]
    cat[killed] = "killed"
    if "outcome" in jobs:
        final = jobs["outcome"].to_numpy()[rows]
        other = final != "completed"
        cat[other] = final[other]
    if "restarts" in jobs:
        cat[jobs["restarts"].to_numpy()[rows] > 0] = "aborted"
    return cat


def _bands(run: RunView, rows: npt.NDArray[np.int64]) -> pd.DataFrame:
    """Bars of the chosen jobs: (job row, y0, y1) with whole nodes in a row merged."""
    alloc = run.alloc
    assert alloc is not None
    part = alloc[np.isin(alloc["job"].to_numpy(), rows)]
    job = part["job"].to_numpy()
    start = run.jobs["start"].to_numpy(dtype=np.float64)[job]
    end = run.jobs["end"].to_numpy(dtype=np.float64)[job]
    nodes = part["node"].to_numpy()
    idx, lo, hi = _lanes(nodes, start, end, part["cores"].to_numpy(),
                         part["node_cores"].to_numpy())
    b = pd.DataFrame({"job": job[idx], "node": nodes[idx], "lo": lo, "hi": hi})
    whole = (b["lo"] == 0) & (b["hi"] == 1)
    w = b[whole].sort_values(["job", "node"])
    new = (w["job"].diff() != 0) | (w["node"].diff() != 1)
    block = new.cumsum()
    merged = w.groupby(block.to_numpy()).agg(job=("job", "first"), first=("node", "first"),
                                             last=("node", "last"))
    shared = b[~whole]
    return pd.concat([
        pd.DataFrame({"job": merged["job"], "y0": merged["first"].astype(float),
                      "y1": merged["last"].astype(float) + 1}),
        pd.DataFrame({"job": shared["job"], "y0": shared["node"] + shared["lo"],
                      "y1": shared["node"] + shared["hi"]}),
    ], ignore_index=True)


def occupancy(run: RunView, edges: npt.NDArray[np.float64],
              rows: int = HEAT_ROWS) -> tuple[npt.NDArray[np.float64], int]:
    """Busy share of each group of nodes in each time bin (groups of ``g`` consecutive
    nodes, at most ``rows`` groups): the exact integral of the allocations."""
    alloc = run.alloc
    assert alloc is not None
    g = max(1, math.ceil(run.nodes / rows))
    n_groups = math.ceil(run.nodes / g)
    job = alloc["job"].to_numpy()
    s = run.jobs["start"].to_numpy(dtype=np.float64)[job]
    e = run.jobs["end"].to_numpy(dtype=np.float64)[job]
    ok = (s >= 0) & (e > s)
    w = np.minimum(alloc["cores"].to_numpy() / np.maximum(alloc["node_cores"].to_numpy(), 1),
                   1.0)[ok]
    s, e = s[ok], e[ok]
    grp = alloc["node"].to_numpy()[ok] // g
    out = np.zeros((n_groups, len(edges) - 1))
    order = np.argsort(grp, kind="stable")
    cuts = np.searchsorted(grp[order], np.arange(n_groups + 1))
    for k in range(n_groups):
        sel = order[cuts[k]:cuts[k + 1]]
        if not len(sel):
            continue
        area = _ramp(s[sel], w[sel], edges) - _ramp(e[sel], w[sel], edges)
        size = min(g, run.nodes - k * g)
        out[k] = np.diff(area) / (np.diff(edges) * size)
    return out, g


def _ramp(t: npt.NDArray[np.float64], w: npt.NDArray[np.float64],
          x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Σ w·max(x − t, 0) for each x."""
    o = np.argsort(t)
    ts, ws = t[o], w[o]
    cw = np.r_[0.0, np.cumsum(ws)]
    cwt = np.r_[0.0, np.cumsum(ws * ts)]
    i = np.searchsorted(ts, x, side="left")
    return np.asarray(x * cw[i] - cwt[i], dtype=np.float64)


def gantt_figure(run: RunView, axis: TimeAxis, max_jobs: int = MAX_BAR_JOBS) -> WebFigure:
    """The run's Gantt chart (see the module's docstring)."""
    if run.alloc is None:
        raise ValueError(f"run {run.label} has no placement table (alloc.parquet)")
    jobs = run.jobs
    sample = sample_jobs(jobs, max_jobs)
    bands = _bands(run, sample.jobs)
    rows = bands["job"].to_numpy()
    uniq, inv = np.unique(rows, return_inverse=True)
    start = jobs["start"].to_numpy(dtype=np.float64)
    end = jobs["end"].to_numpy(dtype=np.float64)
    table = job_columns(jobs, uniq)
    cat = _category(jobs, uniq)[inv]
    traces: list[dict[str, Any]] = []
    if sample.sampled:
        xs = (axis.edges if len(axis.edges) <= HEAT_COLUMNS + 1
              else np.linspace(0, axis.span, HEAT_COLUMNS + 1))
        heat, g = occupancy(run, xs)
        traces.append({
            "type": "heatmap", "name": "occupancy", "z": [rounded(r, 2) for r in heat],
            "x": rounded((xs[:-1] + xs[1:]) / 2 / axis.div, 6),
            "y": rounded(np.arange(heat.shape[0]) * g + g / 2, 6),
            "colorscale": [[0, "#ffffff"], [1, "#8c8c8c"]], "zmin": 0, "zmax": 1,
            "showscale": False, "opacity": 0.9,
            "hoverinfo": "skip"})  # hovering is for the jobs drawn over it
    order = [*CLASS_COLORS, *OUTCOME_COLORS]
    colors = {**CLASS_COLORS, **OUTCOME_COLORS}
    for c in order:
        sel = np.flatnonzero(cat == c)
        if not len(sel):
            continue
        j = rows[sel]
        y0 = bands["y0"].to_numpy()[sel]
        y1 = bands["y1"].to_numpy()[sel]
        traces.append({
            "type": "bar", "orientation": "h", "name": CLASS_LABELS.get(c, c),
            "base": rounded(start[j] / axis.div, 7),
            "x": rounded(np.maximum(end[j] - start[j], 1) / axis.div, 5),
            "y": rounded((y0 + y1) / 2, 6), "width": rounded((y1 - y0) * 0.92, 4),
            "marker": {"color": colors[c], "line": {"width": 0}},
            "customdata": inv[sel]})
    n_ran = sample.total
    if sample.sampled:
        note = (f"Bars: the {len(sample.jobs):,} jobs of {n_ran:,} that started between "
                f"{sample.t0 / axis.div:,.2f} and {sample.t1 / axis.div:,.2f} {axis.unit} "
                "(the middle of the run); grey shading: every node's occupancy over the "
                "whole run.")
    else:
        note = f"All {n_ran:,} jobs that ran."
    title = f"{run.label}: jobs on nodes over time"
    lay = layout(height=max(320, min(760, 160 + run.nodes * 4)), xtitle=axis.title,
                 ytitle=f"node (0–{run.nodes - 1})", barmode="overlay", bargap=0,
                 yaxis={"range": [run.nodes, 0], "rangemode": "normal"})
    lay["xaxis"]["range"] = ([sample.t0 / axis.div, max(sample.t1, sample.t0 + 1) / axis.div]
                             if sample.sampled else [0, axis.span / axis.div])
    lay["hoverlabel"] = {"align": "left"}
    return WebFigure(f"web-gantt-{run.label}", title, note, traces, lay, linked=True,
                     jobs=table)


def _codes(values: npt.NDArray[Any]) -> tuple[list[int], list[str]]:
    names, codes = np.unique(np.asarray(values, dtype=str), return_inverse=True)
    return codes.tolist(), names.tolist()


def job_columns(jobs: pd.DataFrame, rows: npt.NDArray[np.int64]) -> dict[str, Any]:
    """What a hover shows of the jobs ``rows``, as compact columns (repeated strings as
    codes into a list): the page script writes the tooltip text from them."""
    start = jobs["start"].to_numpy(dtype=np.float64)[rows]
    end = jobs["end"].to_numpy(dtype=np.float64)[rows]
    user = jobs["user"].to_numpy()[rows] if "user" in jobs else np.full(len(rows), "–")
    req_cols = [c for c in jobs.columns if c.startswith("req_")]
    per_unit = [", ".join(f"{int(v):,} {c[4:]}" for c, v in zip(req_cols, vals, strict=True)
                          if v) for vals in zip(*(jobs[c].to_numpy()[rows] for c in req_cols),
                                               strict=True)] if req_cols else [""] * len(rows)
    out: dict[str, Any] = {
        "id": jobs["job_id"].to_numpy()[rows],
        "units": jobs["units"].to_numpy()[rows],
        "wall": jobs["requested"].to_numpy()[rows],
        "wait": jobs["wait"].to_numpy()[rows],
        "ran": np.maximum(end - start, 0),
    }
    for key, values in (("user", user), ("queue", jobs["queue"].to_numpy()[rows]),
                        ("per_unit", np.asarray(per_unit, dtype=object)),
                        ("outcome", np.asarray(outcomes(jobs, rows), dtype=object))):
        out[key], out[f"{key}_names"] = _codes(values)
    return out
