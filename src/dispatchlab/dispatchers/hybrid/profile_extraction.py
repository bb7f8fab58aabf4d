"""Profile extraction, thesis Alg. 8 (§7.4): a day's utilization → next day's desired
profile.

With ``u`` the utilization (fraction of cores busy) hour by hour:

1. if the previous day's average utilization exceeds ``threshold`` (84 %), the desired
   profile of the whole next day is 100 %;
2. otherwise, for each hour ``h`` of the next day, ``a`` = the average of the 24 hours
   before ``h``; the hour's share is 100 % when ``a`` > ``threshold``, else
   ``a + (1 − a) · offset_perc``.

"The 24 hours before ``h``" slides into the next day: for ``h`` > 0 it holds the last
``24 − h`` hours of the previous day and the first ``h`` hours of the next day as the
offline plan of the forecast foresees them (``planned``; the thesis feeds the CP plan of
the next day to the extractor). Without a plan the window is the previous day alone, so
every hour gets the same share. The thesis gives no value for ``offset_perc``; the
default here, 0.1, is a choice (docs/hybrid.md).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numpy.lib.stride_tricks import sliding_window_view

from dispatchlab.arrays import FloatArray
from dispatchlab.engine.scenario import Change, Scenario
from dispatchlab.errors import ConfigError

#: The thesis's threshold (§7.4, from §6.8.3's 84.82 % rounded as the thesis does).
THRESHOLD = 0.84
#: Default ``offsetPerc`` (not given in the thesis).
OFFSET_PERC = 0.1
HOURS = 24
#: Averages within this of the threshold count as equal to it (rounding of the means).
TOL = 1e-9


def _hours(values: npt.ArrayLike, name: str) -> FloatArray:
    a = np.asarray(values, dtype=np.float64)
    if a.shape != (HOURS,):
        raise ConfigError(f"profile extraction: {name} needs {HOURS} hourly values, got "
                          f"shape {a.shape}", field=name)
    if not np.isfinite(a).all() or (a < 0).any() or (a > 1 + 1e-9).any():
        raise ConfigError(f"profile extraction: {name} must be fractions in [0, 1]",
                          field=name)
    return np.minimum(a, 1.0)


def extract_profile(previous: npt.ArrayLike, planned: npt.ArrayLike | None = None, *,
                    threshold: float = THRESHOLD, offset_perc: float = OFFSET_PERC
                    ) -> FloatArray:
    """Alg. 8: 24 hourly desired shares (0–1) for the next day from the previous day's
    hourly utilization ``previous`` and, if given, the next day's planned one."""
    if not 0 <= threshold <= 1 or not 0 <= offset_perc <= 1:
        raise ConfigError("profile extraction: threshold and offset_perc must be in [0, 1]",
                          field="threshold")
    prev = _hours(previous, "previous")
    if prev.mean() > threshold + TOL:
        return np.ones(HOURS)
    nxt = prev if planned is None else _hours(planned, "planned")
    window = np.concatenate([prev, nxt]) if planned is not None else np.concatenate(
        [prev, prev])
    # a[h] = mean of window[h : h + 24], hours h − 24 … h − 1 relative to the next day
    avg = sliding_window_view(window, HOURS)[:HOURS].mean(axis=1)
    return np.where(avg > threshold + TOL, 1.0, avg + (1.0 - avg) * offset_perc)


def hourly(times: npt.ArrayLike, values: npt.ArrayLike, start: int, hours: int = HOURS
           ) -> FloatArray:
    """Time-weighted hourly means of a step function (``values[i]`` from ``times[i]`` to
    the next time; 0 before the first) over ``[start, start + hours · 3600)``."""
    t = np.asarray(times, dtype=np.int64)
    v = np.asarray(values, dtype=np.float64)
    edges = start + 3600 * np.arange(hours + 1, dtype=np.int64)
    pts = np.union1d(edges, t[(t > edges[0]) & (t < edges[-1])])
    idx = np.searchsorted(t, pts[:-1], side="right") - 1
    level = np.where(idx >= 0, v[np.maximum(idx, 0)], 0.0)
    area = np.cumsum(np.concatenate([[0.0], level * np.diff(pts)]))
    at = area[np.searchsorted(pts, edges)]
    return np.diff(at) / 3600.0


def profile_changes(day_start: int, shares: npt.ArrayLike, resource: str = "") -> list[Change]:
    """``desired_utilization`` scenario rows for one day of hourly shares (a row only
    where the share changes, plus the first hour)."""
    s = np.asarray(shares, dtype=np.float64)
    out: list[Change] = []
    for h, v in enumerate(s.tolist()):
        if h == 0 or v != s[h - 1]:
            out.append(Change(day_start + 3600 * h, "desired_utilization", float(v),
                              resource))
    return out


def profile_scenario(days: dict[int, npt.ArrayLike], resource: str = "") -> Scenario:
    """A scenario from ``{day start (s): 24 hourly shares}``."""
    rows: list[Change] = []
    for start in sorted(days):
        rows += profile_changes(start, days[start], resource)
    return Scenario(rows, source="hybrid profile extraction (Alg. 8)")
