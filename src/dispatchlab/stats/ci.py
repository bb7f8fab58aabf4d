"""Means with Student-t confidence intervals, per dispatcher and metric."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps


@dataclass(frozen=True)
class MeanCI:
    """Mean of ``n`` values with a two-sided ``confidence`` interval (NaN when n < 2)."""

    mean: float
    low: float
    high: float
    std: float
    n: int
    confidence: float

    @property
    def half_width(self) -> float:
        """Half the interval's width (NaN when undefined)."""
        return (self.high - self.low) / 2.0


def mean_ci(values: Iterable[float], confidence: float = 0.95) -> MeanCI:
    """Mean and Student-t interval ``mean ± t(1-(1-c)/2, n-1) · s / sqrt(n)``; NaNs dropped."""
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence must be in (0, 1)")
    x = np.asarray(list(values), dtype=np.float64)
    x = x[~np.isnan(x)]
    n = len(x)
    if n == 0:
        return MeanCI(math.nan, math.nan, math.nan, math.nan, 0, confidence)
    mean = float(x.mean())
    if n == 1:
        return MeanCI(mean, math.nan, math.nan, math.nan, 1, confidence)
    std = float(x.std(ddof=1))
    half = float(sps.t.ppf(0.5 + confidence / 2.0, n - 1)) * std / math.sqrt(n)
    return MeanCI(mean, mean - half, mean + half, std, n, confidence)


def summarize_runs(
    runs: pd.DataFrame,
    metrics: Sequence[str],
    *,
    by: str | Sequence[str] = "dispatcher",
    confidence: float = 0.95,
) -> pd.DataFrame:
    """One row per group and metric: n, mean, std and the interval bounds (tidy form)."""
    keys = [by] if isinstance(by, str) else list(by)
    rows: list[dict[str, object]] = []
    for group, part in runs.groupby(keys, sort=False, dropna=False):
        labels = group if isinstance(group, tuple) else (group,)
        for metric in metrics:
            if metric not in part:
                continue
            ci = mean_ci(part[metric].astype(float), confidence)
            rows.append(
                {
                    **dict(zip(keys, labels, strict=True)),
                    "metric": metric,
                    "n": ci.n,
                    "mean": ci.mean,
                    "std": ci.std,
                    "ci_low": ci.low,
                    "ci_high": ci.high,
                    "confidence": confidence,
                }
            )
    return pd.DataFrame(rows)
