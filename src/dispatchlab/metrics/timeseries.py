"""Time series of a run: used capacity per resource, queue length, running jobs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dispatchlab.engine.recorder import Recorder


def time_series(rec: Recorder) -> pd.DataFrame:
    """Step series: each row holds from ``time`` until the next row's time."""
    resources = rec.platform.resources
    raw = np.frombuffer(rec.samples, dtype=np.int64).reshape(-1, rec.sample_width)
    if len(raw) > 1:  # keep the last row of each timestamp
        last = np.r_[raw[1:, 0] != raw[:-1, 0], True]
        raw = raw[last]
    total = rec.platform.total
    data: dict[str, object] = {"time": raw[:, 0]}
    for r, name in enumerate(resources):
        data[f"used_{name}"] = total[r] - raw[:, 3 + r]
    data["queue_length"] = raw[:, 1]
    data["running_jobs"] = raw[:, 2]
    return pd.DataFrame(data)


def busy_integral(ts: pd.DataFrame, column: str, until: int) -> float:
    """∫ column dt over the series, the last value held until ``until``."""
    t = ts["time"].to_numpy()
    if len(t) == 0:
        return 0.0
    v = ts[column].to_numpy().astype(np.float64)
    dt = np.diff(np.append(t, max(until, int(t[-1]))))
    return float((v * dt).sum())
