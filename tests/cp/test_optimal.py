"""Tiny instances whose optimal decisions are known by hand."""

from __future__ import annotations

import pytest

from dispatchlab.dispatchers.cp import CPConfig, CPDispatcher
from dispatchlab.simulation import simulate
from dispatchlab.workload.workload import Workload
from tests.cp.helpers import platform, thesis_nodes

VERSIONS = [("hcp", 0), ("hcp", 1), ("hcp", 3), ("pcp", 0), ("pcp", 1), ("pcp", 3)]


def thesis_jobs(durations: list[int], gpus: list[int], mics: list[int]) -> Workload:
    """Thesis Tables 4.2/4.6: Job1, Job2 at time 0, Job3, Job4 at time 5."""
    return Workload.from_columns(
        submit=[0, 0, 5, 5], runtime=durations, walltime=durations, units=[2, 1, 2, 2],
        req={"cores": [16, 1, 16, 16], "gpu": gpus, "mic": mics,
             "mem": [1024, 2048, 1024, 1024]})


def starts(kind: str, version: int, wl: Workload, objective: str = "wait") -> dict[int, int]:
    disp = CPDispatcher(CPConfig(kind=kind, version=version, objective=objective))
    res = simulate(wl, thesis_nodes(), disp)
    stats = res.summary["dispatcher_stats"]
    assert stats["errors"] == 0 and stats["fallbacks"] == 0
    return dict(zip(res.jobs["job_id"].tolist(), res.jobs["start"].tolist(), strict=True))


@pytest.mark.parametrize(("kind", "version"), VERSIONS)
def test_thesis_test1_minimal_total_wait(kind: str, version: int) -> None:
    """Table 4.4: the optimization model runs Job4 at 60 and Job3 at 660 (Σ wait 720)."""
    wl = thesis_jobs([600, 60, 720, 600], gpus=[0, 2, 2, 1], mics=[2, 0, 0, 0])
    assert starts(kind, version, wl) == {1: 0, 2: 0, 3: 660, 4: 60}


@pytest.mark.parametrize("version", [0, 1, 3])
def test_thesis_test2_minimal_total_wait_pcp(version: int) -> None:
    """Table 4.7: Job4 on the GPU nodes at 60, Job3 at 70 when Job1 frees the MIC nodes."""
    wl = thesis_jobs([70, 60, 480, 600], gpus=[0, 2, 0, 1], mics=[2, 0, 0, 0])
    assert starts("pcp", version, wl) == {1: 0, 2: 0, 3: 70, 4: 60}


@pytest.mark.parametrize("version", [0, 1, 3])
def test_thesis_test2_hcp_pooling_blind_spot(version: int) -> None:
    """HCP pools the cores: at 60 both orders cost the same wait in its model (55 + 65), the
    priority tie-break (smaller demand) puts Job3 first and the mapper can only use the GPU
    nodes — Job4 then waits until 540. This is the pooled model's known limit, which PCP
    does not have (previous test)."""
    wl = thesis_jobs([70, 60, 480, 600], gpus=[0, 2, 0, 1], mics=[2, 0, 0, 0])
    assert starts("hcp", version, wl) == {1: 0, 2: 0, 3: 60, 4: 540}


def one_core_pair() -> Workload:
    """A long debug job and a short longpar job competing for one core at time 0."""
    return Workload.from_columns(
        submit=[0, 0], runtime=[1000, 100], walltime=[1000, 100], units=[1, 1],
        req={"cores": [1, 1]}, queue=["debug", "longpar"],
        queues={"debug": 3600, "longpar": 86400})


@pytest.mark.parametrize("kind", ["hcp", "pcp"])
def test_weighted_wait_and_slowdown_disagree(kind: str) -> None:
    """Weighted wait (24 × 100 > 1 × 1000) runs the debug job first; slowdown (12 > 2.1)
    runs the short job first."""
    plat = platform([[1]], resources=("cores",))
    wait = CPDispatcher(CPConfig(kind=kind, version=1, objective="wait"))
    res = simulate(one_core_pair(), plat, wait)
    assert res.jobs["start"].tolist() == [0, 1000]
    slow = CPDispatcher(CPConfig(kind=kind, version=3))
    res = simulate(one_core_pair(), plat, slow)
    assert res.jobs["start"].tolist() == [100, 0]
    assert res.summary["dispatcher_stats"]["statuses"] == {"OPTIMAL": 1}


def test_late_jobs_and_makespan_objectives() -> None:
    """Number of late jobs: only the short job can still start before its ewt; makespan
    on two cores: the long job must start at once."""
    plat = platform([[1]], resources=("cores",))
    wl = Workload.from_columns(
        submit=[0, 0], runtime=[5000, 100], walltime=[5000, 100], units=[1, 1],
        req={"cores": [1, 1]}, queue=["debug", "debug"], queues={"debug": 3600})
    res = simulate(wl, plat, CPDispatcher(CPConfig(kind="hcp", version=1, objective="late")))
    assert res.jobs["start"].tolist() == [100, 0]  # one late job instead of two
    plat2 = platform([[2]], resources=("cores",))
    wl2 = Workload.from_columns(
        submit=[0, 0, 0], runtime=[100, 100, 300], walltime=[100, 100, 300], units=[1, 1, 1],
        req={"cores": [1, 1, 1]})
    res = simulate(wl2, plat2, CPDispatcher(CPConfig(kind="pcp", version=1,
                                                      objective="makespan")))
    assert res.jobs["start"].tolist()[2] == 0
    assert res.summary["makespan"] == 300


def test_composite_objective_respects_bounds() -> None:
    """Makespan primary with weighted tardiness bounded by its optimum: still valid and
    at least as good in tardiness as the pure makespan model here."""
    wl = thesis_jobs([600, 60, 720, 600], gpus=[0, 2, 2, 1], mics=[2, 0, 0, 0])
    cfg = CPConfig(kind="hcp", version=1, objective="makespan", bounded=("tardiness", "late"))
    res = simulate(wl, thesis_nodes(), CPDispatcher(cfg))
    assert res.summary["dispatcher_stats"]["errors"] == 0
    assert res.summary["makespan"] == 1380
