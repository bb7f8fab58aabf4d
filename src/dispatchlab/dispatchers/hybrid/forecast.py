"""Next-day job forecast (thesis §7.2, §7.7): the jobs submitted in the last 24 hours,
replayed 24 hours later.

The thesis's forecast module "generates a forecasted job trace with the waiting jobs and
the jobs forecast to be submitted" and, in its experiments, uses "traces based on the
previous 24 hours of submissions" (§7.7; a learned forecaster is future work there). So
the forecast of ``[t, t + 24 h)`` is every job submitted in ``[t − 24 h, t)`` with its
submission moved 24 h later, same units, requests and wall-time. Its planned duration
is what is known at forecast time: the observed run time of a job that already ended,
else its requested wall-time (``duration="observed"``, the default); ``"walltime"`` uses
wall-times only. Its power is the job's ``power`` figure (W, the whole job; NaN when the
workload has none), what the profit-driven planners price, and its latest desired start
(``lst``, shifted like its submission), one of Multi-Search's orderings. The forecast
holds the replayed submissions only: the pipeline adds the jobs still waiting at ``t``
(released at the day's start, with their wall-times) and passes running jobs as busy
capacity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.errors import ConfigError

DAY = 86_400
DURATIONS = ("observed", "walltime")


@dataclass(frozen=True)
class Forecast:
    """Forecast jobs: source rows, forecast submission (s), duration (s), units,
    per-unit requests (jobs × resources), power (W, the whole job; NaN: unknown) and
    latest desired start (s)."""

    rows: IntArray
    submit: IntArray
    duration: IntArray
    units: IntArray
    req: IntArray
    power: FloatArray
    lst: IntArray

    def __len__(self) -> int:
        return len(self.rows)


def forecast_next_day(submit: npt.ArrayLike, walltime: npt.ArrayLike, units: npt.ArrayLike,
                      req: npt.ArrayLike, at: int, *, observed: npt.ArrayLike | None = None,
                      duration: str = "observed", window: int = DAY,
                      power: npt.ArrayLike | None = None,
                      lst: npt.ArrayLike | None = None) -> Forecast:
    """Jobs submitted in ``[at − window, at)`` shifted by ``window``.

    ``observed[j]`` is job ``j``'s observed run time, negative when it has not ended (or
    ``None``: none known); ``power[j]`` its power figure (W; ``None``: none known);
    ``lst[j]`` its latest desired start (``None``: its submission)."""
    if duration not in DURATIONS:
        raise ConfigError(f"forecast duration must be one of {DURATIONS}, got '{duration}'",
                          field="duration")
    if window <= 0:
        raise ConfigError(f"forecast window must be > 0 s, got {window}", field="window")
    sub = np.asarray(submit, dtype=np.int64)
    rows = np.flatnonzero((sub >= at - window) & (sub < at)).astype(np.int64)
    wt = np.asarray(walltime, dtype=np.int64)[rows]
    dur = wt.copy()
    if duration == "observed" and observed is not None:
        obs = np.asarray(observed, dtype=np.int64)[rows]
        dur = np.where(obs >= 0, obs, wt)
    watts = (np.full(len(rows), np.nan) if power is None
             else np.asarray(power, dtype=np.float64)[rows])
    latest = sub[rows] if lst is None else np.asarray(lst, dtype=np.int64)[rows]
    return Forecast(rows=rows, submit=sub[rows] + window, duration=np.maximum(dur, 0),
                    units=np.asarray(units, dtype=np.int64)[rows],
                    req=np.asarray(req, dtype=np.int64)[rows], power=watts,
                    lst=latest + window)
