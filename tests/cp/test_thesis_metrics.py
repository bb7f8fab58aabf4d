"""Thesis Table 4.13–4.15 metrics: summary mapping, recomputation from jobs, tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dispatchlab.metrics.thesis_metrics import (
    NAMES,
    THESIS,
    relative_to,
    thesis_metrics,
    thesis_metrics_from_jobs,
    thesis_table,
)
from dispatchlab.simulation import simulate
from tests.cp.helpers import platform, random_workload

PLAT = [[16, 2, 0, 8192]] * 2 + [[16, 0, 0, 8192]] * 2


def test_by_hand() -> None:
    jobs = pd.DataFrame({
        "wait": [0, 7200, 100], "ewt": [3600, 3600, 18000], "rejected": [False, False, False],
        "submit": [0, 0, 50], "end": [10, 8000, 400],
    })
    m = thesis_metrics_from_jobs(jobs, np.array([0.5, 1.5]))
    assert m["WQT"] == pytest.approx(2 + 100 / 18000)
    assert m["AQ"] == pytest.approx(7300 / 3)
    assert m["NL"] == 1 and m["TR"] == 3600 and m["WT"] == pytest.approx(1.0)
    assert (m["AO"], m["MO"]) == (1.0, 1.5)
    assert m["%O"] == pytest.approx(2.0 / 8000 * 100)


def test_summary_and_jobs_agree() -> None:
    res = simulate(random_workload(30, seed=2), platform(PLAT), "pbs-fifo")
    from_summary = thesis_metrics(res.summary)
    dec = np.frombuffer(res.recorder.decision_cpu, dtype=np.float64)
    from_jobs = thesis_metrics_from_jobs(res.jobs, dec)
    assert list(from_summary) == list(NAMES)
    for k in NAMES:
        assert from_summary[k] == pytest.approx(from_jobs[k], rel=1e-9, abs=1e-12), k


def test_tables() -> None:
    results = pd.DataFrame({
        "dispatcher": ["a", "b", "a"], "weighted_queue_time": [2.0, 1.0, 4.0],
        "mean_wait": [1, 1, 1], "late_jobs": [1, 0, 1], "total_tardiness": [1, 1, 1],
        "weighted_tardiness": [1, 1, 1], "dispatch_time_mean_ms": [1000, 2000, 3000],
        "dispatch_time_max_ms": [1, 1, 1], "dispatch_overhead_pct": [1, 1, 1],
    })
    t = thesis_table(results)
    assert t.loc["WQT", "a"] == 3.0 and t.loc["AO", "b"] == 2.0
    assert relative_to(t, "a").loc["WQT", "b"] == pytest.approx(100 * (3 - 1) / 3)
    assert len(THESIS) == 3 and all(set(v) == set(NAMES) for v in THESIS.values())
