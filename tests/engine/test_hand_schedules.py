"""Schedules computed by hand, checked start by start."""

from __future__ import annotations

import numpy as np

from dispatchlab import Platform, Workload, simulate
from tests.conftest import jobs


def starts(res) -> list[int]:  # type: ignore[no-untyped-def]
    return res.jobs["start"].tolist()


def test_strict_fifo_on_four_cores() -> None:
    # 4 cores. Job A (t=0, 3 cores, 10 s), B (t=1, 2 cores, 5 s) waits for A,
    # C (t=2, 1 core, 100 s) could fit at t=2 but strict FIFO keeps it behind B.
    wl = jobs((0, 10, 20, 3), (1, 5, 20, 2), (2, 100, 200, 1))
    res = simulate(wl, "nodes=1,cores=4", "fifo")
    assert starts(res) == [0, 10, 10]
    assert res.jobs["end"].tolist() == [10, 15, 110]
    assert res.jobs["wait"].tolist() == [0, 9, 8]
    assert res.summary["makespan"] == 110
    # utilization: busy core-seconds / (4 cores × 110 s)
    assert np.isclose(res.summary["utilization"], (3 * 10 + 2 * 5 + 100) / (4 * 110))


def test_kill_at_walltime_and_completion_before_submission() -> None:
    # A runs 50 s but asked for 30 s: killed at 30. B arrives exactly at 30 and must see
    # A's cores free (completions are processed before submissions at one timestamp).
    wl = jobs((0, 50, 30, 2), (30, 10, 10, 2))
    res = simulate(wl, "nodes=2,cores=1", "fifo")
    assert starts(res) == [0, 30]
    assert res.jobs["end"].tolist() == [30, 40]
    assert res.jobs["killed"].tolist() == [True, False]
    assert res.summary["killed"] == 1


def test_units_share_nodes_in_processor_pool_mode() -> None:
    # Two nodes × 4 cores; a 6-unit job fills node 0 and half of node 1 (first-fit).
    wl = jobs((0, 10, 10, 6), (0, 10, 10, 2), (0, 10, 10, 1))
    res = simulate(wl, "nodes=2,cores=4", "fifo")
    assert starts(res) == [0, 0, 10]
    assert res.jobs["node_list"].tolist()[:2] == ["n0*4 n1*2", "n1*2"]


def test_multi_resource_units_respect_every_resource() -> None:
    # Node 0 has no GPU; a 1-GPU unit must go to node 1 even though node 0 has free cores.
    plat = Platform(resources=("cores", "gpu"), capacity=np.array([[8, 0], [8, 2]]),
                    node_names=("cpu0", "gpu0"))
    wl = Workload.from_columns(submit=[0, 0, 0], runtime=[10, 10, 10], walltime=[10, 10, 10],
                               units=[1, 2, 1], req={"cores": [1, 1, 1], "gpu": [1, 1, 0]})
    res = simulate(wl, plat, "fifo")
    # job 1 needs 2 GPU units but only 1 GPU is left after job 0: waits until 10
    assert starts(res) == [0, 10, 10]
    assert res.jobs["node_list"].tolist() == ["gpu0", "gpu0*2", "cpu0"]


def test_bounded_slowdown_and_wait_metrics() -> None:
    wl = jobs((0, 100, 100, 1), (0, 5, 10, 1))
    res = simulate(wl, "nodes=1,cores=1", "fifo")
    b = res.jobs.iloc[1]
    assert b["wait"] == 100 and b["run"] == 5
    assert np.isclose(b["slowdown"], 105 / 5)
    assert np.isclose(b["bounded_slowdown"], 105 / 10)  # τ = 10 s
    assert np.isclose(res.summary["mean_bounded_slowdown"], (1 + 10.5) / 2)


def test_queue_ewt_tardiness_metrics() -> None:
    wl = jobs((0, 100, 100, 1), (0, 5, 10, 1), queue=["debug", "debug"],
              queues={"debug": 60})
    res = simulate(wl, "nodes=1,cores=1", "fifo")
    b = res.jobs.iloc[1]
    assert b["tardiness"] == 40 and bool(b["late"])
    assert np.isclose(b["weighted_queue_time"], 100 / 60)
    assert np.isclose(b["weighted_tardiness"], 40 / 60)
    assert res.summary["late_jobs"] == 1


def test_zero_runtime_job_ends_where_it_starts() -> None:
    wl = jobs((0, 0, 10, 1), (0, 5, 10, 1))
    res = simulate(wl, "nodes=1,cores=1", "fifo")
    assert starts(res) == [0, 0]
    assert res.jobs["end"].tolist() == [0, 5]


def test_absolute_local_timestamps() -> None:
    # origin 2014-03-31 09:00:00 UTC = 11:00 in Rome (CEST, +02:00)
    wl = jobs((0, 60, 60, 1), (30, 60, 60, 1), origin_unix=1396256400,
              timezone="Europe/Rome")
    res = simulate(wl, "nodes=1,cores=1", "fifo")
    assert res.jobs["submit_at"].tolist() == ["2014-03-31T11:00:00+02:00",
                                              "2014-03-31T11:00:30+02:00"]
    assert res.jobs["start_at"].tolist()[1] == "2014-03-31T11:01:00+02:00"
    assert res.jobs["end_at"].tolist()[1] == "2014-03-31T11:02:00+02:00"
