"""Time series of a run: used capacity per resource, queue length, running jobs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dispatchlab.engine.recorder import Recorder


def time_series(rec: Recorder) -> pd.DataFrame:
    """Step series: each row holds from ``time`` until the next row's time."""
    data: dict[str, object] = {"time": np.frombuffer(rec.sample_t, dtype=np.int64)}
    for name, used in zip(rec.platform.resources, rec.sample_used, strict=True):
        data[f"used_{name}"] = np.frombuffer(used, dtype=np.int64)
    data["queue_length"] = np.frombuffer(rec.sample_queue, dtype=np.int64)
    data["running_jobs"] = np.frombuffer(rec.sample_running, dtype=np.int64)
    return pd.DataFrame(data)


def busy_integral(ts: pd.DataFrame, column: str, until: int) -> float:
    """∫ column dt over the series, the last value held until ``until``."""
    t = ts["time"].to_numpy()
    if len(t) == 0:
        return 0.0
    v = ts[column].to_numpy().astype(np.float64)
    dt = np.diff(np.append(t, max(until, int(t[-1]))))
    return float((v * dt).sum())
