"""Human-readable numbers for tables: durations in s/min/h/d, ratios in %; pipe tables."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.stats.metrics import METRICS

if TYPE_CHECKING:  # (simulate prints with these helpers: no pandas import for that)
    import pandas as pd


def fmt_duration(seconds: float) -> str:
    """``42 s``, ``12.5 min`` (below 1.5 h), ``3.2 h`` (below 2 days), ``4.1 d``."""
    s = float(seconds)
    if math.isnan(s):
        return "–"
    a = abs(s)
    if a < 120:
        return f"{s:.0f} s"
    if a < 5400:
        return f"{s / 60:.1f} min"
    if a < 172800:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.1f} d"


def fmt_count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1: "1 set", "3 sets"."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def fmt_ms(ms: float) -> str:
    """A short time given in ms, in its natural unit: ``446 µs``, ``12.3 ms``, ``1.52 s``."""
    v = float(ms)
    if math.isnan(v):
        return "–"
    a = abs(v)
    if a == 0:
        return "0 s"
    if a < 1:
        return f"{v * 1e3:#.3g}".rstrip(".") + " µs"
    if a < 1000:
        return f"{v:#.3g}".rstrip(".") + " ms"
    return f"{v / 1e3:#.3g}".rstrip(".") + " s"


def fmt_number(value: float) -> str:
    """Three significant digits, thousands separated."""
    v = float(value)
    if math.isnan(v):
        return "–"
    if v == int(v) and abs(v) < 1e9:
        return f"{int(v):,}"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:#.3g}" if abs(v) >= 0.001 else f"{v:.2e}"


def fmt_metric(key: str, value: float) -> str:
    """``value`` of summary metric ``key`` in its natural unit."""
    info = METRICS.get(key)
    unit = info.unit if info else ""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if unit == "s":
        return fmt_duration(value)
    if unit == "ratio":
        return f"{100 * float(value):.1f} %"
    if unit == "ms":
        return fmt_ms(value)
    if unit == "%":
        return f"{float(value):.2g} %"
    return fmt_number(value)


def fmt_ci(key: str, mean: float, low: float, high: float) -> str:
    """``mean ± half-width`` in the metric's unit (just the mean when undefined)."""
    if math.isnan(low) or math.isnan(high):
        return fmt_metric(key, mean)
    return f"{fmt_metric(key, mean)} ± {fmt_metric(key, (high - low) / 2)}"


def markdown_table(df: pd.DataFrame, digits: int = 2) -> str:
    """A Markdown pipe table of ``df`` (index first), without extra dependencies."""
    def fmt(v: Any) -> str:
        if isinstance(v, (float, np.floating)):
            return "" if np.isnan(v) else f"{v:,.{digits}f}"
        return str(v)
    head = "| " + " | ".join([str(df.index.name or ""), *map(str, df.columns)]) + " |"
    sep = "|" + "---|" * (len(df.columns) + 1)
    body = ["| " + " | ".join([str(i), *(fmt(v) for v in row)]) + " |"
            for i, row in zip(df.index, df.itertuples(index=False), strict=True)]
    return "\n".join([head, sep, *body])
