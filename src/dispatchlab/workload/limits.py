"""The one set of value limits every workload reader applies (and every writer respects,
so what ``convert`` writes reads back).

- Times (submit, requested and run time, logged wait) are whole seconds up to
  :data:`MAX_SECONDS` (~3,000 years): dates stay before the year 9999 that local timestamps
  can show, and sums of times × cores stay far inside int64.
- Ids and counts (job ids, units, per-unit requests) stay below :data:`MAX_ID` = 2⁵³: from
  there on a float (how SWF and JSON numbers are read) no longer holds every integer, so
  2⁵³ + 1 would silently become 2⁵³.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from dispatchlab.errors import WorkloadError

#: Largest time in seconds (~3,000 years).
MAX_SECONDS = 10**11
#: First id or count refused: beyond it, floats skip integers.
MAX_ID = 2**53
#: Workload columns and their limit.
COLUMN_LIMITS: dict[str, int] = {
    **dict.fromkeys(("submit", "walltime", "runtime", "logged_wait", "checkpoint"),
                    MAX_SECONDS),
    **dict.fromkeys(("job_id", "units", "req", "min_units", "max_units", "array", "hetjob"),
                    MAX_ID),
}


def limit_text(limit: int) -> str:
    """How a limit reads in a message."""
    return "1e11 s (~3,000 years)" if limit == MAX_SECONDS else "2^53 (not exactly representable)"


def too_big(value: float, limit: int) -> bool:
    """True when ``value`` (a number read from a file) is beyond ``limit`` or not finite."""
    return not math.isfinite(value) or abs(value) >= limit if limit == MAX_ID else (
        not math.isfinite(value) or abs(value) > limit)


def first_beyond(column: str, values: npt.NDArray[np.generic]) -> int | None:
    """Index of the first value of workload column ``column`` beyond its limit (None: all
    within)."""
    limit = COLUMN_LIMITS.get(column)
    if limit is None or values.size == 0:
        return None
    vals = np.abs(values.astype(np.float64) if values.dtype.kind == "f" else values)
    bad = vals >= limit if limit == MAX_ID else vals > limit
    if bad.ndim > 1:
        bad = bad.any(axis=1)
    hits = np.flatnonzero(bad)
    return int(hits[0]) if len(hits) else None


def check_number(value: float, limit: int, *, source: str | None, field: str,
                 line: int | None = None, job: int | None = None) -> float:
    """``value`` when within ``limit``; a WorkloadError naming where it was otherwise."""
    if too_big(value, limit):
        raise WorkloadError(f"value {value:g} is beyond {limit_text(limit)}", source=source,
                            line=line, job=job, field=field)
    return value
