"""Time series of a run: used and alive capacity per resource, queue length, running jobs,
and power against the cap when the run has a power budget.

Each row holds from its ``time`` until the next row's. :func:`series_arrays` gives the
columns as numpy arrays (for summaries), :func:`time_series` the DataFrame.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.engine.recorder import Recorder

if TYPE_CHECKING:
    import pandas as pd



@dataclass
class SeriesArrays:
    """Step series, one row per decision point (the last sample of each timestamp)."""

    time: IntArray
    used: IntArray  # rows × resources
    alive: IntArray  # rows × resources: capacity of usable nodes
    queue_length: IntArray
    running_jobs: IntArray
    power_used: FloatArray | None = None
    power_cap: FloatArray | None = None


def series_arrays(rec: Recorder) -> SeriesArrays:
    """The recorded samples as arrays."""
    n_res = len(rec.platform.resources)
    raw = np.frombuffer(rec.samples, dtype=np.int64).reshape(-1, rec.sample_width)
    keep = _last_of_each_time(raw[:, 0]) if len(raw) > 1 else slice(None)
    raw = raw[keep]
    free = raw[:, 3:3 + n_res]
    alive = raw[:, 3 + n_res:3 + 2 * n_res]
    out = SeriesArrays(time=raw[:, 0], used=alive - free, alive=alive,
                       queue_length=raw[:, 1], running_jobs=raw[:, 2])
    if len(rec.power_samples):
        pw = np.frombuffer(rec.power_samples, dtype=np.float64).reshape(-1, 3)
        pw = pw[_last_of_each_time(pw[:, 0]) if len(pw) > 1 else slice(None)]
        out.power_used, out.power_cap = pw[:, 1], pw[:, 2]
    return out


def _last_of_each_time(t: np.ndarray) -> npt.NDArray[np.bool_]:
    out = np.ones(len(t), dtype=bool)
    out[:-1] = t[1:] != t[:-1]
    return out


def time_series(rec: Recorder, arrays: SeriesArrays | None = None) -> pd.DataFrame:
    """Step series as a DataFrame: ``time``, ``used_<res>``, ``queue_length``,
    ``running_jobs``; ``alive_<res>`` and ``alive_nodes`` when nodes came and went;
    ``power_used``, ``power_cap`` when the run had a power budget; ``desired_<res>`` (the
    desired profile's share × total capacity) when it had a desired utilization profile."""
    import pandas as pd

    a = arrays if arrays is not None else series_arrays(rec)
    data: dict[str, object] = {"time": a.time}
    for r, name in enumerate(rec.platform.resources):
        data[f"used_{name}"] = a.used[:, r]
    data["queue_length"] = a.queue_length
    data["running_jobs"] = a.running_jobs
    if len(a.alive) and (a.alive != rec.platform.total[None, :]).any():
        for r, name in enumerate(rec.platform.resources):
            data[f"alive_{name}"] = a.alive[:, r]
        from dispatchlab.metrics.variable_capacity import alive_nodes_at

        data["alive_nodes"] = alive_nodes_at(rec, a.time)
    if a.power_used is not None:
        data["power_used"] = a.power_used
        data["power_cap"] = a.power_cap
    for r, name in enumerate(rec.platform.resources):
        if name in rec.desired:
            times, shares = rec.desired[name]
            k = np.searchsorted(times, a.time, side="right") - 1
            share = np.where(k >= 0, shares[np.maximum(k, 0)], 1.0)
            data[f"desired_{name}"] = share * rec.platform.total[r]
    return pd.DataFrame(data)


def step_integral(t: np.ndarray, v: np.ndarray, until: int) -> float:
    """∫ v dt of a step series, the last value held until ``until``."""
    if len(t) == 0:
        return 0.0
    dt = np.diff(np.append(t, max(until, int(t[-1]))))
    return float((np.asarray(v, dtype=np.float64) * dt).sum())
