"""Issue 19, defect 1: a CP run depends only on its inputs and seed, not on machine load.

The budget is CP-SAT deterministic time plus a conflict limit; the wall clock is only a
safety net whose firing is counted and flags the run as not reproducible.
"""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest
from ortools.sat.python import cp_model

import dispatchlab.dispatchers.cp.search as cp_search
from dispatchlab.dispatchers.cp import CPDispatcher
from dispatchlab.dispatchers.cp.config import SearchConfig
from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.simulation import simulate
from dispatchlab.stats.metrics import TIMING_KEYS
from tests.cp.helpers import platform, random_workload

PLAT = [[16, 2, 0, 8192]] * 2 + [[16, 0, 0, 8192]] * 2


def _run(name: str) -> tuple[Any, dict[str, Any]]:
    import dispatchlab.dispatchers.cp.presets  # noqa: F401  (registers the presets)

    res = simulate(random_workload(30, seed=11), platform(PLAT), get_dispatcher(name), seed=4)
    jobs = res.jobs[["start", "end"]].to_numpy().tolist()
    summary = {k: v for k, v in res.summary.items()
               if k not in TIMING_KEYS and k != "dispatcher_stats"}
    return (jobs, summary), res.summary


@pytest.mark.slow
@pytest.mark.parametrize("name", ["hcp3", "pcp1"])
def test_same_run_twice_identical_even_with_a_fast_clock(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same inputs and seed ⇒ same schedule; also when the solver's clock runs 20× faster
    (a machine 20× more loaded): with the old 1 s wall cap as the budget, decisions were
    cut by the clock and the schedule changed with the load."""
    first, summary = _run(name)
    second, _ = _run(name)
    assert first == second
    assert summary["dispatcher_stats"]["solver_calls"] > 0
    assert summary["dispatcher_stats"]["reproducible"] is True
    assert "reproducible" not in summary  # only flagged when false

    real = time.perf_counter
    t0 = real()
    fast = SimpleNamespace(perf_counter=lambda: t0 + 20 * (real() - t0))
    monkeypatch.setattr(cp_search, "time", fast)
    loaded, loaded_summary = _run(name)
    assert loaded_summary["dispatcher_stats"]["wall_limit_hits"] == 0
    assert loaded == first


def test_safety_net_firing_is_counted_and_flagged(monkeypatch: pytest.MonkeyPatch) -> None:
    """A solve that outlives the wall-clock safety net: counted, and the summary (hence
    the experiment store's run.json) says the run is not reproducible."""

    def slow(model: Any, solver: cp_model.CpSolver) -> str:
        time.sleep(solver.parameters.max_time_in_seconds)
        return "UNKNOWN"

    monkeypatch.setattr(cp_search, "run_cpsat", slow)
    disp = CPDispatcher(get_dispatcher("hcp3").config.with_(wall_limit=0.01))  # type: ignore[attr-defined]
    res = simulate(random_workload(12, seed=2), platform(PLAT), disp)
    stats = res.summary["dispatcher_stats"]
    assert stats["wall_limit_hits"] > 0
    assert stats["fallbacks"] == stats["solver_calls"]
    assert res.summary["reproducible"] is False
    assert res.summary["wall_limit_hits"] == stats["wall_limit_hits"]


def test_paper_presets_are_flagged_wall_clock() -> None:
    """``-paper`` presets use wall-clock budgets by definition: never reproducible."""
    import dispatchlab.dispatchers.cp.presets  # noqa: F401

    disp = get_dispatcher("hcp3-paper")
    assert disp.config.search.deterministic is False  # type: ignore[attr-defined]
    res = simulate(random_workload(6, seed=1), platform(PLAT),
                   CPDispatcher(disp.config.with_(delta=0.05, delta_max=0.05)))  # type: ignore[attr-defined]
    assert res.summary["reproducible"] is False


def test_default_budget_is_deterministic_work() -> None:
    """Defaults: deterministic time + a conflict limit, 1 worker; the wall cap is a
    safety net well above any budget (10 s)."""
    cfg = SearchConfig()
    solver = cp_model.CpSolver()
    cp_search.parameters(solver, cfg, 0.04, 7, presolve=True, fixed_search=False)
    p = solver.parameters
    assert cfg.deterministic and p.num_workers == 1 and p.random_seed == 7
    assert p.max_deterministic_time == pytest.approx(0.04)
    assert p.max_number_of_conflicts == 4000
    assert p.max_time_in_seconds >= 10.0
