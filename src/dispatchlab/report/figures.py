"""The report's figures (matplotlib, no display needed): one function per picture.

Time axes are in hours for runs up to two days and in days beyond; utilization and queue
length are time-weighted means over bins (a raw step series of thousands of events per
dispatcher would be an unreadable band).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter  # noqa: E402

from dispatchlab.stats.breakdown import CLASS_BOUNDS, CLASS_LABELS, job_class  # noqa: E402

FloatArray = npt.NDArray[np.float64]

WIDTH = 10.0
BINS = 240
CLASS_COLORS = {"short": "#4C9BE8", "medium": "#F2A93B", "long": "#C8553D"}


@dataclass
class RunView:
    """What the figures need from one run."""

    label: str
    color: str
    jobs: pd.DataFrame
    timeseries: pd.DataFrame
    totals: dict[str, int]
    nodes: int
    alloc: pd.DataFrame | None = None


def palette(names: Sequence[str]) -> dict[str, str]:
    """A stable, distinguishable color per dispatcher."""
    cmap = plt.get_cmap("tab10")
    return {n: matplotlib.colors.to_hex(cmap(i % 10)) for i, n in enumerate(names)}


# --- time axes ----------------------------------------------------------------------------

def time_unit(span_seconds: float) -> tuple[float, str]:
    """Divisor and name of the unit for a time axis spanning ``span_seconds``."""
    return (3600.0, "hours") if span_seconds <= 2 * 86400 else (86400.0, "days")


def _end_time(run: RunView) -> int:
    ran = run.jobs[~run.jobs["rejected"]]
    return int(ran["end"].max()) if len(ran) else 0


def binned_mean(t: npt.ArrayLike, v: npt.ArrayLike, edges: FloatArray) -> FloatArray:
    """Time-weighted mean of the step function (value ``v[i]`` from ``t[i]``) in each bin.

    Before ``t[0]`` the value is 0; the last value holds to the end.
    """
    tt = np.asarray(t, dtype=np.float64)
    vv = np.asarray(v, dtype=np.float64)
    if len(tt) == 0:
        return np.zeros(len(edges) - 1)
    cum = np.concatenate(([0.0], np.cumsum(vv[:-1] * np.diff(tt))))

    def integral(x: FloatArray) -> FloatArray:
        i = np.searchsorted(tt, x, side="right") - 1
        inside = i >= 0
        out = np.zeros_like(x)
        ii = i[inside]
        out[inside] = cum[ii] + vv[ii] * (x[inside] - tt[ii])
        return out

    area = np.diff(integral(edges))
    return np.asarray(area / np.diff(edges), dtype=np.float64)


def _edges(span: float, bins: int = BINS) -> FloatArray:
    return np.linspace(0.0, max(span, 1.0), bins + 1)


def _time_axis(ax: plt.Axes, span: float) -> float:
    div, unit = time_unit(span)
    ax.set_xlabel(f"time since the first submission ({unit})")
    ax.set_xlim(0, span / div)
    return div


# --- figures ------------------------------------------------------------------------------

def utilization_figure(runs: Sequence[RunView]) -> Figure:
    """Share of each resource in use over time, one panel per resource, a line per run."""
    resources = [r for r, tot in runs[0].totals.items() if tot > 0]
    span = max(_end_time(r) for r in runs)
    edges = _edges(span)
    mids = (edges[:-1] + edges[1:]) / 2
    fig, axes = plt.subplots(len(resources), 1, figsize=(WIDTH, 2.6 + 2.2 * len(resources)),
                             sharex=True, squeeze=False, layout="constrained")
    div, unit = time_unit(span)
    bin_len = (edges[1] - edges[0]) / div
    for ax, res in zip(axes[:, 0], resources, strict=True):
        for run in runs:
            col = f"used_{res}"
            if col not in run.timeseries:
                continue
            m = binned_mean(run.timeseries["time"], run.timeseries[col], edges)
            ax.plot(mids / div, 100 * m / run.totals[res], color=run.color, lw=1.3,
                    label=run.label)
        ax.set_ylabel(f"{res} in use (%)")
        ax.set_ylim(0, 105)
        ax.grid(alpha=0.3)
    _time_axis(axes[-1, 0], span)
    axes[0, 0].set_title(f"Utilization over time (mean per {_fmt_bin(bin_len, unit)} bin)")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center",
               ncol=min(len(runs), 6), frameon=False)
    return fig


def queue_figure(runs: Sequence[RunView]) -> Figure:
    """Number of queued jobs over time, a line per run."""
    span = max(_end_time(r) for r in runs)
    edges = _edges(span)
    mids = (edges[:-1] + edges[1:]) / 2
    fig, ax = plt.subplots(figsize=(WIDTH, 4.2), layout="constrained")
    div, unit = time_unit(span)
    for run in runs:
        m = binned_mean(run.timeseries["time"], run.timeseries["queue_length"], edges)
        ax.plot(mids / div, m, color=run.color, lw=1.3, label=run.label)
    _time_axis(ax, span)
    ax.set_ylabel("queued jobs")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.set_title(f"Queue length over time (mean per {_fmt_bin((edges[1] - edges[0]) / div, unit)}"
                 " bin)")
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center",
               ncol=min(len(runs), 6), frameon=False)
    return fig


_TIME_TICKS = [(1, "1 s"), (10, "10 s"), (60, "1 min"), (600, "10 min"), (3600, "1 h"),
               (6 * 3600, "6 h"), (86400, "1 d"), (7 * 86400, "1 wk"), (30 * 86400, "30 d"),
               (365 * 86400, "1 y")]


def _ecdf(values: FloatArray) -> tuple[FloatArray, FloatArray]:
    x = np.sort(values)
    y = np.arange(1, len(x) + 1) / len(x)
    return x, y


def cdf_figure(runs: Sequence[RunView]) -> Figure:
    """Empirical CDFs of wait time and bounded slowdown, a line per run (log x axes)."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(WIDTH, 4.4), layout="constrained")
    wmax = 1.0
    bmax = 1.0
    for run in runs:
        ran = run.jobs[~run.jobs["rejected"]]
        w = ran["wait"].to_numpy(dtype=np.float64)
        b = ran["bounded_slowdown"].to_numpy(dtype=np.float64)
        if not len(w):
            continue
        wmax = max(wmax, float(w.max()))
        bmax = max(bmax, float(b.max()))
        x, y = _ecdf(np.maximum(w, 1.0))
        a1.step(np.concatenate(([1.0], x)), np.concatenate(([0.0], y)), where="post",
                color=run.color, lw=1.3, label=run.label)
        x, y = _ecdf(b)
        a2.step(np.concatenate(([1.0], x)), np.concatenate(([0.0], y)), where="post",
                color=run.color, lw=1.3)
    a1.set_xscale("log")
    a1.set_xlim(1, wmax * 1.5)
    ticks = [t for t in _TIME_TICKS if t[0] <= wmax * 1.5]
    a1.xaxis.set_major_locator(FixedLocator([t for t, _ in ticks]))
    a1.xaxis.set_major_formatter(FuncFormatter(
        lambda v, _p: dict(ticks).get(int(round(v)), "")))
    a1.xaxis.set_minor_formatter(NullFormatter())
    a1.set_xlabel("wait time (log scale; waits under 1 s drawn at 1 s)")
    a1.set_title("Wait time")
    a2.set_xscale("log")
    a2.set_xlim(1, bmax * 1.5)
    a2.set_xlabel("bounded slowdown, τ = 10 s (log scale)")
    a2.set_title("Bounded slowdown")
    for ax in (a1, a2):
        ax.set_ylabel("fraction of jobs ≤ x")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3, which="major")
    fig.legend(*a1.get_legend_handles_labels(), loc="outside lower center",
               ncol=min(len(runs), 6), frameon=False)
    return fig


def group_bars_figure(runs: Sequence[RunView], table: pd.DataFrame, kind: str,
                      groups: Sequence[str], labels: Sequence[str]) -> Figure:
    """Grouped bars of mean wait and mean bounded slowdown per job group and run.

    ``table`` is a breakdown table (rows: dispatcher × group) restricted to ``kind``.
    """
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(WIDTH, 4.4), layout="constrained")
    part = table[table["kind"] == kind]
    x = np.arange(len(groups))
    width = 0.8 / max(len(runs), 1)
    waits = part["mean_wait"].to_numpy(dtype=np.float64)
    finite = waits[np.isfinite(waits)]
    top = float(finite.max()) if len(finite) else 1.0
    div, unit = (60.0, "min") if top < 2 * 3600 else ((3600.0, "h") if top < 4 * 86400
                                                      else (86400.0, "days"))
    for i, run in enumerate(runs):
        rows = part[part["dispatcher"] == run.label].set_index("group").reindex(groups)
        off = (i - (len(runs) - 1) / 2) * width
        a1.bar(x + off, rows["mean_wait"].to_numpy(dtype=np.float64) / div, width,
               color=run.color, label=run.label)
        a2.bar(x + off, rows["mean_bounded_slowdown"].to_numpy(dtype=np.float64), width,
               color=run.color)
    for ax in (a1, a2):
        ax.set_xticks(x, labels)
        ax.grid(alpha=0.3, axis="y")
    a1.set_ylabel(f"mean wait ({unit})")
    a1.set_title("Mean wait")
    a2.set_ylabel("mean bounded slowdown (log scale)")
    a2.set_yscale("log")
    a2.set_title("Mean bounded slowdown (τ = 10 s)")
    what = "duration class (actual run time)" if kind == "class" else "queue"
    a1.set_xlabel(what)
    a2.set_xlabel(what)
    fig.legend(*a1.get_legend_handles_labels(), loc="outside lower center",
               ncol=min(len(runs), 6), frameon=False)
    return fig


def class_labels(jobs: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Class keys and axis labels with job counts."""
    classes = job_class(jobs)
    keys = [name for name, _lo, _hi in CLASS_BOUNDS]
    return keys, [f"{CLASS_LABELS[k]}\n{int((classes == k).sum()):,} jobs" for k in keys]


def gantt_figure(run: RunView) -> Figure:
    """Nodes × time: each job drawn on its nodes, lanes within a node for its cores."""
    if run.alloc is None:
        raise ValueError("the run has no placement table")
    jobs = run.jobs
    alloc = run.alloc
    span = _end_time(run)
    div, unit = time_unit(span)
    start = jobs["start"].to_numpy(dtype=np.float64)[alloc["job"].to_numpy()]
    end = jobs["end"].to_numpy(dtype=np.float64)[alloc["job"].to_numpy()]
    classes = job_class(jobs)[alloc["job"].to_numpy()]
    nodes = alloc["node"].to_numpy()
    cores = alloc["cores"].to_numpy()
    cap = alloc["node_cores"].to_numpy()
    lo, hi = _lanes(nodes, start, end, cores, cap)
    height = max(3.0, min(9.0, 1.5 + run.nodes * 0.06))
    fig, ax = plt.subplots(figsize=(WIDTH, height), layout="constrained")
    for cls, color in CLASS_COLORS.items():
        sel = classes == cls
        if not sel.any():
            continue
        x0 = start[sel] / div
        x1 = end[sel] / div
        y0 = nodes[sel] + lo[sel]
        y1 = nodes[sel] + hi[sel]
        verts = np.stack([np.stack([x0, y0], 1), np.stack([x1, y0], 1),
                          np.stack([x1, y1], 1), np.stack([x0, y1], 1)], axis=1)
        ax.add_collection(PolyCollection(verts, facecolors=color, edgecolors="none",
                                         rasterized=True))
    ax.set_xlim(0, max(span, 1) / div)
    ax.set_ylim(run.nodes, 0)
    ax.set_xlabel(f"time since the first submission ({unit})")
    ax.set_ylabel(f"node (0–{run.nodes - 1})")
    n_jobs = int((~jobs["rejected"]).sum())
    ax.set_title(f"{run.label}: jobs on nodes over time ({n_jobs:,} jobs; white = idle)")
    fig.legend(handles=[Patch(color=c, label=CLASS_LABELS[k]) for k, c in CLASS_COLORS.items()],
               loc="outside lower center", ncol=3, frameon=False)
    return fig


def _lanes(nodes: npt.NDArray[np.int64], start: FloatArray, end: FloatArray,
           cores: npt.NDArray[np.int64], cap: npt.NDArray[np.int64]
           ) -> tuple[FloatArray, FloatArray]:
    """Vertical band [lo, hi) inside each node row: cores stacked where free at the start.

    A greedy interval packing per node: a job takes the lowest contiguous block of lanes
    free at its start (the engine guarantees enough cores are free; when they are not
    contiguous, the band starts at the lowest free lane).
    """
    lo = np.zeros(len(nodes))
    hi = np.zeros(len(nodes))
    order = np.lexsort((start, nodes))
    free_at: dict[int, FloatArray] = {}
    for i in order:
        n = int(nodes[i])
        c = int(cap[i]) or 1
        lanes = free_at.setdefault(n, np.zeros(c))
        need = max(1, min(int(cores[i]), c))
        free = lanes <= start[i]
        pos = _first_block(free, need)
        lanes[pos:pos + need] = end[i]
        lo[i] = pos / c
        hi[i] = (pos + need) / c
    pad = 0.08
    return lo * (1 - pad) + pad / 2, hi * (1 - pad) + pad / 2


def _first_block(free: npt.NDArray[np.bool_], need: int) -> int:
    run = 0
    for j, f in enumerate(free):
        run = run + 1 if f else 0
        if run == need:
            return j - need + 1
    idx = np.flatnonzero(free)
    return int(idx[0]) if len(idx) else 0


def means_figure(means: pd.DataFrame, metrics: Sequence[tuple[str, str, float]],
                 colors: dict[str, str]) -> Figure:
    """Mean with confidence interval per dispatcher, a panel per metric.

    ``metrics`` holds ``(key, axis label, divisor)``; ``means`` is a
    :func:`dispatchlab.stats.ci.summarize_runs` table.
    """
    fig, axes = plt.subplots(1, len(metrics), figsize=(WIDTH, 0.9 + 0.42 * _n(means)),
                             squeeze=False, layout="constrained")
    for ax, (key, label, div) in zip(axes[0], metrics, strict=True):
        part = means[means["metric"] == key]
        names = list(part["dispatcher"])
        y = np.arange(len(names))
        mean = part["mean"].to_numpy(dtype=np.float64) / div
        low = part["ci_low"].to_numpy(dtype=np.float64) / div
        high = part["ci_high"].to_numpy(dtype=np.float64) / div
        err = np.vstack([mean - low, high - mean])
        err = np.where(np.isfinite(err), err, 0.0)
        for k, name in enumerate(names):
            ax.errorbar(mean[k], y[k], xerr=err[:, k:k + 1], fmt="o",
                        color=colors.get(name, "k"), capsize=3)
        ax.set_yticks(y, names)
        ax.set_ylim(len(names) - 0.5, -0.5)
        ax.set_xlabel(label)
        ax.grid(alpha=0.3, axis="x")
    n_sets = int(means["n"].max()) if len(means) else 0
    conf = float(means["confidence"].iloc[0]) if len(means) else 0.95
    fig.suptitle(f"Mean over {n_sets} sets with {conf:.0%} confidence interval")
    return fig


def _n(means: pd.DataFrame) -> int:
    return int(means["dispatcher"].nunique()) if len(means) else 1


def _fmt_bin(length: float, unit: str) -> str:
    if unit == "days" and length < 1:
        hours = length * 24
        return f"{hours:.3g}-hour"
    if unit == "hours" and length < 1:
        return f"{length * 60:.3g}-minute"
    return f"{length:.3g}-{unit[:-1]}"


def span_label(seconds: float) -> str:
    """``3.2 days`` / ``5.0 hours`` for captions."""
    div, unit = time_unit(seconds)
    return f"{seconds / div:.1f} {unit}" if not math.isnan(seconds) else "–"
