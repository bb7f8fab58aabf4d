"""Hand-computed removals (abort, re-queue with the original submit time, checkpoints) and
GOODPUT(T) as the slides define it."""

from __future__ import annotations

import pytest

from dispatchlab.engine.recorder import ABORTED, COMPLETED
from dispatchlab.metrics.variable_capacity import goodput, vc_metrics
from tests.variable_capacity.helpers import run, segments, vc_jobs

# Two machines of 4 cores. A and B (4 cores, 100 s) start at 0 on machines 0 and 1. At 50
# only one machine is alive: ff-aware removes the riskiest (highest index), machine 1, so
# B is aborted and re-queued with its submit time 0. At 70 machine 1 is back: B restarts.
CAPACITY = [(0, 2), (50, 1), (70, 2)]


def test_removal_aborts_and_requeues_with_original_submit_time() -> None:
    res = run(vc_jobs((0, 100, 4), (0, 100, 4)), "nodes=2,cores=4", "ff-aware", CAPACITY)
    assert segments(res) == [(0, 0, 100, 0, COMPLETED), (1, 0, 50, 1, ABORTED),
                             (1, 70, 170, 1, COMPLETED)]
    jobs = res.jobs.set_index("job_id")
    b = jobs.loc[jobs.index[1]]
    assert b["restarts"] == 1 and b["lost_work"] == 50 * 4
    assert b["submit"] == 0 and b["wait"] == 0  # waited 0 before its first start
    assert res.summary["aborted_segments"] == 1
    assert res.summary["lost_work_core_seconds"] == 200
    m = vc_metrics(res.recorder, 200)
    assert m["aborted_count"] == 1 and m["aborted_volume"] == 200
    # B's stretch: (170 − 0) / 100
    assert m["max_stretch"] == pytest.approx(1.7)


def test_checkpointed_job_loses_only_the_work_since_its_last_checkpoint() -> None:
    # Checkpoint every 30 s of work: at 50, B saved 30 s and loses 20 s (80 core-s); it
    # resumes at 70 with 70 s left and ends at 140.
    res = run(vc_jobs((0, 100, 4), (0, 100, 4), checkpoint=30), "nodes=2,cores=4",
              "ff-aware", CAPACITY)
    assert segments(res) == [(0, 0, 100, 0, COMPLETED), (1, 0, 50, 1, ABORTED),
                             (1, 70, 140, 1, COMPLETED)]
    assert res.summary["lost_work_core_seconds"] == 80


def test_goodput_of_the_removal_example_by_hand() -> None:
    # T = 100. Alive core-time: 8·50 + 4·20 + 8·30 = 720. Useful: A complete 100·4 = 400,
    # B running since 70: (100 − 70)·4 = 120 → 520 / 720.
    res = run(vc_jobs((0, 100, 4), (0, 100, 4)), "nodes=2,cores=4", "ff-aware", CAPACITY)
    g = goodput(res.recorder, 100)
    assert g["alive_work"] == 720 and g["completed_work"] == 400
    assert g["running_work"] == 120 and g["goodput"] == pytest.approx(520 / 720)
    # with checkpoints, B's first run keeps 30 s · 4 cores
    res = run(vc_jobs((0, 100, 4), (0, 100, 4), checkpoint=30), "nodes=2,cores=4",
              "ff-aware", CAPACITY)
    assert goodput(res.recorder, 100)["goodput"] == pytest.approx((520 + 120) / 720)


def test_goodput_three_jobs_by_hand() -> None:
    # Two machines of 2 cores. J1 (0, 10 s, 2 cores) → m0; J2 (0, 30 s, 1 core) → m1;
    # J3 (5, 20 s, 2 cores) waits (m0 full, m1 has 1 core) and starts on m0 at 10.
    # At 15 one machine leaves: m1, so J2 is aborted (15 s lost) and waits.
    # GOODPUT(20): completed J1 10·2 = 20; running J3 (20 − 10)·2 = 20; J2 not running.
    # Alive core-time over [0, 20): 4·15 + 2·5 = 70 → 40 / 70.
    res = run(vc_jobs((0, 10, 2), (0, 30, 1), (5, 20, 2)), "nodes=2,cores=2", "ff-aware",
              [(0, 2), (15, 1), (40, 2)])
    assert segments(res)[:4] == [(0, 0, 10, 0, COMPLETED), (1, 0, 15, 1, ABORTED),
                                 (2, 10, 30, 0, COMPLETED), (1, 30, 60, 0, COMPLETED)]
    g = goodput(res.recorder, 20)
    assert (g["completed_work"], g["running_work"], g["alive_work"]) == (20, 20, 70)
    assert g["goodput"] == pytest.approx(40 / 70)
    m = vc_metrics(res.recorder, 20)
    assert m["utilization_alive"] == pytest.approx((20 + 15 + 20) / 70)
    assert m["mean_alive_nodes"] == pytest.approx((2 * 15 + 1 * 5) / 20)


def test_alive_nodes_in_the_time_series() -> None:
    res = run(vc_jobs((0, 100, 4), (0, 100, 4)), "nodes=2,cores=4", "ff-aware", CAPACITY)
    ts = res.timeseries.set_index("time")
    assert ts.loc[0, "alive_nodes"] == 2 and ts.loc[50, "alive_nodes"] == 1
    assert ts.loc[70, "alive_nodes"] == 2


def test_report_utilization_figure_shows_alive_nodes() -> None:
    import matplotlib

    matplotlib.use("Agg")
    from dispatchlab.report.figures import RunView, utilization_figure

    res = run(vc_jobs((0, 100, 4), (0, 100, 4)), "nodes=2,cores=4", "ff-aware", CAPACITY)
    view = RunView("ff-aware", "#1f77b4", res.jobs, res.timeseries, {"cores": 8}, 2)
    fig = utilization_figure([view])
    ax = fig.axes[0]
    assert any(line.get_linestyle() == "--" for line in ax.get_lines())
    assert any("alive nodes 1–2" in t.get_text() for t in ax.texts)
