"""Sortable HTML tables: short headers with the full name in a tooltip, numbers that
never wrap, the best value of a column in bold; a click on a header sorts by it."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from dispatchlab.report.format import fmt_metric
from dispatchlab.report.tables import best_rows
from dispatchlab.stats.metrics import METRICS

#: Short column headers of summary metrics (the full label is the header's tooltip).
SHORT = {
    "mean_wait": "mean wait", "median_wait": "median wait", "p90_wait": "p90 wait",
    "max_wait": "max wait", "mean_slowdown": "mean sld", "mean_bounded_slowdown": "mean bsld",
    "max_bounded_slowdown": "max bsld", "utilization": "util.", "makespan": "makespan",
    "mean_queue_length": "mean queue", "max_queue_length": "max queue", "killed": "killed",
    "dispatch_time_mean_ms": "decision", "dispatch_time_max_ms": "max decision",
    "dispatch_overhead_pct": "overhead", "goodput": "goodput", "max_stretch": "max stretch",
    "mean_stretch": "mean stretch", "aborted_volume": "aborted core-s",
    "aborted_count": "aborted", "utilization_alive": "util. alive", "profit": "profit",
    "profit_sub": "profit (sub.)", "mean_pue": "PUE", "cooling_kwh": "cooling kWh",
    "late_jobs": "late", "mean_weighted_queue_time": "mean WQT",
}


@dataclass(frozen=True)
class Column:
    """A column: its short header, the full name shown on hover, how it sorts."""

    short: str
    full: str
    numeric: bool = True


@dataclass(frozen=True)
class Cell:
    """A cell's text, the value it sorts by, and whether it holds the column's best."""

    text: str
    value: float | str | None = None
    best: bool = False
    raw_html: bool = False


def _e(text: Any) -> str:
    return html.escape(str(text))


def _sort_value(v: float | str | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return _e(v)


def table_html(columns: Sequence[Column], rows: Sequence[Sequence[Cell]], *,
               groups: Sequence[tuple[str, int]] = (), caption: str = "") -> str:
    """A sortable table; ``groups`` (label, span) adds a header row above the columns."""
    head = []
    if groups:
        head.append("<tr>" + "".join(
            f'<th colspan="{n}" class="group">{_e(label)}</th>' for label, n in groups) + "</tr>")
    head.append("<tr>" + "".join(
        f'<th data-col="{i}" data-num="{int(c.numeric)}" title="{_e(c.full)} — click to sort">'
        f"{_e(c.short)}</th>" for i, c in enumerate(columns)) + "</tr>")
    body = []
    for row in rows:
        tds = []
        for cell in row:
            cls = ' class="best"' if cell.best else ""
            text = cell.text if cell.raw_html else _e(cell.text)
            tds.append(f'<td{cls} data-v="{_sort_value(cell.value)}">{text}</td>')
        body.append("<tr>" + "".join(tds) + "</tr>")
    cap = f"<caption>{_e(caption)}</caption>" if caption else ""
    return (f'<div class="tablewrap"><table class="sortable">{cap}<thead>{"".join(head)}'
            f'</thead><tbody>{"".join(body)}</tbody></table></div>')


def metric_column(key: str) -> Column:
    """The column of summary metric ``key``."""
    info = METRICS.get(key)
    full = info.label if info else key.replace("_", " ")
    if info is not None:
        full += " (lower is better)" if info.lower_is_better else " (higher is better)"
    return Column(SHORT.get(key, info.label if info else key.replace("_", " ")), full)


def swatch(name: str, colors: dict[str, str]) -> str:
    """A dispatcher's name behind a square of its color."""
    c = colors.get(name, "#888")
    return f'<span class="swatch" style="background:{c}"></span>{_e(name)}'


def metrics_table(df: pd.DataFrame, keys: Sequence[str], colors: dict[str, str], *,
                  first: str = "dispatcher", caption: str = "") -> str:
    """Rows of ``df`` (index: dispatchers) × metric columns ``keys``, best in bold."""
    keys = [k for k in keys if k in df.columns]
    best = {k: best_rows(df, k) for k in keys}
    columns = [Column(first, first, numeric=False), *(metric_column(k) for k in keys)]
    rows = []
    for d, row in df.iterrows():
        cells = [Cell(swatch(str(d), colors), str(d), raw_html=True)]
        for k in keys:
            v = row[k]
            num = float(v) if v is not None and pd.notna(v) else float("nan")
            cells.append(Cell(fmt_metric(k, num), num, str(d) in best[k]))
        rows.append(cells)
    return table_html(columns, rows, caption=caption)
