"""Metrics of a run against a desired utilization profile (thesis §5.5, SPEC §2).

- **over-utilization**: the volume of use above the desired profile,
  ``∫ max(0, f(t) − g(t)) dt`` (resource-seconds, e.g. core-seconds), where ``f`` is the
  used capacity and ``g(t) = share(t) · total capacity``;
- **dissimilarity**: ``(R_gg(0) − R_gf(0)) / R_gg(0)`` with ``f`` scaled first by
  ``ψ = min_t g(t)/f(t)`` (over times where ``f > 0``), ``R_gg(0) = ∫ g²`` and
  ``R_gf(0) = ∫ g · ψf``: 0 when ``f`` has the shape of ``g``, up to 1. As the thesis,
  from the first submission to the last latest start (``dissimilarity``: every run of a
  workload on the same horizon); also to the later of that and the last end
  (``dissimilarity_to_last_end``: work pushed past every deadline counts too);
- **late jobs / tardiness vs lst**: a job is late when it first starts after its latest
  start ``lst`` (its own, or arrival plus its queue's expected wait); tardiness is
  ``Σ max(0, start − lst)`` (s).

Every integral is exact over the step functions (no sampling).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import FloatArray, IntArray


def _steps_on(times: IntArray, values: FloatArray, grid: IntArray, default: float
              ) -> FloatArray:
    """Value of the step function ``(times, values)`` in force at each of ``grid``."""
    idx = np.searchsorted(times, grid, side="right") - 1
    return np.where(idx >= 0, values[np.maximum(idx, 0)], default)


def aligned(f_times: IntArray, f_values: FloatArray, g_times: IntArray, g_values: FloatArray,
            start: int, end: int, g_default: float = 1.0
            ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Both step functions on their merged breakpoints within ``[start, end)``: the
    values of ``f`` and ``g`` on each piece and the pieces' lengths."""
    inner = np.concatenate([f_times, g_times])
    inner = inner[(inner > start) & (inner < end)]
    cuts = np.unique(np.concatenate([[start], inner, [end]])).astype(np.int64)
    left = cuts[:-1]
    f = _steps_on(f_times, f_values.astype(np.float64), left, 0.0)
    g = _steps_on(g_times, g_values.astype(np.float64), left, g_default)
    return f, g, np.diff(cuts).astype(np.float64)


def over_utilization(f: FloatArray, g: FloatArray, dt: FloatArray) -> float:
    """``∫ max(0, f − g) dt``."""
    return float((np.maximum(f - g, 0.0) * dt).sum())


def dissimilarity(f: FloatArray, g: FloatArray, dt: FloatArray | None = None) -> float:
    """``(R_gg(0) − R_gf(0)) / R_gg(0)`` after scaling ``f`` by ``ψ = min g/f`` (f > 0)."""
    f = np.asarray(f, dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)
    dt = np.ones_like(f) if dt is None else dt
    rgg = float((g * g * dt).sum())
    if rgg <= 0:
        raise ValueError("the desired profile is 0 everywhere: dissimilarity is undefined")
    pos = f > 0
    if not pos.any():
        return 1.0
    psi = float((g[pos] / f[pos]).min())
    rgf = float((g * psi * f * dt).sum())
    return (rgg - rgf) / rgg


def lateness(start: IntArray, lst: IntArray, ran: npt.NDArray[np.bool_]) -> tuple[int, float]:
    """Jobs first started after their latest start, and total tardiness (s)."""
    late = ran & (start > lst)
    return int(late.sum()), float(np.maximum(start - lst, 0)[ran].sum())


def profile_summary(used_times: IntArray, used: FloatArray, share_times: IntArray,
                    shares: FloatArray, capacity: float, first: int, last_end: int,
                    start: IntArray, lst: IntArray, ran: npt.NDArray[np.bool_]
                    ) -> dict[str, Any]:
    """The profile block of a run's summary (one resource)."""
    deadline = max(int(lst.max()) if len(lst) else first, first + 1)
    horizon = max(last_end, deadline)
    f, g, dt = aligned(used_times, used, share_times, shares * capacity, first, horizon)
    fd, gd, dtd = aligned(used_times, used, share_times, shares * capacity, first, deadline)
    late, tard = lateness(start, lst, ran)
    return {"over_utilization": over_utilization(f, g, dt),
            "dissimilarity": dissimilarity(fd, gd, dtd),
            "dissimilarity_to_last_end": dissimilarity(f, g, dt),
            "late_jobs_lst": late,
            "tardiness_lst_s": tard,
            "deadline_horizon_s": deadline - first,
            "horizon_s": horizon - first}
