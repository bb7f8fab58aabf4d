"""Predicted against realized starts: the shadow predictions' CSV and Slurm's completion log.

Per job: its first prediction, its last one made before it started, the realized start
(from the job completion log) and the errors (predicted − realized, s), and whether the
realized start fell inside the last prediction's band.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dispatchlab.errors import WorkloadError
from dispatchlab.live.predict import COLUMNS
from dispatchlab.workload.slurm_jobcomp import read_jobcomp


def prediction_table(predictions: str | Path, jobcomp: str | Path) -> pd.DataFrame:
    """One row per predicted job that has started: first/last prediction vs realized."""
    pred = pd.read_csv(predictions)
    missing = [c for c in COLUMNS if c not in pred.columns]
    if missing:
        raise WorkloadError(f"not a predictions file (no column {missing[0]})",
                            source=str(predictions), field=missing[0])
    realized = {r.job_id: r.start for r in read_jobcomp(jobcomp) if r.start is not None}
    rows = []
    for key, grp in pred.groupby("job_id", sort=True):
        jid = int(str(key))
        start = realized.get(jid)
        if start is None:
            continue
        before = grp[grp["cycle_time"] <= start]
        if before.empty:
            continue
        first, last = before.iloc[0], before.iloc[-1]
        rows.append({"job_id": jid, "realized_start": start,
                     "first_predicted": int(first["predicted_start"]),
                     "first_error_s": int(first["predicted_start"]) - start,
                     "first_lead_s": start - int(first["cycle_time"]),
                     "last_predicted": int(last["predicted_start"]),
                     "last_error_s": int(last["predicted_start"]) - start,
                     "in_band": bool(last["low"] <= start <= last["high"]),
                     "cycles": len(before)})
    return pd.DataFrame(rows)


def prediction_summary(table: pd.DataFrame) -> dict[str, Any]:
    """Median / 95th percentile / max of absolute errors, share within the band."""
    if table.empty:
        return {"jobs": 0}
    out: dict[str, Any] = {"jobs": len(table)}
    for col in ("first_error_s", "last_error_s"):
        err = np.abs(table[col].to_numpy(dtype=float))
        out[col] = {"median": float(np.median(err)), "p95": float(np.quantile(err, 0.95)),
                    "max": float(err.max())}
    out["in_band"] = float(table["in_band"].mean())
    return out
