"""The interactive report of a comparison: which sections and figures, from the data the
runs have."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from dispatchlab.report.analysis import Comparison
from dispatchlab.report.figures import RunView
from dispatchlab.report.format import fmt_metric
from dispatchlab.report.html import FigureFile, config_html, stats_html
from dispatchlab.report.tables import SUMMARY_METRICS, group_label, groups_of
from dispatchlab.report.web.distributions import cdf_figure, group_figure
from dispatchlab.report.web.families import family_sections
from dispatchlab.report.web.figure import WebFigure
from dispatchlab.report.web.gantt import MAX_BAR_JOBS, gantt_figure
from dispatchlab.report.web.page import Section, render_page, tabs_html
from dispatchlab.report.web.tables import Cell, Column, metrics_table, swatch, table_html
from dispatchlab.report.web.timeseries import MAX_POINTS, time_axis, time_figures


def _e(text: object) -> str:
    return html.escape(str(text))


def slug(text: str) -> str:
    """``text`` as a fragment of an element id."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-") or "run"


def groups_table(table: pd.DataFrame, kind: str, colors: dict[str, str]) -> str:
    """Per-class or per-queue table: a column block per group under a group header."""
    if not len(table):
        return ""
    groups = groups_of(table)
    columns = [Column("dispatcher", "dispatcher", numeric=False)]
    spans: list[tuple[str, int]] = [("", 1)]
    for g in groups:
        label = group_label(kind, str(g))
        n = float(table[(g, "jobs")].iloc[0])
        spans.append((label + (f" · {int(n):,} jobs" if n == n and n == int(n) else ""), 3))
        columns += [Column("mean wait", f"{label}: mean wait"),
                    Column("p90 wait", f"{label}: 90th percentile of wait"),
                    Column("mean bsld", f"{label}: mean bounded slowdown (τ = 10 s)")]
    rows = []
    for d, row in table.iterrows():
        cells = [Cell(swatch(str(d), colors), str(d), raw_html=True)]
        for g in groups:
            for m in ("mean_wait", "p90_wait", "mean_bounded_slowdown"):
                v = float(row[(g, m)])
                cells.append(Cell(fmt_metric(m, v), v))
        rows.append(cells)
    return table_html(columns, rows, groups=spans)


def setting_note(cmp: Comparison) -> str:
    """Which runs the time series and Gantt charts show, when the runs cover several
    workloads, platforms, pricing scenarios, parameters or seeds (the tables: means)."""
    runs = cmp.runs
    cols = [c for c in runs.columns if c in ("workload", "platform", "pricing", "seed")
            or c.startswith("param_")]
    if not len(runs) or not cmp.main or len(runs[cols].astype(str).drop_duplicates()) <= 1:
        return ""
    lab = next(iter(cmp.main.values())).labels
    parts = [f"workload {lab.get('workload')}", f"platform {lab.get('platform')}"]
    if lab.get("pricing"):
        parts.append(f"pricing {lab.get('pricing')}")
    if lab.get("params"):
        parts.append(", ".join(f"{k} = {v}" for k, v in lab["params"].items()))
    parts.append(f"seed {lab.get('seed')}")
    return ("The runs cover several settings: tables and the family sections give means over "
            "all of them; time series, Gantt charts and distributions show one run per "
            "dispatcher (" + "; ".join(parts) + ").")


def static_links(figs: Sequence[FigureFile]) -> str:
    """Links to the PNG/SVG exports (for papers) and the static page embedding them."""
    items = []
    for f in figs:
        link = f'<a href="{_e(f.png.name)}">PNG</a>'
        if f.svg is not None:
            link += f' <a href="{_e(f.svg.name)}">SVG</a>'
        items.append(f"<li>{_e(f.title)}: {link}</li>")
    return ("<p>The same comparison drawn with matplotlib for papers, as files beside this "
            'page (and all of them on one page: <a href="static.html">static.html</a>):</p>'
            f'<ul class="static">{"".join(items)}</ul>')


def interactive_html(cmp: Comparison, views: Sequence[RunView], colors: dict[str, str],
                     static: Sequence[FigureFile], notes: Sequence[str] = (), *,
                     gantt_max_jobs: int = MAX_BAR_JOBS) -> str:
    """The whole interactive page."""
    ctx = cmp.context
    intro = [f"<b>{label}:</b> {_e(ctx[key])}" for key, label in (
        ("workload", "Workload"), ("platform", "Platform"), ("created", "Created"),
        ("command", "Command")) if key in ctx]
    header = (f"<h1>{_e(cmp.title)}</h1><p>{'<br>'.join(intro)}</p>"
              + "".join(f"<p class='muted'>{_e(n)}</p>" for n in notes)
              + "<p class='muted' id='render-time'></p>")
    figures: list[WebFigure] = []
    sections: list[Section] = []
    shown = setting_note(cmp)
    if shown:
        header += f"<p class='note'>{_e(shown)}</p>"
    summary = Section("summary", "Summary").add(
        metrics_table(cmp.summary, list(SUMMARY_METRICS), colors,
                      caption="Hover a header for its full name; click it to sort. Best "
                              "value of each column in bold."))
    if len(cmp.summary) and int(cmp.summary["runs"].max()) > 1:
        summary.add(f'<p class="muted">Means over {int(cmp.summary["runs"].max())} runs '
                    "(seeds, pricing scenarios) per dispatcher.</p>")
    summary.add("<h3>By job duration class</h3><p class='muted'>Classes by the time a job "
                "actually runs: short &lt; 1 h, medium 1–5 h, long &gt; 5 h; bsld = bounded "
                "slowdown (τ = 10 s).</p>", groups_table(cmp.classes, "class", colors))
    if len(cmp.queues):
        summary.add("<h3>By queue</h3>", groups_table(cmp.queues, "queue", colors))
    sections.append(summary)
    if views:
        axis = time_axis(views)
        over = time_figures(views, axis)
        figures += over
        sections.append(Section("time", "Over time").add(
            f"<p class='muted'>Zoom any figure (drag; double-click resets): every time axis "
            f"on the page follows. Lines are {axis.means} (at most {MAX_POINTS:,} points "
            "per line).</p>", *over))
        with_alloc = [v for v in views if v.alloc is not None] if gantt_max_jobs > 0 else []
        gantts = [gantt_figure(v, axis, gantt_max_jobs) for v in with_alloc]
        for g, v in zip(gantts, with_alloc, strict=True):
            g.name = f"web-gantt-{slug(v.label)}"
        if gantts:
            figures += gantts
            sections.append(Section("gantt", "Gantt charts").add(
                "<p class='muted'>One dispatcher at a time: hover a job for its id, user, "
                "queue, request, wait and outcome. Colors: duration class of completed jobs; "
                "other outcomes have their own color.</p>",
                tabs_html("gantt", gantts, [v.label for v in with_alloc])))
        dist = [cdf_figure(views)]
        if len(cmp.breakdown):
            dist.append(group_figure(views, cmp.breakdown, "class"))
            if len(cmp.queues):
                dist.append(group_figure(views, cmp.breakdown, "queue"))
        figures += dist
        sections.append(Section("distributions", "Distributions").add(*dist))
    for sec, figs in family_sections(cmp, views, colors):
        figures += figs
        sections.append(sec)
    sections.append(Section("statistics", "Statistics over repeated sets").add(stats_html(cmp)))
    if static:
        sections.append(Section("static", "Figures for papers").add(static_links(static)))
    sections.append(Section("config", "Configuration and versions").add(config_html(cmp)))
    return render_page(cmp.title, header, sections, figures)


def write_interactive(path: Path, page: str) -> Path:
    """Write the page and plotly.js beside it."""
    from dispatchlab.atomic_output import atomic_output
    from dispatchlab.report.web.assets import write_plotly

    write_plotly(path.parent)  # first: a page is never there without its script
    with atomic_output(path) as tmp:
        tmp.write_text(page, encoding="utf-8")
    return path
