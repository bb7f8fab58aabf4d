"""Operator rules under the CP dispatchers: the hand-computed cases of
tests/engine/test_rules.py, plus a real Eurora batch with its PBS queues."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np
import pytest

import dispatchlab.dispatchers.cp.presets  # noqa: F401  (registers the presets)
from dispatchlab.dispatchers.cp import CPConfig, CPDispatcher
from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.platform.platform import Platform
from dispatchlab.platform.queues import QueueConfig
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.simulation import simulate
from dispatchlab.workload.load import load_workload
from tests.conftest import trace_path
from tests.engine.test_rules import H, het_platform, night, reserved_platform, starts, wl

# "-solver": CP-SAT is called even when the greedy schedule is provably optimal, so the
# models' rule constraints (domains, reservation blocks, guards, equal starts) decide
CP = ["hcp3", "pcp3", "hcp1", "pcp1", "hcp3-solver", "pcp3-solver"]


def make(name: str) -> Any:
    """A registered CP dispatcher, or a v3 one that always calls the solver."""
    if name.endswith("-solver"):
        return CPDispatcher(CPConfig(kind=name[:3], version=3, skip_trivial=False))
    return get_dispatcher(name)


def run(w: Any, plat: Platform, name: str, **kw: Any) -> Any:
    """Simulate with the audit; no decision may fail or be dropped."""
    res = simulate(w, plat, make(name), check=True, **kw)
    stats = res.summary["dispatcher_stats"]
    assert stats["errors"] == 0 and stats["invalid_dropped"] == 0
    assert stats["fallbacks"] == 0, stats["paths"]
    if name.endswith("-solver"):
        assert stats["paths"].get("solver", 0) > 0, stats["paths"]
    return res


@pytest.mark.parametrize("name", CP)
def test_np_job_waits_for_18h_and_does_not_block_others(name: str) -> None:
    plat = Platform.homogeneous(2, {"cores": 1}).with_rules(queues={"np": night()})
    w = wl([10 * H, 10 * H], [H, H], [60, 60], [1, 1], ["np", "batch"])
    res = run(w, plat, name)
    assert starts(res) == [18 * H, 10 * H]
    assert res.jobs.sort_values("job_id")["start_at"].iloc[0] == "2014-04-01T18:00:00+02:00"


@pytest.mark.parametrize("name", CP)
def test_np_job_is_planned_at_18h_not_now(name: str) -> None:
    # one node: the batch job (wall 9 h) submitted later would fit before 18:00 only if
    # started at once; the np job planned at 18:00 must not hold the node now
    plat = Platform.homogeneous(1, {"cores": 1}).with_rules(queues={"np": night()})
    w = wl([10 * H, 10 * H + 5], [H, 7 * H], [60, 60], [1, 1], ["np", "batch"])
    res = run(w, plat, name)
    assert starts(res) == [18 * H, 10 * H + 5]


@pytest.mark.parametrize("name", CP)
def test_stopped_queue_resumes(name: str) -> None:
    plat = Platform.homogeneous(2, {"cores": 1}).with_rules(
        queues={"q": QueueConfig("q", stopped=((100, 500), ("2014-04-01T10:00", 36500)))})
    w = wl([150, 200, 36100], [50, 50, 50], [10, 10, 10], [1, 1, 1], ["q", "other", "q"])
    assert starts(run(w, plat, name)) == [500, 200, 36500]


@pytest.mark.parametrize("name", CP)
def test_queue_node_restriction(name: str) -> None:
    plat = Platform.homogeneous(3, {"cores": 1}).with_rules(
        queues={"debug": QueueConfig("debug", nodes=("n0",))})
    w = wl([0, 0], [100, 100], [50, 50], [1, 1], ["debug", "debug"])
    res = run(w, plat, name)
    assert starts(res) == [0, 50]
    assert set(res.jobs["node_list"]) == {"n0"}


@pytest.mark.parametrize("name", CP)
def test_reservation_blocks_long_jobs_and_hosts_its_own(name: str) -> None:
    plat = reserved_platform()  # R: n1 over [1000, 1500)
    w = wl([0, 0, 0], [2000, 400, 900], [100, 100, 100], [2, 1, 1], ["batch", "R", "batch"])
    res = run(w, plat, name)
    got = dict(zip(res.jobs["job_id"], res.jobs["start"], strict=True))
    assert got[2] == 1000
    assert res.jobs.set_index("job_id").loc[2, "node_list"] == "n1"
    assert got[1] == 1500
    assert got[3] == 0


@pytest.mark.slow
@pytest.mark.parametrize("name", CP)
def test_planned_job_never_runs_into_a_reservation(name: str) -> None:
    plat = reserved_platform(start=700, duration=100)  # R: n1 over [700, 800)
    w = wl([0, 1, 2, 3], [600, 1000, 300, 800], [600, 10, 10, 10], [1, 2, 1, 1],
           ["batch"] * 4)
    res = run(w, plat, name)
    got = dict(zip(res.jobs["job_id"], res.jobs["start"], strict=True))
    assert got[3] == 2  # ends by 302 < 700: at once on n1
    assert got[2] == 800  # 2 nodes for 1000 s: after R
    for _, row in res.jobs.iterrows():
        if "n1" in row["node_list"].split():
            assert row["start"] + row["requested"] <= 700 or row["start"] >= 800


@pytest.mark.parametrize("name", CP)
def test_standing_reservation_repeats(name: str) -> None:
    plat = reserved_platform(start=1000, duration=500, period=10_000, count=3)
    w = wl([1200, 1300], [400, 600], [10, 10], [1, 1], ["R", "batch"])
    got = dict(zip(*(run(w, plat, name).jobs[c] for c in ("job_id", "start")), strict=True))
    assert got[1] == 11_000
    assert got[2] == 1300


@pytest.mark.parametrize("name", CP)
def test_heterogeneous_job_starts_all_components_together(name: str) -> None:
    w = wl([0, 10, 10], [100, 50, 50], [100, 50, 50], [1, 1, 2], ["q"] * 3,
           req={"cores": [4, 1, 4], "gpu": [0, 1, 0]}, hetjob=[-1, 7, 7])
    res = run(w, het_platform(), name).jobs.set_index("job_id")
    assert res.loc[2, "start"] == res.loc[3, "start"] == 100
    assert res.loc[2, "node_list"] == "g0"
    assert res.loc[3, "node_list"] == "c0 c1"


@pytest.mark.parametrize("name", ["hcp3", "pcp3", "pcp3-solver"])
def test_eurora_batch_with_pbs_queues(name: str) -> None:
    """A real batch submitted at 12:36 with 7 np_longpar jobs: the audit passes and no
    np_longpar job starts between 08:00 and 18:00 local time."""
    path = trace_path("eurora-historical/50/hist_50_20140401_123611.log_crypt")
    w = load_workload(path)
    res = run(w, resolve_platform("eurora-pbs"), name, on_infeasible="reject")
    jobs = res.jobs
    assert res.summary["audited"]
    np_jobs = jobs[jobs["queue"] == "np_longpar"]
    assert len(np_jobs) == 7 and (np_jobs["start"] >= 0).all()
    hours = [datetime.fromisoformat(s).hour for s in np_jobs["start_at"]]
    assert all(h >= 18 or h < 8 for h in hours), hours
    assert np.isfinite(jobs["start"]).all()
