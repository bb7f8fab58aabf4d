"""Small numpy helpers for hot paths on small arrays, where numpy's general functions
(``isin``, ``percentile``, ``r_``) cost more in overhead than in work."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

#: The array types the package's signatures use (one definition for every module).
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def one_of(values: np.ndarray, codes: Iterable[int]) -> BoolArray:
    """``np.isin(values, codes)``, without its overhead for a handful of codes."""
    codes = list(codes)
    if len(codes) > 8:
        return np.isin(values, codes)
    out = np.zeros(values.shape, dtype=bool)
    for c in codes:
        out |= values == c
    return out


def group_starts(keys: np.ndarray) -> IntArray:
    """Index of the first element of each run of equal values in ``keys``."""
    out = np.empty(1 + int(np.count_nonzero(keys[1:] != keys[:-1])), np.int64)
    out[0] = 0
    out[1:] = np.flatnonzero(keys[1:] != keys[:-1]) + 1
    return out


def with_zero(values: np.ndarray) -> IntArray:
    """``np.r_[0, values]`` as int64."""
    out = np.empty(len(values) + 1, np.int64)
    out[0] = 0
    out[1:] = values
    return out


def quantile(sorted_values: np.ndarray, q: float) -> float:
    """The ``q``-quantile (0–1) of sorted values, exactly as ``np.percentile(…, 100q)``
    computes it (linear interpolation, numpy's lerp)."""
    n = len(sorted_values)
    pos = q * (n - 1)
    lo = int(np.floor(pos))
    hi = min(lo + 1, n - 1)
    a, b = float(sorted_values[lo]), float(sorted_values[hi])
    t = pos - lo
    diff = b - a
    return b - diff * (1 - t) if t >= 0.5 else a + diff * t
