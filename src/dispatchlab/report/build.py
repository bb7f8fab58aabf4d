"""Write a comparison report: ``index.html``, the interactive page (Plotly, works offline),
and the figures for papers as PNG and SVG with ``static.html`` embedding them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from dispatchlab.atomic_output import atomic_output, check_not_file, write_failure
from dispatchlab.report import figures as F
from dispatchlab.report.analysis import Comparison
from dispatchlab.report.html import FigureFile, render
from dispatchlab.report.web.report import interactive_html, write_interactive
from dispatchlab.stats.metrics import METRICS

#: Gantt charts are drawn for runs with at most this many jobs.
GANTT_MAX_JOBS = 5000
PNG_DPI = 130


@dataclass
class ReportFiles:
    """What :func:`write_report` produced."""

    html: Path
    figures: list[FigureFile]
    notes: list[str]
    static_html: Path | None = None


def _views(cmp: Comparison, colors: dict[str, str], with_alloc: bool) -> list[F.RunView]:
    views = []
    for name, rec in cmp.main.items():
        plat = rec.doc.get("simulation", {}).get("platform", {})
        alloc_path = rec.path / "alloc.parquet"
        cooling_path = rec.path / "cooling.parquet"
        views.append(
            F.RunView(
                label=name,
                color=colors[name],
                jobs=rec.jobs(),
                timeseries=rec.timeseries(),
                totals={k: int(v) for k, v in plat.get("total", {}).items()},
                nodes=int(plat.get("nodes", 1)),
                alloc=rec.alloc() if with_alloc and alloc_path.is_file() else None,
                cooling=pd.read_parquet(cooling_path) if cooling_path.is_file() else None,
            )
        )
    return views


def _save(fig: Figure, out: Path, name: str, title: str, caption: str) -> FigureFile:
    png = out / f"{name}.png"
    svg = out / f"{name}.svg"
    with atomic_output(png) as tmp:
        fig.savefig(tmp, dpi=PNG_DPI)
    with atomic_output(svg) as tmp:
        fig.savefig(tmp)
    return FigureFile(name, title, caption, png, svg)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "run"


def write_report(
    cmp: Comparison, out_dir: str | Path, *, gantt_max_jobs: int = GANTT_MAX_JOBS
) -> ReportFiles:
    """Draw every figure into ``out_dir`` and write ``out_dir/index.html``."""
    out = Path(out_dir)
    check_not_file(out, "--out")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_failure(out, exc) from None
    colors = F.palette(cmp.order)
    n_jobs = max((int(r.summary.get("jobs", 0)) for r in cmp.main.values()), default=0)
    gantt = 0 < n_jobs <= gantt_max_jobs
    views = _views(cmp, colors, with_alloc=True)
    notes: list[str] = []
    figs: list[FigureFile] = []

    def add(fig: Figure, name: str, title: str, caption: str) -> None:
        figs.append(_save(fig, out, name, title, caption))

    if views:
        add(F.utilization_figure(views), "utilization", "Utilization over time",
            "Share of each resource held by running jobs, averaged per bin; "
            "one line per dispatcher.")
        add(F.queue_figure(views), "queue_length", "Queue length over time",
            "Jobs waiting in the queue, averaged per bin.")
        if F.has_power(views):
            add(F.power_figure(views), "power", "IT power over time",
                "Power drawn by the machine (jobs and, when counted, idle and "
                "transitioning nodes), averaged per bin; dashed: the power cap.")
        if F.has_cooling(views):
            add(F.cooling_figure(views), "cooling",
                "IT power, cooling power and temperature over time",
                "From each run's profit accounting (its cooling model and ambient "
                "temperature): cooling power = IT power × (PUE − 1), averaged per bin; "
                "mean PUE over the run in the legend.")
        if F.has_energy(cmp.runs):
            add(F.energy_figure(cmp.runs, cmp.order, colors), "energy", "Energy per dispatcher",
                "Energy of each run from its first submission to its last end (kWh), "
                "split by node state; the mean when a dispatcher has several runs.")
        if F.has_cap_sweep(cmp.runs):
            add(F.cap_curves_figure(cmp.runs, cmp.order, colors), "wait_vs_cap",
                "Waiting against the power cap",
                "Mean wait (and mean weighted queue time in EWT units, each job's wait "
                "÷ its queue's expected wait) per dispatcher at each power cap the "
                "runs had (a varying cap: its time-weighted mean).")
        add(F.cdf_figure(views), "cdf_wait_bsld",
            "Distributions of wait time and bounded slowdown",
            "Empirical CDFs over all jobs that ran: the higher and further "
            "left a curve, the better.")
        keys, labels = F.group_axis(cmp.breakdown, "class")
        add(F.group_bars_figure(views, cmp.breakdown, "class", keys, labels), "classes",
            "Per duration class",
            "Mean wait and mean bounded slowdown of short, medium and long "
            "jobs (classes by actual run time).")
        if len(cmp.queues):
            qs, qlabels = F.group_axis(cmp.breakdown, "queue")
            add(F.group_bars_figure(views, cmp.breakdown, "queue", qs, qlabels), "queues",
                "Per queue",
                "Mean wait and mean bounded slowdown per submission queue.")
    if gantt:
        span = max(F.end_time(v) for v in views)
        for v in views:
            if v.alloc is None:
                continue
            add(F.gantt_figure(v, span), f"gantt_{_slug(v.label)}", f"Gantt chart: {v.label}",
                "Each job drawn on the nodes it ran on, colored by duration "
                "class; within a node, the band height is the share of its "
                "cores the job used.")
    elif n_jobs:
        notes.append(
            f"Static Gantt charts are drawn for runs of up to {gantt_max_jobs:,} jobs; "
            f"these have {n_jobs:,} (the interactive ones draw a window of them)."
        )
    if cmp.stats is not None and len(cmp.stats.means):
        metrics = [m for m in dict.fromkeys(cmp.stats.means["metric"])]
        spec = []
        for m in metrics:
            info = METRICS[m]
            if info.unit == "s":
                top = float(cmp.stats.means.loc[cmp.stats.means["metric"] == m, "mean"].max())
                div, unit = (
                    (60.0, "min")
                    if top < 2 * 3600
                    else (3600.0, "h")
                    if top < 4 * 86400
                    else (86400.0, "days")
                )
                spec.append((m, f"{info.label} ({unit})", div))
            elif info.unit == "ratio":
                label = (
                    info.label[:-1] + ", %)" if info.label.endswith(")") else f"{info.label} (%)"
                )
                spec.append((m, label, 0.01))
            else:
                spec.append((m, info.label, 1.0))
        add(F.means_figure(cmp.stats.means, spec, colors), "means_ci",
            "Means with confidence intervals",
            f"Over {cmp.sets_label}; bars show the "
            f"{cmp.stats.confidence:.0%} Student-t interval.")
    static = out / "static.html"
    with atomic_output(static) as tmp:
        tmp.write_text(render(cmp, figs, colors, notes), encoding="utf-8")
    page = write_interactive(out / "index.html", interactive_html(
        cmp, views, colors, figs, notes, gantt_max_jobs=gantt_max_jobs))
    return ReportFiles(page, figs, notes, static)
