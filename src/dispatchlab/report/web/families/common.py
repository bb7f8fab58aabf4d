"""Shared pieces of the family sections: means per dispatcher and plain sortable tables."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from dispatchlab.report.analysis import Comparison
from dispatchlab.report.web.figure import WebFigure, layout
from dispatchlab.report.web.page import Section
from dispatchlab.report.web.tables import Cell, Column, swatch, table_html

Family = tuple[Section, list[WebFigure]]
#: A table's columns: key → (short header, full name, formatter).
Columns = dict[str, tuple[str, str, Callable[[float], str]]]


def runs_have(cmp: Comparison, *keys: str) -> bool:
    """Whether the runs have any of ``keys`` (a family's section is shown only then)."""
    return any(k in cmp.runs for k in keys)


def per_dispatcher(cmp: Comparison, cols: Sequence[str]) -> pd.DataFrame:
    """Mean of ``cols`` over each dispatcher's runs, rows in the comparison's order."""
    have = [c for c in cols if c in cmp.runs]
    if not have or not len(cmp.runs):
        return pd.DataFrame()
    data = cmp.runs[["dispatcher", *have]].copy()
    for c in have:
        data[c] = pd.to_numeric(data[c], errors="coerce")
    table = data.groupby("dispatcher", sort=False)[have].mean()
    return table.reindex([d for d in cmp.order if d in table.index])


def means_table(cmp: Comparison, columns: Columns, colors: dict[str, str], caption: str, *,
                divide: Mapping[str, float] | None = None,
                extra: Mapping[str, pd.Series] | None = None) -> tuple[pd.DataFrame, str]:
    """The means of ``columns`` over each dispatcher's runs (:func:`per_dispatcher`), each
    column of ``divide`` divided by its factor (a change of unit) and the ``extra`` columns
    added; and that frame as a sortable table (:func:`plain_table`)."""
    table = per_dispatcher(cmp, list(columns))
    for c, factor in (divide or {}).items():
        if c in table:
            table[c] = table[c] / factor
    for c, values in (extra or {}).items():
        table[c] = values
    return table, plain_table(table, columns, colors, caption)


def plain_table(df: pd.DataFrame, columns: Columns, colors: dict[str, str],
                caption: str = "") -> str:
    """A sortable table of ``df`` (index: dispatchers); ``columns``: key → (short header,
    full name, formatter)."""
    keys = [k for k in columns if k in df.columns]
    cols = [Column("dispatcher", "dispatcher", numeric=False),
            *(Column(columns[k][0], columns[k][1]) for k in keys)]
    rows = []
    for d, row in df.iterrows():
        cells = [Cell(swatch(str(d), colors), str(d), raw_html=True)]
        for k in keys:
            v = float(row[k]) if pd.notna(row[k]) else float("nan")
            cells.append(Cell(columns[k][2](v) if v == v else "–", v))
        rows.append(cells)
    return table_html(cols, rows, caption=caption)


def fmt(digits: int, unit: str = "") -> Callable[[float], str]:
    return lambda v: f"{v:,.{digits}f}{unit}"


def hbar_layout(names: Sequence[str], xtitle: str, height: int | None = None) -> dict[str, Any]:
    lay = layout(height=height or 90 + 34 * len(names), xtitle=xtitle, barmode="stack")
    lay["yaxis"].update({"autorange": "reversed", "automargin": True, "rangemode": "normal"})
    return lay
