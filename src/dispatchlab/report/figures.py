"""The report's figures: one function per picture, each returning a matplotlib Figure.

Figures are built on :class:`matplotlib.figure.Figure` directly (no pyplot, no GUI backend,
nothing to close). Time axes are in hours for runs up to two days and in days beyond;
utilization and queue length are time-weighted means over round bins (a raw step series of
thousands of events per dispatcher would be an unreadable band).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib
import numpy as np
import numpy.typing as npt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from dispatchlab.arrays import FloatArray
from dispatchlab.stats.job_classes import CLASS_BOUNDS, CLASS_LABELS, job_class

WIDTH = 10.0
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
    cooling: pd.DataFrame | None = None  # profit accounting series (cooling.parquet)


def legend_columns(n: int, most: int = 7) -> int:
    """Columns for a legend of ``n`` entries: one row up to ``most``, else balanced rows
    (8 entries → 2 × 4, not 7 + 1)."""
    rows = -(-n // most)
    return max(1, -(-n // rows))

def legend_below(fig: Figure, handles: Sequence[Any], labels: Sequence[str] | None = None,
                 *, ncol: int) -> None:
    """The figure's legend under its axes, in ``ncol`` columns, without a frame (labels from
    the handles when not given)."""
    where: dict[str, Any] = {"loc": "outside lower center", "ncol": ncol, "frameon": False}
    if labels is None:
        fig.legend(handles=handles, **where)
    else:  # positional: matplotlib takes empty handles and labels only so
        fig.legend(handles, labels, **where)


def _subplots(
    nrows: int = 1, ncols: int = 1, *, figsize: tuple[float, float], **kwargs: Any
) -> tuple[Figure, Any]:
    """A constrained-layout figure and its axes, like ``pyplot.subplots`` without pyplot."""
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.subplots(nrows, ncols, **kwargs)


def palette(names: Sequence[str]) -> dict[str, str]:
    """A stable, distinguishable color per dispatcher."""
    cmap = matplotlib.colormaps["tab10"]
    return {n: matplotlib.colors.to_hex(cmap(i % 10)) for i, n in enumerate(names)}


# --- time axes ----------------------------------------------------------------------------


def time_unit(span_seconds: float) -> tuple[float, str]:
    """Divisor and name of the unit for a time axis spanning ``span_seconds``."""
    return (3600.0, "hours") if span_seconds <= 2 * 86400 else (86400.0, "days")


def end_time(run: RunView) -> int:
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


_NICE_BINS = (
    60,
    300,
    600,
    900,
    1800,
    3600,
    2 * 3600,
    3 * 3600,
    6 * 3600,
    12 * 3600,
    86400,
    2 * 86400,
    7 * 86400,
    14 * 86400,
    30 * 86400,
)


def nice_bin(span: float, max_bins: int = 160) -> int:
    """The shortest round bin length (1 min … 30 d) giving at most ``max_bins`` bins."""
    for b in _NICE_BINS:
        if span / b <= max_bins:
            return b
    return math.ceil(span / max_bins)


def _edges(span: float) -> FloatArray:
    b = nice_bin(max(span, 1.0))
    n = max(1, math.ceil(max(span, 1.0) / b))
    return np.arange(n + 1, dtype=np.float64) * b


def bin_label(seconds: float) -> str:
    """``1-hour``, ``10-minute``, ``1-day`` …"""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}-{unit}"
    return f"{seconds:.0f}-second"


def _time_axis(ax: Axes, span: float) -> float:
    div, unit = time_unit(span)
    ax.set_xlabel(f"time since the first submission ({unit})")
    ax.set_xlim(0, span / div)
    return div


# --- figures ------------------------------------------------------------------------------

#: Line styles of the 2nd, 3rd, … resource (dark, so they never clash with a dispatcher's
#: color; the first resource is the filled area in the dispatcher's color).
RESOURCE_STYLES = ("-", "--", ":", "-.")


def utilization_figure(runs: Sequence[RunView]) -> Figure:
    """Share of each resource in use over time: a panel per run (small multiples, shared
    axes), the area filled for the first resource and a line for each other one."""
    resources = [r for r, tot in runs[0].totals.items() if tot > 0]
    span = max(end_time(r) for r in runs)
    edges = _edges(span)
    mids = (edges[:-1] + edges[1:]) / 2
    div, _unit = time_unit(span)
    fig, axes = _subplots(
        len(runs),
        1,
        figsize=(WIDTH, 1.3 + 1.2 * len(runs)),
        sharex=True,
        sharey=True,
        squeeze=False,
    )
    for ax, run in zip(axes[:, 0], runs, strict=True):
        means = []
        for k, res in enumerate(resources):
            col = f"used_{res}"
            if col not in run.timeseries or not run.totals.get(res):
                continue
            m = (
                100
                * binned_mean(run.timeseries["time"], run.timeseries[col], edges)
                / run.totals[res]
            )
            if k == 0:
                ax.fill_between(mids / div, m, color=run.color, alpha=0.35, lw=0)
                ax.plot(mids / div, m, color=run.color, lw=0.9)
            else:
                style = RESOURCE_STYLES[(k - 1) % len(RESOURCE_STYLES)]
                ax.plot(mids / div, m, color="#333333", ls=style, lw=1.0)
            means.append(f"{100 * _overall(run, res):.0f} % of {res}")
            if f"desired_{res}" in run.timeseries:
                d = (100 * binned_mean(run.timeseries["time"], run.timeseries[f"desired_{res}"],
                                       edges) / run.totals[res])
                ax.plot(mids / div, d, color="black", ls="--", lw=0.9)
        if "alive_nodes" in run.timeseries and resources and \
                f"alive_{resources[0]}" in run.timeseries:
            # a machine whose nodes come and go: the alive share of the first resource
            alive = (100 * binned_mean(run.timeseries["time"],
                                       run.timeseries[f"alive_{resources[0]}"], edges)
                     / run.totals[resources[0]])
            ax.step(mids / div, alive, where="mid", color="#b22222", lw=0.9, ls="--")
            nodes = run.timeseries["alive_nodes"]
            means.append(f"alive nodes {nodes.min()}–{nodes.max()} (dashed)")
        ax.text(
            0.005,
            0.96,
            f"{run.label}: mean {'; '.join(means)}",
            transform=ax.transAxes,
            va="top",
            ha="left",
            fontsize=9,
            bbox={"facecolor": "white", "alpha": 0.85, "lw": 0, "pad": 1.5},
        )
        ax.set_ylim(0, 115)
        ax.set_yticks([0, 50, 100])
        ax.grid(alpha=0.3)
    _time_axis(axes[-1, 0], span)
    what = resources[0] if len(resources) == 1 else "resources"
    fig.supylabel(f"{what} in use (%)")
    desired = any(f"desired_{r}" in run.timeseries for run in runs for r in resources)
    fig.suptitle(f"Utilization over time ({bin_label(edges[1] - edges[0])} means)"
                 + ("; dashed: desired profile" if desired else ""))
    if len(resources) > 1:
        handles: list[Any] = [
            Patch(color="#999999", alpha=0.5, label=f"{resources[0]} (filled area)")
        ]
        handles += [
            Line2D(
                [], [], color="#333333", ls=RESOURCE_STYLES[(k - 1) % len(RESOURCE_STYLES)], label=r
            )
            for k, r in enumerate(resources)
            if k
        ]
        legend_below(fig, handles, ncol=len(handles))
    return fig


def _overall(run: RunView, res: str) -> float:
    """Time-weighted utilization of ``res`` from the first submission to the last end."""
    ts = run.timeseries
    end = end_time(run)
    if not len(ts) or end <= 0:
        return 0.0
    m = binned_mean(ts["time"], ts[f"used_{res}"], np.array([0.0, float(end)]))
    return float(m[0]) / run.totals[res]


def queue_figure(runs: Sequence[RunView]) -> Figure:
    """Number of queued jobs over time, a line per run (mean queue length in the legend)."""
    span = max(end_time(r) for r in runs)
    edges = _edges(span)
    mids = (edges[:-1] + edges[1:]) / 2
    fig, ax = _subplots(figsize=(WIDTH, 4.4))
    div, _unit = time_unit(span)
    for run in runs:
        t, q = run.timeseries["time"], run.timeseries["queue_length"]
        m = binned_mean(t, q, edges)
        overall = binned_mean(t, q, np.array([0.0, float(max(end_time(run), 1))]))[0]
        ax.plot(mids / div, m, color=run.color, lw=1.3, label=f"{run.label} (mean {overall:,.1f})")
    _time_axis(ax, span)
    ax.set_ylabel("queued jobs")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.set_title(f"Queue length over time ({bin_label(edges[1] - edges[0])} means)")
    legend_below(fig, *ax.get_legend_handles_labels(), ncol=min(len(runs), 4))
    return fig


def has_power(runs: Sequence[RunView]) -> bool:
    """Whether any run recorded IT power (it ran under a power budget)."""
    return any("power_used" in r.timeseries for r in runs)


def power_figure(runs: Sequence[RunView]) -> Figure:
    """IT power over time, a line per run that recorded it (mean power in the legend), and
    each distinct cap as a dashed step line: what a cap did to the machine's draw."""
    runs = [r for r in runs if "power_used" in r.timeseries]
    span = max(end_time(r) for r in runs)
    edges = _edges(span)
    mids = (edges[:-1] + edges[1:]) / 2
    fig, ax = _subplots(figsize=(WIDTH, 4.4))
    div, _unit = time_unit(span)
    caps_drawn: list[tuple[tuple[int, ...], tuple[float, ...]]] = []
    for run in runs:
        ts = run.timeseries
        t, w = ts["time"].to_numpy(), ts["power_used"].to_numpy(dtype=float)
        m = binned_mean(t, w, edges) / 1000
        overall = binned_mean(t, w, np.array([0.0, float(max(end_time(run), 1))]))[0] / 1000
        ax.plot(mids / div, m, color=run.color, lw=1.3,
                label=f"{run.label} (mean {overall:,.2f} kW)")
        if "power_cap" in ts:
            cap = ts["power_cap"].to_numpy(dtype=float)
            change = np.r_[True, cap[1:] != cap[:-1]]
            key = (tuple(t[change].tolist()), tuple(cap[change].tolist()))
            if key not in caps_drawn and np.isfinite(cap).any():
                caps_drawn.append(key)
                ax.step(np.r_[t[change], span] / div, np.r_[cap[change], cap[-1]] / 1000,
                        where="post", color="black", ls="--", lw=1.0,
                        label="power cap" if len(caps_drawn) == 1 else None)
    _time_axis(ax, span)
    ax.set_ylabel("IT power (kW)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.set_title(f"IT power over time ({bin_label(edges[1] - edges[0])} means; "
                 "dashed: the cap in force)")
    handles, labels = ax.get_legend_handles_labels()
    legend_below(fig, handles, labels, ncol=legend_columns(len(handles), 4))
    return fig


def has_cooling(runs: Sequence[RunView]) -> bool:
    """Whether any run has a cooling series (it was run with a cooling model)."""
    return any(r.cooling is not None and len(r.cooling) for r in runs)


def cooling_figure(runs: Sequence[RunView]) -> Figure:
    """IT power, cooling power and ambient temperature over time (bin means), a line per
    run with a cooling series; mean PUE in the legend."""
    runs = [r for r in runs if r.cooling is not None and len(r.cooling)]
    span = max(max(end_time(r), int(r.cooling["time"].max())) for r in runs)  # type: ignore[index]
    edges = _edges(span)
    mids = (edges[:-1] + edges[1:]) / 2
    fig, (a1, a2, a3) = _subplots(3, 1, figsize=(WIDTH, 7.5), sharex=True)
    div, _unit = time_unit(span)
    temps_drawn: list[FloatArray] = []
    for run in runs:
        c = run.cooling
        assert c is not None
        t = c["time"].to_numpy()
        it, cool = c["it_power_w"].to_numpy(float), c["cooling_w"].to_numpy(float)
        dt = np.diff(np.r_[t, span]).astype(float)
        pue = (it * dt + cool * dt).sum() / max((it * dt).sum(), 1e-12)
        a1.plot(mids / div, binned_mean(t, it, edges) / 1000, color=run.color, lw=1.2,
                label=f"{run.label} (mean PUE {pue:.4f})")
        a2.plot(mids / div, binned_mean(t, cool, edges) / 1000, color=run.color, lw=1.2)
        temp = binned_mean(t, c["temperature_c"].to_numpy(float), edges)
        temp[edges[:-1] >= max(end_time(run), int(t[-1]) + 1)] = np.nan  # not past the run

        def same(other: FloatArray, temp: FloatArray = temp) -> bool:
            both = np.isfinite(other) & np.isfinite(temp)
            return bool(np.allclose(other[both], temp[both], atol=1e-3))

        drawn = next((k for k, o in enumerate(temps_drawn) if same(o)), None)
        if drawn is None:
            temps_drawn.append(temp)
            a3.plot(mids / div, temp, color=run.color if len(runs) > 1 else "black", lw=1.0)
        else:  # the same weather: extend the line already drawn where this run is longer
            longer = np.isnan(temps_drawn[drawn]) & np.isfinite(temp)
            if longer.any():
                temps_drawn[drawn] = np.where(longer, temp, temps_drawn[drawn])
                a3.get_lines()[drawn].set_ydata(temps_drawn[drawn])
    a1.set_ylabel("IT power (kW)")
    a2.set_ylabel("cooling power (kW)")
    a3.set_ylabel("ambient (°C)")
    for ax in (a1, a2, a3):
        ax.grid(alpha=0.3)
    a1.set_ylim(bottom=0)
    a2.set_ylim(bottom=0)
    _time_axis(a3, span)
    a1.set_title(f"IT power, cooling power and ambient temperature "
                 f"({bin_label(edges[1] - edges[0])} means)")
    handles, labels = a1.get_legend_handles_labels()
    legend_below(fig, handles, labels, ncol=legend_columns(len(handles), 3))
    return fig


ENERGY_PARTS = (("energy_busy_kwh", "busy nodes", 1.0),
                ("energy_idle_kwh", "idle nodes", 0.55),
                ("energy_other_kwh", "off / booting / shutting down", 0.25))


def has_energy(runs: pd.DataFrame) -> bool:
    """Whether the runs recorded their energy (the platform had a node power model)."""
    return "energy_kwh" in runs and bool(runs["energy_kwh"].notna().any())


def energy_figure(runs: pd.DataFrame, order: Sequence[str], colors: dict[str, str]) -> Figure:
    """Run energy per dispatcher (kWh): a bar split into busy, idle and other node states,
    the mean over the dispatcher's runs when it has several (their count in the label)."""
    runs = runs[runs["energy_kwh"].notna()]
    names = [d for d in order if d in set(runs["dispatcher"])]
    fig, ax = _subplots(figsize=(WIDTH, 1.2 + 0.45 * len(names)))
    y = np.arange(len(names))
    by = runs.groupby("dispatcher")
    split = all(c in runs for c, _, _ in ENERGY_PARTS)
    left = np.zeros(len(names))
    legend: list[Patch] = []
    if split:
        for col, label, alpha in ENERGY_PARTS:
            vals = np.array([float(by.get_group(d)[col].mean()) for d in names])
            ax.barh(y, vals, left=left, color=[colors.get(d, "k") for d in names],
                    alpha=alpha, edgecolor="black", lw=0.4)
            left += vals
            legend.append(Patch(facecolor="grey", alpha=alpha, edgecolor="black", lw=0.4,
                                label=label))
    else:
        left = np.array([float(by.get_group(d)["energy_kwh"].mean()) for d in names])
        ax.barh(y, left, color=[colors.get(d, "k") for d in names])
    total = np.array([float(by.get_group(d)["energy_kwh"].mean()) for d in names])
    for k, d in enumerate(names):
        n = len(by.get_group(d))
        ax.text(total[k], y[k], f" {total[k]:,.2f} kWh" + (f" (mean of {n})" if n > 1 else ""),
                va="center", fontsize=8)
    ax.set_yticks(y, names)
    ax.set_ylim(len(names) - 0.5, -0.5)
    ax.set_xlim(0, max(float(total.max()) * 1.3, 1e-9) if len(total) else 1)
    ax.set_xlabel("energy of the run (kWh)")
    ax.grid(alpha=0.3, axis="x")
    ax.set_title("Energy per dispatcher (first submission to last end)")
    if split:
        legend_below(fig, legend, ncol=3)
    return fig


def cap_values(runs: pd.DataFrame) -> pd.Series:
    """Each run's power cap in W (its time-weighted mean when it varies; NaN without)."""
    if "power_cap_mean_w" not in runs:
        return pd.Series(np.nan, index=runs.index)
    return pd.to_numeric(runs["power_cap_mean_w"], errors="coerce")


def has_cap_sweep(runs: pd.DataFrame) -> bool:
    """Whether the runs vary the power cap: some dispatcher ran at two caps or more."""
    caps = cap_values(runs)
    if not caps.notna().any():
        return False
    return bool(runs.assign(cap=caps).dropna(subset=["cap"]).groupby("dispatcher")["cap"]
                .nunique().max() >= 2)


def cap_curves_figure(runs: pd.DataFrame, order: Sequence[str],
                      colors: dict[str, str]) -> Figure:
    """Mean wait (and mean weighted queue time, in EWT units, when the jobs have expected
    waits) against the power cap: a line per dispatcher, each point the mean over its
    runs at that cap."""
    data = runs.assign(cap=cap_values(runs)).dropna(subset=["cap"])
    panels = [("mean_wait", "mean wait (min)", 60.0)]
    if "mean_weighted_queue_time" in data and bool((data["mean_weighted_queue_time"] > 0).any()):
        panels.append(("mean_weighted_queue_time", "mean weighted queue time (EWT units)", 1.0))
    fig, axes = _subplots(1, len(panels), figsize=(WIDTH, 4.2), squeeze=False)
    names = [d for d in order if d in set(data["dispatcher"])]
    for ax, (col, label, div) in zip(axes[0], panels, strict=True):
        for d in names:
            part = data[data["dispatcher"] == d].groupby("cap")[col].agg(["mean", "size"])
            ax.plot(part.index.to_numpy() / 1000, part["mean"].to_numpy() / div, "o-",
                    color=colors.get(d, "k"), lw=1.3, ms=4, label=d if ax is axes[0][0]
                    else None)
        ax.set_xlabel("power cap (kW)")
        ax.set_ylabel(label)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    n = data.groupby(["dispatcher", "cap"]).size()
    runs_note = f"{int(n.min())}" if n.min() == n.max() else f"{int(n.min())}–{int(n.max())}"
    fig.suptitle(f"Waiting against the power cap (mean over {runs_note} run(s) per point)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    legend_below(fig, handles, labels, ncol=legend_columns(len(handles), 5))
    return fig


_TIME_TICKS = [
    (1, "1 s"),
    (10, "10 s"),
    (60, "1 min"),
    (600, "10 min"),
    (3600, "1 h"),
    (86400, "1 d"),
    (7 * 86400, "1 wk"),
    (30 * 86400, "30 d"),
    (365 * 86400, "1 y"),
]


def _ecdf_step(ax: Axes, values: FloatArray, color: str, label: str | None = None) -> None:
    """The empirical CDF of ``values`` as a step line starting at (1, 0)."""
    x = np.sort(values)
    y = np.arange(1, len(x) + 1) / len(x)
    ax.step(np.concatenate(([1.0], x)), np.concatenate(([0.0], y)), where="post", color=color,
            lw=1.3, label=label)


def cdf_figure(runs: Sequence[RunView]) -> Figure:
    """Empirical CDFs of wait time and bounded slowdown, a line per run (log x axes)."""
    fig, (a1, a2) = _subplots(1, 2, figsize=(WIDTH, 4.4))
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
        _ecdf_step(a1, np.maximum(w, 1.0), run.color, run.label)
        _ecdf_step(a2, b, run.color)
    a1.set_xscale("log")
    a1.set_xlim(1, wmax * 1.5)
    ticks = [t for t in _TIME_TICKS if t[0] <= wmax * 1.5]
    a1.xaxis.set_major_locator(FixedLocator([t for t, _ in ticks]))
    a1.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: dict(ticks).get(round(v), "")))
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
    legend_below(fig, *a1.get_legend_handles_labels(), ncol=legend_columns(len(runs)))
    return fig


def group_bars_figure(
    runs: Sequence[RunView],
    table: pd.DataFrame,
    kind: str,
    groups: Sequence[str],
    labels: Sequence[str],
) -> Figure:
    """Grouped bars of mean wait and mean bounded slowdown per job group and dispatcher.

    ``table`` is a breakdown table (rows: run × group); runs of one dispatcher (seeds) are
    averaged.
    """
    fig, (a1, a2) = _subplots(1, 2, figsize=(WIDTH, 4.4))
    part = (
        table[table["kind"] == kind]
        .assign(group=lambda d: d["group"].astype(str))
        .groupby(["dispatcher", "group"], as_index=False, sort=False)[
            ["mean_wait", "mean_bounded_slowdown"]
        ]
        .mean()
    )
    x = np.arange(len(groups))
    width = 0.8 / max(len(runs), 1)
    waits = part["mean_wait"].to_numpy(dtype=np.float64)
    finite = waits[np.isfinite(waits)]
    top = float(finite.max()) if len(finite) else 1.0
    div, unit = (
        (60.0, "min")
        if top < 2 * 3600
        else ((3600.0, "h") if top < 4 * 86400 else (86400.0, "days"))
    )
    for i, run in enumerate(runs):
        rows = part[part["dispatcher"] == run.label].set_index("group").reindex(list(groups))
        off = (i - (len(runs) - 1) / 2) * width
        a1.bar(
            x + off,
            rows["mean_wait"].to_numpy(dtype=np.float64) / div,
            width,
            color=run.color,
            label=run.label,
        )
        a2.bar(
            x + off,
            rows["mean_bounded_slowdown"].to_numpy(dtype=np.float64),
            width,
            color=run.color,
        )
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
    legend_below(fig, *a1.get_legend_handles_labels(), ncol=legend_columns(len(runs)))
    return fig


def group_axis(table: pd.DataFrame, kind: str) -> tuple[list[str], list[str]]:
    """Groups of ``kind`` (classes in size order, queues by name) and their axis labels.

    Labels carry the group's job count (the mean over runs, marked ``≈``, when runs of
    different workloads disagree).
    """
    part = table[table["kind"] == kind]
    if kind == "class":
        keys = [name for name, _lo, _hi in CLASS_BOUNDS]
    else:
        keys = sorted(str(g) for g in part["group"].unique())
    labels = []
    for k in keys:
        counts = part.loc[part["group"].astype(str) == k, "jobs"].to_numpy(dtype=np.float64)
        name = CLASS_LABELS.get(k, k) if kind == "class" else f"queue {k}"
        if not len(counts):
            labels.append(name)
        elif counts.min() == counts.max():
            labels.append(f"{name}\n{int(counts[0]):,} jobs")
        else:
            labels.append(f"{name}\n≈{counts.mean():,.0f} jobs")
    return keys, labels


def gantt_figure(run: RunView, span: float | None = None) -> Figure:
    """Nodes × time: each job drawn on its nodes, lanes within a node for its cores.

    Colors give the job's duration class, in three shades so that neighbouring jobs of
    one class stay distinguishable.
    """
    if run.alloc is None:
        raise ValueError("the run has no placement table")
    jobs = run.jobs
    alloc = run.alloc
    span = float(span if span is not None else end_time(run))
    div, unit = time_unit(span)
    job = alloc["job"].to_numpy()
    start = jobs["start"].to_numpy(dtype=np.float64)[job]
    end = jobs["end"].to_numpy(dtype=np.float64)[job]
    classes = job_class(jobs)[job]
    nodes = alloc["node"].to_numpy()
    row, lo, hi = _lanes(
        nodes, start, end, alloc["cores"].to_numpy(), alloc["node_cores"].to_numpy()
    )
    pad = 0.06 if run.nodes <= 32 else 0.0
    height = max(3.0, min(9.0, 1.5 + run.nodes * 0.06))
    fig, ax = _subplots(figsize=(WIDTH, height))
    shade = job[row] % 3
    for cls, color in CLASS_COLORS.items():
        base = np.array(matplotlib.colors.to_rgb(color))
        for s in range(3):
            sel = (classes[row] == cls) & (shade == s)
            if not sel.any():
                continue
            x0 = start[row][sel] / div
            x1 = end[row][sel] / div
            y0 = nodes[row][sel] + lo[sel] * (1 - pad) + pad / 2
            y1 = nodes[row][sel] + hi[sel] * (1 - pad) + pad / 2
            verts = np.stack(
                [
                    np.stack([x0, y0], 1),
                    np.stack([x1, y0], 1),
                    np.stack([x1, y1], 1),
                    np.stack([x0, y1], 1),
                ],
                axis=1,
            )
            tint = base * (1 - 0.18 * s) if s < 2 else base + (1 - base) * 0.3
            ax.add_collection(
                PolyCollection(
                    list(verts), facecolors=[tuple(tint)], edgecolors="none", rasterized=True
                )
            )
    ax.set_xlim(0, max(span, 1) / div)
    ax.set_ylim(run.nodes, 0)
    ax.set_xlabel(f"time since the first submission ({unit})")
    ax.set_ylabel(f"node (0–{run.nodes - 1})")
    n_jobs = int((~jobs["rejected"]).sum())
    ax.set_title(f"{run.label}: jobs on nodes over time ({n_jobs:,} jobs; white = idle)")
    legend_below(fig, [Patch(color=c, label=CLASS_LABELS[k]) for k, c in CLASS_COLORS.items()],
                 ncol=3)
    return fig


def _lanes(
    nodes: npt.NDArray[np.int64],
    start: FloatArray,
    end: FloatArray,
    cores: npt.NDArray[np.int64],
    cap: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.int64], FloatArray, FloatArray]:
    """Bands inside node rows: ``(alloc row, lo, hi)`` per band, as fractions of the row.

    Each node's cores are lanes; in start order a job takes the lowest lanes free at its
    start (the engine guarantees enough are free). Contiguous lanes make one band, so a
    job whose lanes are split gets several bands.
    """
    whole = cores >= cap
    shared_nodes = np.unique(nodes[~whole])
    simple = ~np.isin(nodes, shared_nodes)  # nodes only ever used whole: one full band
    rows: list[int] = np.flatnonzero(simple).tolist()
    los: list[float] = [0.0] * len(rows)
    his: list[float] = [1.0] * len(rows)
    rest = np.flatnonzero(~simple)
    order = rest[np.lexsort((start[rest], nodes[rest]))]
    free_at: dict[int, FloatArray] = {}
    for i in order.tolist():
        n = int(nodes[i])
        c = max(int(cap[i]), 1)
        lanes = free_at.setdefault(n, np.zeros(c))
        need = max(1, min(int(cores[i]), c))
        free = np.flatnonzero(lanes <= start[i])
        if len(free) < need:  # cannot happen for a valid schedule; draw over the top
            free = np.arange(need)
        take = free[:need]
        lanes[take] = end[i]
        cuts = np.flatnonzero(np.diff(take) != 1) + 1
        for block in np.split(take, cuts):
            rows.append(i)
            los.append(block[0] / c)
            his.append((block[-1] + 1) / c)
    return (
        np.asarray(rows, dtype=np.int64),
        np.asarray(los, dtype=np.float64),
        np.asarray(his, dtype=np.float64),
    )


def means_figure(
    means: pd.DataFrame, metrics: Sequence[tuple[str, str, float]], colors: dict[str, str]
) -> Figure:
    """Mean with confidence interval per dispatcher, a panel per metric.

    ``metrics`` holds ``(key, axis label, divisor)``; ``means`` is a
    :func:`dispatchlab.stats.ci.summarize_runs` table.
    """
    fig, axes = _subplots(1, len(metrics), figsize=(WIDTH, 0.9 + 0.42 * _n(means)), squeeze=False)
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
            ax.errorbar(
                mean[k],
                y[k],
                xerr=err[:, k : k + 1],
                fmt="o",
                color=colors.get(name, "k"),
                capsize=3,
            )
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
