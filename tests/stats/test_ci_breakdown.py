"""Confidence intervals and the per-class / per-queue breakdown."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dispatchlab.stats.ci import mean_ci, summarize_runs
from dispatchlab.stats.job_classes import breakdown, job_class


def test_mean_ci_matches_the_t_table() -> None:
    ci = mean_ci([1, 2, 3, 4, 5])
    # s = sqrt(2.5); t(0.975, 4) = 2.776445 (table value)
    half = 2.776445 * math.sqrt(2.5) / math.sqrt(5)
    assert ci.mean == 3.0 and ci.n == 5
    assert ci.low == pytest.approx(3 - half, abs=1e-6)
    assert ci.high == pytest.approx(3 + half, abs=1e-6)
    assert ci.half_width == pytest.approx(half, abs=1e-6)


def test_mean_ci_degenerate_cases() -> None:
    one = mean_ci([4.0])
    assert one.mean == 4.0 and math.isnan(one.low)
    assert mean_ci([float("nan"), 2.0, 4.0]).n == 2
    assert mean_ci([]).n == 0
    with pytest.raises(ValueError):
        mean_ci([1, 2], confidence=1.5)


def test_summarize_runs_is_tidy() -> None:
    runs = pd.DataFrame({"dispatcher": ["a", "a", "b", "b"], "x": [1.0, 3.0, 2.0, 2.0]})
    out = summarize_runs(runs, ["x"])
    assert list(out.columns[:3]) == ["dispatcher", "metric", "n"]
    assert out.set_index("dispatcher").loc["a", "mean"] == 2.0
    assert out.set_index("dispatcher").loc["b", "ci_low"] == 2.0


def jobs_frame(
    durations: list[int], walltimes: list[int] | None = None, queues: list[str] | None = None
) -> pd.DataFrame:
    n = len(durations)
    return pd.DataFrame(
        {
            "actual_runtime": durations,
            "requested": walltimes or [10**6] * n,
            "wait": np.arange(n) * 100,
            "slowdown": np.ones(n),
            "bounded_slowdown": np.ones(n) * 2,
            "killed": [False] * n,
            "rejected": [False] * n,
            "queue": queues or ["-1"] * n,
        }
    )


def test_job_classes_by_actual_duration() -> None:
    jobs = jobs_frame([0, 3599, 3600, 18000, 18001, 40000], walltimes=[10**6] * 5 + [3000])
    # the last job would run 40000 s but is killed at its 3000 s wall-time: short
    assert job_class(jobs).tolist() == ["short", "short", "medium", "medium", "long", "short"]


def test_breakdown_rows_per_class_and_queue() -> None:
    jobs = jobs_frame([10, 20, 7200, 90000], queues=["debug", "debug", "par", "par"])
    b = breakdown(jobs)
    classes = b[b["kind"] == "class"].set_index("group")
    assert classes.loc["short", "jobs"] == 2
    assert classes.loc["short", "mean_wait"] == 50.0
    assert classes.loc["long", "jobs"] == 1
    queues = b[b["kind"] == "queue"].set_index("group")
    assert sorted(queues.index) == ["debug", "par"]
    # one queue only: no per-queue rows; empty classes still listed
    b1 = breakdown(jobs_frame([10, 20]))
    assert list(b1["group"]) == ["short", "medium", "long"]
    assert b1.set_index("group").loc["long", "jobs"] == 0


def test_seeds_that_change_nothing_count_as_one_set() -> None:
    from dispatchlab.stats.ranking import analyze_sets, drop_repeated_seeds

    rows = []
    for seed in range(4):
        for d, wait, digest in (("a", 10.0, "x"), ("b", 20.0, "y")):
            rows.append(
                {
                    "block": f"kth|auto|seed={seed}",
                    "seed": seed,
                    "dispatcher": d,
                    "mean_wait": wait,
                    "result_digest": digest,
                }
            )
    runs = pd.DataFrame(rows)
    kept, dropped = drop_repeated_seeds(runs)
    assert dropped == 3 and sorted(kept["seed"].unique()) == [0]
    st = analyze_sets(runs, ["mean_wait"])
    assert st.n_sets == 1 and st.repeated_seeds == 3
    assert st.rankings["mean_wait"].friedman is None  # no fake significance from copies
    # seeds that do change a result are independent sets
    runs.loc[(runs["seed"] == 2) & (runs["dispatcher"] == "b"), "result_digest"] = "z"
    assert drop_repeated_seeds(runs)[1] == 0
