"""Metrics per group of jobs: duration classes (short/medium/long) and queues."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

#: Duration classes by the time a job actually runs (Galleguillos et al. §5).
CLASS_BOUNDS = (("short", 0, 3600), ("medium", 3600, 5 * 3600), ("long", 5 * 3600, None))
CLASS_LABELS = {"short": "short (< 1 h)", "medium": "medium (1–5 h)", "long": "long (> 5 h)"}


def job_class(jobs: pd.DataFrame) -> npt.NDArray[np.object_]:
    """``short`` / ``medium`` / ``long`` per job, from ``min(actual run time, wall-time)``.

    The duration a job runs is the same under every dispatcher, so classes are comparable.
    Medium includes both bounds (1 h and 5 h).
    """
    d = np.minimum(jobs["actual_runtime"].to_numpy(), jobs["requested"].to_numpy())
    out = np.full(len(d), "medium", dtype=object)
    out[d < 3600] = "short"
    out[d > 5 * 3600] = "long"
    return out


def _group_row(part: pd.DataFrame) -> dict[str, float | int]:
    ran = part[~part["rejected"]]
    n = len(ran)
    wait = ran["wait"].to_numpy(dtype=np.float64)
    return {
        "jobs": len(part),
        "mean_wait": float(wait.mean()) if n else float("nan"),
        "median_wait": float(np.median(wait)) if n else float("nan"),
        "p90_wait": float(np.percentile(wait, 90)) if n else float("nan"),
        "max_wait": float(wait.max()) if n else float("nan"),
        "mean_slowdown": float(ran["slowdown"].mean()) if n else float("nan"),
        "mean_bounded_slowdown": float(ran["bounded_slowdown"].mean()) if n else float("nan"),
        "killed": int(ran["killed"].sum()),
    }


def breakdown(jobs: pd.DataFrame) -> pd.DataFrame:
    """Tidy table: one row per duration class and, when jobs use several queues, per queue.

    Columns: ``kind`` (``class`` or ``queue``), ``group``, then the group's metrics. Every
    class appears even when empty, so tables line up across dispatchers.
    """
    rows: list[dict[str, object]] = []
    classes = job_class(jobs)
    for name, _lo, _hi in CLASS_BOUNDS:
        rows.append({"kind": "class", "group": name, **_group_row(jobs[classes == name])})
    queues = jobs["queue"].astype(str)
    if queues.nunique() > 1:
        for q in sorted(queues.unique()):
            rows.append({"kind": "queue", "group": q, **_group_row(jobs[queues == q])})
    return pd.DataFrame(rows)
