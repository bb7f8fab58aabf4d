"""Search control around CP-SAT: budgets, restarts, and failure containment.

One decision = one or more CP-SAT runs. The budget starts at δ and doubles on a restart;
restarts happen only while no solution was found (as in the paper), never after a proven
infeasibility, and stop after ``k`` restarts that changed nothing or once the budget
would exceed δmax. :func:`run_cpsat` is the single place where the solver is called, so
tests can replace it to force time-outs and errors.
"""

from __future__ import annotations

import time
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from ortools.sat.python import cp_model

from dispatchlab.dispatchers.cp.config import SearchConfig
from dispatchlab.dispatchers.cp.guard import AVAILABLE as GUARD_AVAILABLE
from dispatchlab.dispatchers.cp.guard import solve_in_child

OPTIMAL, FEASIBLE = "OPTIMAL", "FEASIBLE"
INFEASIBLE, UNKNOWN, INVALID = "INFEASIBLE", "UNKNOWN", "MODEL_INVALID"


@dataclass
class Outcome:
    """What the search produced; ``solver`` holds the values when there is a solution."""

    status: str
    solver: Any  # reads the solution: a CpSolver or a guard child's Answer (None: none)
    objective: float | None
    bound: float | None
    runs: int
    wall: float
    det_time: float
    hit_wall_limit: bool

    @property
    def has_solution(self) -> bool:
        """OPTIMAL or FEASIBLE."""
        return self.status in (OPTIMAL, FEASIBLE)


#: Whether the solver call being made runs in a guard child (set by :func:`search`).
_GUARDED: ContextVar[bool] = ContextVar("cp_guarded", default=False)


def run_cpsat(model: cp_model.CpModel, solver: cp_model.CpSolver) -> str | tuple[str, Any]:
    """Call CP-SAT and return the status name (the one call site; tests patch it) — or,
    when the search is guarded (``SearchConfig.isolate``), the status name and the forked
    child's answer, which is then read instead of ``solver`` (:mod:`.guard`)."""
    if _GUARDED.get():
        return solve_in_child(model, solver)
    return str(solver.solve(model).name)


def _times(solver: Any) -> tuple[float, float]:
    """Deterministic and wall time of the last run (0 when there is no response)."""
    try:
        return float(solver.deterministic_time), float(solver.wall_time)
    except Exception:  # no response stored (e.g. a patched or failed call)
        return 0.0, 0.0


def wall_cap(cfg: SearchConfig) -> float:
    """Most solver wall time one decision may take, restarts included (seconds)."""
    return cfg.wall_limit if cfg.deterministic else min(cfg.delta_max, cfg.wall_limit)


def parameters(
    solver: cp_model.CpSolver,
    cfg: SearchConfig,
    budget: float,
    seed: int,
    presolve: bool,
    fixed_search: bool,
    wall_left: float | None = None,
) -> None:
    """Set CP-SAT parameters for one run with ``budget`` (deterministic or wall units);
    ``wall_left`` is what remains of the decision's wall cap (default: all of it)."""
    p = solver.parameters
    p.num_workers = cfg.workers
    p.random_seed = seed
    left = wall_cap(cfg) if wall_left is None else max(wall_left, 1e-3)
    if cfg.deterministic:
        p.max_deterministic_time = budget
        if cfg.conflicts_per_unit > 0:  # counts the LP-heavy conflicts det. time misses
            p.max_number_of_conflicts = max(1, round(cfg.conflicts_per_unit * budget))
        p.max_time_in_seconds = left  # safety net: a decision where it fires is counted
    else:
        p.max_time_in_seconds = min(budget, left)
    if cfg.hint and cfg.repair_hint:
        p.repair_hint = True  # off by default: it can abort the process (SearchConfig)
    if cfg.hint and presolve:
        # presolve's dual reductions may cut off the (feasible, non-optimal) greedy hint;
        # CP-SAT then searches from scratch and often ends UNKNOWN after the whole budget
        p.keep_all_feasible_solutions_in_presolve = True
        # without the dual reductions, models of a few equal jobs are left to a search that
        # raises the objective bound one coefficient per conflict (thousands of conflicts
        # deterministic time barely counts); the LP cuts of level 2 close them at once
        p.linearization_level = 2
    if cfg.gap > 0:
        p.relative_gap_limit = cfg.gap
    if not presolve:
        # cpsat.md: PCP stalls in presolve; feasibility jump crashes without presolve
        p.cp_model_presolve = False
        p.cp_model_probing_level = 0
        p.use_feasibility_jump = False
    if fixed_search and cfg.workers == 1:
        p.search_branching = cp_model.FIXED_SEARCH


def guarded(cfg: SearchConfig, presolve: bool) -> bool:
    """Whether solver calls run in a forked child (``SearchConfig.isolate``)."""
    if cfg.isolate is not None:
        return cfg.isolate
    return (cfg.hint and cfg.repair_hint) or cfg.workers > 1 or not presolve


def search(
    model: cp_model.CpModel, cfg: SearchConfig, seed: int, presolve: bool, fixed_search: bool
) -> Outcome:
    """Solve with the restart rules; exceptions propagate to the caller's fallback."""
    budget = cfg.delta
    runs = 0
    unchanged = 0
    best: Any = None  # the CpSolver, or a guard child's Answer
    best_status = UNKNOWN
    wall = det = 0.0
    hit_wall = False
    cap = wall_cap(cfg)
    t0 = time.perf_counter()
    token = _GUARDED.set(guarded(cfg, presolve) and GUARD_AVAILABLE)
    try:
        while True:
            solver = cp_model.CpSolver()
            left = cap - (time.perf_counter() - t0)
            parameters(solver, cfg, budget, seed + runs, presolve, fixed_search, left)
            answer = run_cpsat(model, solver)
            status, reader = answer if isinstance(answer, tuple) else (answer, solver)
            runs += 1
            run_det, _ = _times(reader)
            det += run_det
            elapsed = time.perf_counter() - t0
            if cfg.deterministic and elapsed >= cap * 0.99:
                hit_wall = True
            if status in (OPTIMAL, FEASIBLE):
                best, best_status = reader, status
                break  # the paper restarts only when no solution was found
            if status in (INFEASIBLE, INVALID):
                best_status = status
                break
            unchanged += 1  # no solution again: nothing changed
            budget *= 2
            if unchanged >= cfg.k + 1 or budget > cfg.delta_max or elapsed >= cap * 0.99:
                break
    finally:
        _GUARDED.reset(token)
    wall = time.perf_counter() - t0
    obj = bound = None
    if best is not None:
        obj, bound = best.objective_value, best.best_objective_bound
    return Outcome(best_status, best, obj, bound, runs, wall, det, hit_wall)
