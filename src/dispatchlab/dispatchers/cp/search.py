"""Search control around CP-SAT: budgets, restarts, and failure containment.

One decision = one or more CP-SAT runs. The budget starts at δ and doubles on a restart;
restarts happen only while no solution was found (as in the paper), never after a proven
infeasibility, and stop after ``k`` restarts that changed nothing or once the budget
would exceed δmax. :func:`run_cpsat` is the single place where the solver is called, so
tests can replace it to force time-outs and errors.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ortools.sat.python import cp_model

from dispatchlab.dispatchers.cp.config import SearchConfig

OPTIMAL, FEASIBLE = "OPTIMAL", "FEASIBLE"
INFEASIBLE, UNKNOWN, INVALID = "INFEASIBLE", "UNKNOWN", "MODEL_INVALID"


@dataclass
class Outcome:
    """What the search produced; ``solver`` holds the values when there is a solution."""

    status: str
    solver: cp_model.CpSolver | None
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


def run_cpsat(model: cp_model.CpModel, solver: cp_model.CpSolver) -> str:
    """Call CP-SAT and return the status name (the one call site; tests patch it)."""
    return str(solver.solve(model).name)


def _times(solver: cp_model.CpSolver) -> tuple[float, float]:
    """Deterministic and wall time of the last run (0 when there is no response)."""
    try:
        return float(solver.deterministic_time), float(solver.wall_time)
    except Exception:  # no response stored (e.g. a patched or failed call)
        return 0.0, 0.0


def parameters(
    solver: cp_model.CpSolver,
    cfg: SearchConfig,
    budget: float,
    seed: int,
    presolve: bool,
    fixed_search: bool,
) -> None:
    """Set CP-SAT parameters for one run with ``budget`` (deterministic or wall units)."""
    p = solver.parameters
    p.num_workers = cfg.workers
    p.random_seed = seed
    if cfg.deterministic:
        p.max_deterministic_time = budget
        p.max_time_in_seconds = cfg.wall_limit
    else:
        p.max_time_in_seconds = min(budget, cfg.wall_limit)
    if cfg.hint:
        p.repair_hint = True
    if cfg.gap > 0:
        p.relative_gap_limit = cfg.gap
    if not presolve:
        # cpsat.md: PCP stalls in presolve; feasibility jump crashes without presolve
        p.cp_model_presolve = False
        p.cp_model_probing_level = 0
        p.use_feasibility_jump = False
    if fixed_search and cfg.workers == 1:
        p.search_branching = cp_model.FIXED_SEARCH


def search(
    model: cp_model.CpModel, cfg: SearchConfig, seed: int, presolve: bool, fixed_search: bool
) -> Outcome:
    """Solve with the restart rules; exceptions propagate to the caller's fallback."""
    budget = cfg.delta
    runs = 0
    unchanged = 0
    best: cp_model.CpSolver | None = None
    best_status = UNKNOWN
    wall = det = 0.0
    hit_wall = False
    t0 = time.perf_counter()
    while True:
        solver = cp_model.CpSolver()
        parameters(solver, cfg, budget, seed + runs, presolve, fixed_search)
        status = run_cpsat(model, solver)
        runs += 1
        run_det, run_wall = _times(solver)
        det += run_det
        if cfg.deterministic and run_wall >= cfg.wall_limit * 0.99:
            hit_wall = True
        if status in (OPTIMAL, FEASIBLE):
            best, best_status = solver, status
            break  # the paper restarts only when no solution was found
        if status in (INFEASIBLE, INVALID):
            best_status = status
            break
        unchanged += 1  # no solution again: nothing changed
        budget *= 2
        elapsed = time.perf_counter() - t0
        if unchanged >= cfg.k + 1 or budget > cfg.delta_max or elapsed >= cfg.wall_limit:
            break
    wall = time.perf_counter() - t0
    obj = bound = None
    if best is not None:
        obj, bound = best.objective_value, best.best_objective_bound
    return Outcome(best_status, best, obj, bound, runs, wall, det, hit_wall)
