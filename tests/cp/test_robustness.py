"""Every CP decision is valid; time-outs and solver errors fall back; v2 stays feasible."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dispatchlab.dispatchers.cp.dispatcher as cp_dispatcher
import dispatchlab.dispatchers.cp.search as cp_search
from dispatchlab.dispatchers.cp import CPConfig, CPDispatcher
from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.engine.state import SystemView
from dispatchlab.simulation import simulate
from dispatchlab.workload.workload import Workload
from tests.cp.helpers import platform, random_workload

PLAT = [[16, 2, 0, 8192]] * 2 + [[16, 0, 0, 8192]] * 2


@pytest.mark.parametrize("name", ["hcp", "hcp1", "hcp2", "hcp3", "pcp", "pcp1", "pcp2",
                                  "pcp3", "hcp3-heuristic", "pcp3-heuristic", "pcp1-real"])
def test_every_decision_is_valid(name: str) -> None:
    """A busy small machine, kills included; the engine validates every start and the
    audit re-checks the whole schedule."""
    import dispatchlab.dispatchers.cp.presets  # noqa: F401  (registers the presets)

    wl = random_workload(50, seed=3)
    res = simulate(wl, platform(PLAT), get_dispatcher(name), check=True)
    stats = res.summary["dispatcher_stats"]
    assert res.jobs["start"].ge(0).all()
    assert stats["errors"] == 0
    assert stats["invalid_dropped"] == 0
    assert stats["solver_calls"] > 0
    assert set(stats["paths"]) <= {"empty", "no-start", "greedy-optimal", "solver",
                                   "fallback", "infeasible"}


def _greedy_run(kind: str) -> Any:
    wl = random_workload(40, seed=5)
    return simulate(wl, platform(PLAT), CPDispatcher(CPConfig(kind=kind, version=3)))


@pytest.mark.parametrize("kind", ["hcp", "pcp"])
def test_forced_timeouts_fall_back_to_greedy(kind: str, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    """CP-SAT returning UNKNOWN every time: restarts with doubled budgets, then greedy."""
    calls: list[float] = []

    def unknown(model: Any, solver: Any) -> str:
        calls.append(solver.parameters.max_deterministic_time)
        return "UNKNOWN"

    monkeypatch.setattr(cp_search, "run_cpsat", unknown)
    res = _greedy_run(kind)
    stats = res.summary["dispatcher_stats"]
    assert stats["fallbacks"] == stats["solver_calls"] > 0
    assert stats["statuses"] == {"UNKNOWN": stats["solver_calls"]}
    assert calls[:3] == [0.02, 0.04, 0.08]  # δ doubling; k = 2 restarts without change
    assert len(calls) == 3 * stats["solver_calls"]
    assert res.jobs["start"].ge(0).all()


@pytest.mark.parametrize("kind", ["hcp", "pcp"])
def test_forced_solver_errors_fall_back(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception inside the solver (or the model builder) never stops the run."""
    def boom(model: Any, solver: Any) -> str:
        raise RuntimeError("solver crashed")

    monkeypatch.setattr(cp_search, "run_cpsat", boom)
    res = _greedy_run(kind)
    stats = res.summary["dispatcher_stats"]
    assert stats["errors"] == stats["solver_calls"] > 0
    assert stats["statuses"] == {"ERROR": stats["errors"]}
    log = res.summary["dispatcher_stats"]["decision_log"]
    assert any("solver crashed" in (e or "") for e in log["error"])

    def bad_build(*args: Any, **kw: Any) -> Any:
        raise ValueError("bad model")

    monkeypatch.setattr(cp_dispatcher, "build_model", bad_build)
    res2 = _greedy_run(kind)
    assert res2.summary["dispatcher_stats"]["errors"] > 0
    assert res2.jobs["start"].ge(0).all()


def test_fallback_equals_greedy_schedule(monkeypatch: pytest.MonkeyPatch) -> None:
    """With every solve timing out, HCP decides exactly like its greedy list schedule run
    with the solver disabled by an impossible budget of zero solver calls."""
    monkeypatch.setattr(cp_search, "run_cpsat", lambda m, s: "UNKNOWN")
    a = _greedy_run("hcp")
    monkeypatch.setattr(cp_search, "run_cpsat", lambda m, s: "MODEL_INVALID")
    b = _greedy_run("hcp")
    assert b.summary["dispatcher_stats"]["fallbacks"] > 0
    assert a.jobs["start"].tolist() == b.jobs["start"].tolist()


class TenSeconds:
    """A predictor that always says 10 s: every longer running job is underestimated."""

    name = "ten"
    oracle = False

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Nothing to prepare."""

    def estimate(self, job: int) -> int:
        """Always 10 s."""
        return 10

    def observe(self, job: int, runtime: int) -> None:
        """Nothing to learn."""

    def describe(self) -> dict[str, Any]:
        """Name only."""
        return {"name": self.name}


def underestimated() -> Workload:
    """Job A runs 100 s on half the machine; at 50 (predicted end 10 passed) B fits now,
    C needs the whole machine."""
    return Workload.from_columns(
        submit=[0, 50, 50], runtime=[100, 30, 30], walltime=[200, 200, 200],
        units=[1, 1, 1], req={"cores": [4, 4, 8]})


@pytest.mark.parametrize("kind", ["hcp", "pcp"])
def test_v2_keeps_model_feasible_when_running_jobs_overrun(kind: str) -> None:
    """v1: remaining time 10 − 50 < 0 shrinks the horizon, the model is infeasible and B
    waits for A (the paper's weakness). v2: remaining time 1, B starts at once."""
    plat = platform([[8]], resources=("cores",))
    v1 = simulate(underestimated(), plat,
                  CPDispatcher(CPConfig(kind=kind, version=1), estimator=TenSeconds()))
    v2 = simulate(underestimated(), plat,
                  CPDispatcher(CPConfig(kind=kind, version=2), estimator=TenSeconds()))
    s1, s2 = v1.summary["dispatcher_stats"], v2.summary["dispatcher_stats"]
    assert s1["paths"].get("infeasible", 0) >= 1
    assert v1.jobs["start"].tolist()[1] == 100
    assert "infeasible" not in s2["paths"]
    assert v2.jobs["start"].tolist()[1] == 50


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_native_solver_crash_becomes_a_counted_fallback(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """Issue 19: a native crash of CP-SAT (here: the guard child aborts, as OR-Tools does on
    a failed CHECK) costs one greedy decision, counted, not the simulation."""
    import os

    import dispatchlab.dispatchers.cp.guard as guard

    def crash(model: Any, solver: Any) -> dict[str, Any]:
        os.abort()

    monkeypatch.setattr(guard, "child_solve", crash)
    res = _greedy_run("pcp")  # PCP (presolve off) is guarded by default
    stats = res.summary["dispatcher_stats"]
    assert stats["solver_calls"] > 0
    assert stats["solver_crashes"] == stats["solver_calls"] == stats["fallbacks"]
    assert res.jobs["start"].ge(0).all()


def test_guarded_solve_gives_the_in_process_decisions() -> None:
    """The forked child's answer reads exactly like the solver's own; HCP's default
    (presolve on, 1 worker, no hint repair) is not guarded, PCP's is."""
    from dispatchlab.dispatchers.cp.search import guarded

    assert not guarded(CPConfig(kind="hcp").search, presolve=True)
    assert guarded(CPConfig(kind="pcp").search, presolve=False)
    assert guarded(CPConfig(kind="hcp").with_(workers=2).search, presolve=True)
    wl = random_workload(30, seed=8)
    runs = []
    for isolate in (True, False):
        disp = CPDispatcher(CPConfig(kind="pcp", version=3).with_(isolate=isolate))
        res = simulate(wl, platform(PLAT), disp)
        assert res.summary["dispatcher_stats"]["solver_calls"] > 0
        runs.append(res.jobs[["start", "end"]].to_numpy().tolist())
    assert runs[0] == runs[1]
