"""Regression checks for the decision-time bound: no solver call runs past its budget.

``data/repair_hint_stall.pbtxt`` is a 3-job HCP model from Eurora batch
``hist_1000_20140331_145005`` (t = 88523): with ``repair_hint=True`` CP-SAT 9.15 spent
the whole 1 s wall-clock safety limit on it while reporting 0.009 deterministic units,
and ended worse than its own (optimal) hint. With the default search settings it is
solved to optimality in a few milliseconds.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from ortools.sat.python import cp_model

import dispatchlab.dispatchers.cp.search as cp_search
from dispatchlab.dispatchers.cp.config import SearchConfig

STALL = Path(__file__).parent / "data" / "repair_hint_stall.pbtxt"
#: 20-job HCP model (batch hist_1000_20140331_151058, t = 83186): presolve's dual
#: reductions made the greedy hint infeasible; 0.02 units then ended UNKNOWN (3 runs,
#: 1 s wall cap) unless presolve keeps all feasible solutions.
DROPS_HINT = Path(__file__).parent / "data" / "presolve_drops_hint.pbtxt"
#: 4 equal jobs (same batch, an earlier decision): once presolve keeps every feasible
#: solution, the search proved the bound one objective step per conflict (2 s for
#: 0.005 units) unless linearization level 2 adds its cuts.
STEPPING = Path(__file__).parent / "data" / "bound_stepping.pbtxt"


def _stall_model(path: Path = STALL) -> cp_model.CpModel:
    model = cp_model.CpModel()
    model.proto.parse_text_format(path.read_text())
    return model


def _hint_objective(model: cp_model.CpModel) -> int:
    proto = model.proto
    hint = dict(zip(proto.solution_hint.vars, proto.solution_hint.values, strict=True))
    obj = proto.objective
    return sum(c * hint[v] for v, c in zip(obj.vars, obj.coeffs, strict=True))


@pytest.mark.parametrize("path", [STALL, STEPPING], ids=["repair-hint", "bound-stepping"])
def test_default_search_solves_the_stall_models_fast(path: Path) -> None:
    """Default parameters: optimal (= the hint here), far below the δ wall equivalent."""
    model = _stall_model(path)
    cfg = SearchConfig()
    t0 = time.perf_counter()
    out = cp_search.search(model, cfg, seed=1826701614, presolve=True, fixed_search=False)
    wall = time.perf_counter() - t0
    assert out.has_solution
    assert out.objective is not None and out.objective <= _hint_objective(model)
    assert not out.hit_wall_limit
    assert wall < 0.25, f"3-job model took {wall:.3f} s (repair_hint stall is back?)"


def test_presolve_keeps_the_hint_feasible() -> None:
    """The greedy hint survives presolve: the first run already has a solution at least
    as good as the hint (before the fix: UNKNOWN, 3 runs, the whole wall cap)."""
    model = _stall_model(DROPS_HINT)
    out = cp_search.search(model, SearchConfig(), seed=1826701614, presolve=True,
                           fixed_search=False)
    assert out.has_solution and out.runs == 1
    assert out.objective is not None and out.objective <= _hint_objective(model)
    assert not out.hit_wall_limit


@pytest.mark.parametrize(
    ("repair", "presolve", "expected"),
    [(False, True, False), (False, False, False), (True, True, True), (True, False, True)],
)
def test_repair_hint_only_on_request(repair: bool, presolve: bool, expected: bool) -> None:
    """Hint repair is off unless asked for: it can abort the process in OR-Tools 9.15."""
    solver = cp_model.CpSolver()
    cfg = SearchConfig(repair_hint=repair)
    cp_search.parameters(solver, cfg, 0.02, 0, presolve=presolve, fixed_search=False)
    assert solver.parameters.repair_hint == expected
    assert SearchConfig().repair_hint is False


@pytest.mark.parametrize("deterministic", [True, False])
def test_wall_cap_covers_all_restarts(deterministic: bool, monkeypatch: pytest.MonkeyPatch
                                      ) -> None:
    """A solver that always uses its whole time limit and finds nothing: the restarts
    together stay within the decision's wall cap (wall_limit; δmax in wall-clock mode)."""
    limits: list[float] = []

    def slow_unknown(model: Any, solver: cp_model.CpSolver) -> str:
        limit = solver.parameters.max_time_in_seconds
        limits.append(limit)
        time.sleep(limit)
        return "UNKNOWN"

    monkeypatch.setattr(cp_search, "run_cpsat", slow_unknown)
    if deterministic:
        cfg = SearchConfig(delta=0.02, delta_max=0.32, wall_limit=0.15)
    else:
        cfg = SearchConfig(deterministic=False, delta=0.05, delta_max=0.15, wall_limit=1.0)
    t0 = time.perf_counter()
    out = cp_search.search(cp_model.CpModel(), cfg, seed=0, presolve=True, fixed_search=False)
    wall = time.perf_counter() - t0
    assert out.status == "UNKNOWN"
    assert wall <= cp_search.wall_cap(cfg) + 0.05
    assert len(limits) >= 1
