"""The thesis's searches around the job-based heuristic (§6.7): Multi-Search,
Relaxation-Search and Delay-Search, with limits and statistics.

- **Multi-Search** (Alg. 6): the heuristic once per ordering — the 11 criteria of §6.7.1,
  each increasing and decreasing (:data:`ORDERINGS`, 22 runs; an ordering identical to an
  earlier one reuses its plan) — best plan by profit.
- **Relaxation-Search** (Eq. 6.5): from the Multi-Search's best plan, the multi-unit jobs
  keep their nodes, and CP-SAT (:mod:`.model`) improves the rest — other nodes for the
  one-unit jobs, other starts for every job — from the best plan as a complete hint; with
  ``strict`` the model requires a strictly better objective (the thesis's bound).
- **Delay-Search** (Alg. 7): from the Multi-Search's best plan and ordering, delays one job
  at a time — from the last of the ordering backwards (the thesis, after its first
  descent) — raising its earliest start by ``delay`` slots per iteration until the
  horizon, keeping the best plan found. Alg. 5 places the jobs before it in the ordering
  before it (its delay cannot move them), and the jobs after it are already delayed and
  pinned to the best plan; here they keep their *nodes* as well as their starts (the
  thesis pins starts only and lets the solver re-choose nodes), so an iteration re-places
  one job on a copy of the best plan's grid and re-prices the segments it touches
  (:class:`~dispatchlab.dispatchers.offline_plan.planner.objective.IncrementalProfit`):
  milliseconds instead of a
  whole heuristic run.

**Limits and reproducibility**: every search takes :class:`Limits`. ``runs`` (heuristic
runs or delay iterations) and ``cp_det_time`` (CP-SAT deterministic time, one worker,
fixed seed) give bit-identical results; ``time_s`` (wall clock) is a safety net that makes
a search stop where the machine's speed puts it (the result records whether it fired).
Statistics: heuristic runs, solutions improving the best, best profit over time, time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.dispatchers.cp.config import SearchConfig
from dispatchlab.dispatchers.cp.search import search as cp_search
from dispatchlab.dispatchers.offline_plan.planner.heuristic import FreeGrid, Schedule, heuristic
from dispatchlab.dispatchers.offline_plan.planner.instance import PlanInstance
from dispatchlab.dispatchers.offline_plan.planner.model import build_model
from dispatchlab.dispatchers.offline_plan.planner.objective import (
    IncrementalProfit,
    ProfitModel,
    evaluate,
)
from dispatchlab.dispatchers.offline_plan.planner.plan import Alloc, Plan
from dispatchlab.errors import ConfigError
from dispatchlab.seeds import check_seed

SEARCHES = ("heuristic", "multi", "relax", "delay")


def _job_profit(inst: PlanInstance, pm: ProfitModel) -> FloatArray:
    """A job's gain K1 · core-hours (thesis's "job profit" of orderings 9–11)."""
    cores = (inst.units * inst.cores_per_unit).astype(np.float64)
    return np.maximum(pm.prices.core_hour * cores * inst.duration / 3600.0, 1e-12)


def _keys(inst: PlanInstance, pm: ProfitModel) -> dict[str, tuple[FloatArray, ...]]:
    """Per criterion, its sort keys (main first)."""
    cores_unit = inst.cores_per_unit.astype(np.float64)
    total = (inst.units * inst.cores_per_unit).astype(np.float64)
    dur = inst.duration.astype(np.float64)
    ratio = inst.power / _job_profit(inst, pm)
    return {
        "est": (inst.submit.astype(np.float64),),
        "duration": (dur,),
        "lst": (inst.lst.astype(np.float64),),
        "units": (inst.units.astype(np.float64),),
        "per-node": (cores_unit,),
        "total": (total,),
        "total-x-duration": (total * dur,),
        "power": (inst.power,),
        "power-per-profit": (ratio,),
        "power-per-profit,duration-inc": (ratio, dur),
        "power-per-profit,duration-dec": (ratio, -dur),
    }


#: The 11 criteria of thesis §6.7.1 (each used increasing and decreasing).
CRITERIA = ("est", "duration", "lst", "units", "per-node", "total", "total-x-duration",
            "power", "power-per-profit", "power-per-profit,duration-inc",
            "power-per-profit,duration-dec")
#: The 22 orderings of Multi-Search: ``criterion:inc`` / ``criterion:dec``.
ORDERINGS = tuple(f"{c}:{d}" for c in CRITERIA for d in ("inc", "dec"))


def ordering(inst: PlanInstance, pm: ProfitModel, name: str) -> IntArray:
    """Instance positions in ordering ``name`` (``criterion:inc|dec``); ties by
    submission, then position (stable). For the two tie-broken criteria only the main
    key is reversed by ``dec``."""
    crit, _, direction = name.partition(":")
    keys = _keys(inst, pm)
    if crit not in keys or direction not in ("inc", "dec"):
        raise ConfigError(f"unknown ordering '{name}' (known: {', '.join(ORDERINGS)})",
                          field="ordering")
    main, *ties = keys[crit]
    sign = 1.0 if direction == "inc" else -1.0
    # np.lexsort sorts by the last key first
    cols = [np.arange(len(inst)), inst.submit, *reversed(ties), sign * main]
    return np.lexsort(cols).astype(np.int64)


@dataclass(frozen=True)
class Limits:
    """``runs``: heuristic runs (Multi) or delay iterations (Delay); ``cp_det_time``:
    CP-SAT deterministic time (Relaxation); ``time_s``: wall-clock safety net per search."""

    runs: int | None = None
    time_s: float | None = None
    cp_det_time: float = 5.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.runs is not None and self.runs < 1:
            raise ConfigError(f"runs must be ≥ 1, got {self.runs}", field="runs")
        if self.time_s is not None and not self.time_s > 0:
            raise ConfigError(f"time limit must be > 0 s, got {self.time_s}", field="time")
        if not self.cp_det_time > 0:
            raise ConfigError(f"CP deterministic time must be > 0, got {self.cp_det_time}",
                              field="cp_det_time")
        check_seed(self.seed)


@dataclass
class SearchResult:
    """Best schedule found and the statistics of the search."""

    schedule: Schedule
    profit: float
    figures: dict[str, float]
    order: IntArray
    stats: dict[str, Any] = field(default_factory=dict)

    def plan(self, inst: PlanInstance) -> Plan:
        """The best schedule as a :class:`Plan` with profit and statistics."""
        return self.schedule.to_plan(inst, self.profit, {**self.stats,
                                                          "figures": self.figures})


class _Trace:
    """Best profit over time and the limits' bookkeeping."""

    def __init__(self, limits: Limits):
        self.t0 = time.perf_counter()
        self.limits = limits
        self.best_over_time: list[tuple[float, float]] = []
        self.solutions = 0
        self.improvements = 0
        self.wall_limit_hit = False

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def out_of_time(self) -> bool:
        if self.limits.time_s is not None and self.elapsed() >= self.limits.time_s:
            self.wall_limit_hit = True
        return self.wall_limit_hit

    def record(self, profit: float) -> None:
        self.improvements += 1
        self.best_over_time.append((round(self.elapsed(), 4), profit))

    def stats(self) -> dict[str, Any]:
        return {"solutions": self.solutions, "improvements": self.improvements,
                "best_over_time": self.best_over_time, "time_s": round(self.elapsed(), 4),
                "wall_limit_hit": self.wall_limit_hit}


def run_heuristic(inst: PlanInstance, pm: ProfitModel, order_name: str = "est:inc"
                  ) -> SearchResult:
    """Alg. 5 once, in one ordering."""
    trace = _Trace(Limits())
    order = ordering(inst, pm, order_name)
    sched = heuristic(inst, order)
    assert sched is not None
    figs = evaluate(sched.to_plan(inst), pm)
    trace.solutions = 1
    trace.record(figs["profit"])
    return SearchResult(sched, figs["profit"], figs, order,
                        {"search": "heuristic", "ordering": order_name, **trace.stats()})


def multi_search(inst: PlanInstance, pm: ProfitModel, limits: Limits = Limits(),
                 orderings: tuple[str, ...] = ORDERINGS) -> SearchResult:
    """Alg. 6: the heuristic in each ordering, best by profit (first best on ties)."""
    trace = _Trace(limits)
    best: SearchResult | None = None
    per_order: dict[str, float] = {}
    seen: dict[bytes, str] = {}
    for k, name in enumerate(orderings):
        if (limits.runs is not None and trace.solutions >= limits.runs) or (
                k and trace.out_of_time()):
            break
        order = ordering(inst, pm, name)
        key = order.tobytes()
        if key in seen:  # an ordering equal to an earlier one: the same plan
            per_order[name] = per_order[seen[key]]
            continue
        seen[key] = name
        sched = heuristic(inst, order)
        assert sched is not None
        figs = evaluate(sched.to_plan(inst), pm)
        trace.solutions += 1
        per_order[name] = figs["profit"]
        if best is None or figs["profit"] > best.profit:
            best = SearchResult(sched, figs["profit"], figs, order, {"ordering": name})
            trace.record(figs["profit"])
    assert best is not None
    best.stats = {"search": "multi", "ordering": best.stats["ordering"],
                  "per_ordering": per_order, **trace.stats()}
    return best


def relaxation_search(inst: PlanInstance, pm: ProfitModel, limits: Limits = Limits(),
                      start: SearchResult | None = None, strict: bool = False,
                      extra_nodes: int = 4, window_s: int | None = None) -> SearchResult:
    """Eq. 6.5: the multi-unit jobs keep the best plan's nodes; CP-SAT improves the rest
    within ``limits.cp_det_time`` deterministic seconds (one worker, ``limits.seed``).
    A CP solution replaces the best plan only when the evaluator finds it strictly
    better. ``window_s``: solve neighbourhoods instead of the whole chunk
    (:func:`_relax_windows`)."""
    first = start or multi_search(inst, pm, limits)
    if window_s is not None:
        return _relax_windows(inst, pm, limits, first, window_s, extra_nodes)
    trace = _Trace(limits)
    trace.best_over_time = [(0.0, first.profit)]
    fixed = (inst.units > 1).tolist()
    bound = None
    t_build = time.perf_counter()
    built = build_model(inst, pm, first.schedule, fixed_alloc=fixed, extra_nodes=extra_nodes)
    if strict:
        bound = int(np.floor(first.profit * built.scale)) + 1
        built.model.add(built.objective >= bound)
    build_s = time.perf_counter() - t_build
    wall = max(limits.time_s - trace.elapsed(), 1.0) if limits.time_s is not None else 3600.0
    # the CP dispatchers' deterministic budget machinery (dispatchers/cp/search.py): one
    # worker, fixed seed, det-time budget, wall clock only as a safety net; presolve off
    # as the per-node model needs, so every solve runs in a forked child (a native abort
    # of OR-Tools becomes "no improvement" instead of the end of the process)
    cfg = SearchConfig(deterministic=True, delta=limits.cp_det_time,
                       delta_max=limits.cp_det_time, k=1, wall_limit=wall, hint=True,
                       repair_hint=strict, presolve=False)
    result = SearchResult(first.schedule, first.profit, first.figures, first.order)
    trace.solutions = 0
    try:
        outcome = cp_search(built.model, cfg, limits.seed, presolve=False, fixed_search=False)
        status, det_time, cp_wall = outcome.status, outcome.det_time, outcome.wall
        cp_obj = outcome.objective / built.scale if outcome.objective is not None else None
        cp_bound = outcome.bound / built.scale if outcome.bound is not None else None
        trace.wall_limit_hit = outcome.hit_wall_limit
    except Exception as exc:  # a crashed solver child: keep the Multi-Search plan
        status, det_time, cp_wall, cp_obj, cp_bound = f"CRASH: {exc}", 0.0, 0.0, None, None
        outcome = None
    if outcome is not None and outcome.has_solution:
        trace.solutions = 1
        sched = built.read(outcome.solver)
        figs = evaluate(sched.to_plan(inst), pm)
        if figs["profit"] > first.profit:
            result = SearchResult(sched, figs["profit"], figs, first.order)
            trace.record(figs["profit"])
    result.stats = {
        "search": "relax", "ordering": first.stats.get("ordering"), "cp_status": status,
        "cp_objective": cp_obj, "cp_bound": cp_bound, "cp_det_time": det_time,
        "cp_wall_s": cp_wall,
        "build_s": build_s, "strict": strict, "model": built.stats,
        "multi": {k: v for k, v in first.stats.items() if k != "search"},
        **trace.stats(),
    }
    return result


def _cp_improve(built: Any, limits: Limits, wall: float, strict: bool) -> Any:
    """One deterministic CP-SAT run (the CP dispatchers' machinery); the outcome, or
    ``None`` when the solver child crashed."""
    cfg = SearchConfig(deterministic=True, delta=limits.cp_det_time,
                       delta_max=limits.cp_det_time, k=1, wall_limit=wall, hint=True,
                       repair_hint=strict, presolve=False)
    try:
        return cp_search(built.model, cfg, limits.seed, presolve=False, fixed_search=False)
    except Exception:  # a crashed solver child: no improvement
        return None


def _relax_windows(inst: PlanInstance, pm: ProfitModel, limits: Limits, first: SearchResult,
                   window_s: int, extra_nodes: int) -> SearchResult:
    """Relaxation-Search by neighbourhoods (a large-neighbourhood search, as CP
    Optimizer's default search is): for each ``window_s`` slice of the profit window in
    turn, the jobs the best plan starts in it are the model (multi-unit jobs keep their
    nodes); every other job keeps its place and enters as busy capacity and as background
    IT power of the segments. Each neighbourhood gets ``limits.cp_det_time``;
    ``limits.runs`` caps the neighbourhoods solved."""
    trace = _Trace(limits)
    trace.best_over_time = [(0.0, first.profit)]
    best = SearchResult(first.schedule, first.profit, first.figures, first.order)
    step, origin = inst.step, inst.origin
    segs = pm.segments()
    a = np.array([sg.start for sg in segs], dtype=np.int64)
    b = np.array([sg.end for sg in segs], dtype=np.int64)
    solved = 0
    statuses: dict[str, int] = {}
    for lo in range(pm.start, pm.end, window_s):
        if (limits.runs is not None and solved >= limits.runs) or trace.out_of_time():
            break
        starts_s = origin + best.schedule.start * step
        free = np.flatnonzero((starts_s >= lo) & (starts_s < lo + window_s))
        if not len(free):
            continue
        others = np.setdiff1d(np.arange(len(inst)), free)
        busy = list(inst.busy)
        background = np.zeros(len(segs))
        for k in others:
            s0 = int(starts_s[k])
            busy.append((s0, s0 + int(inst.slots[k]) * step,
                         _usage(inst, int(k), best.schedule.alloc[k])))
            e0 = s0 + int(inst.duration[k])
            background += inst.power[k] * np.clip(np.minimum(e0, b) - np.maximum(s0, a), 0,
                                                  None)
        sub = inst.subset(free)
        sub = PlanInstance(**{**sub.__dict__, "busy": tuple(busy)})
        hint = Schedule(best.schedule.start[free].copy(),
                        [best.schedule.alloc[j] for j in free])
        built = build_model(sub, pm, hint, fixed_alloc=(sub.units > 1).tolist(),
                            extra_nodes=extra_nodes, background=background.tolist())
        wall = max(limits.time_s - trace.elapsed(), 1.0) if limits.time_s else 3600.0
        outcome = _cp_improve(built, limits, wall, strict=False)
        solved += 1
        status = "CRASH" if outcome is None else outcome.status
        statuses[status] = statuses.get(status, 0) + 1
        if outcome is None or not outcome.has_solution:
            continue
        trace.solutions += 1
        part = built.read(outcome.solver)
        start = best.schedule.start.copy()
        alloc = list(best.schedule.alloc)
        start[free] = part.start
        for i, j in enumerate(free):
            alloc[j] = part.alloc[i]
        sched = Schedule(start, alloc)
        figs = evaluate(sched.to_plan(inst), pm)
        if figs["profit"] > best.profit:
            best = SearchResult(sched, figs["profit"], figs, first.order)
            trace.record(figs["profit"])
    best.stats = {"search": "relax", "ordering": first.stats.get("ordering"),
                  "window_s": window_s, "neighbourhoods": solved, "cp_status": statuses,
                  "multi": {k: v for k, v in first.stats.items() if k != "search"},
                  **trace.stats()}
    return best


def delay_search(inst: PlanInstance, pm: ProfitModel, limits: Limits = Limits(),
                 start: SearchResult | None = None, delay: int = 60,
                 horizon_slot: int | None = None) -> SearchResult:
    """Alg. 7 (module doc); ``delay`` and ``horizon_slot`` in slots (default horizon: the
    profit window's end)."""
    if delay <= 0:
        raise ConfigError("delay must be ≥ 1 slot", field="delay")
    first = start or multi_search(inst, pm, limits)
    trace = _Trace(limits)
    trace.best_over_time = [(0.0, first.profit)]
    hmax = (-(-(pm.end - inst.origin) // inst.step) if horizon_slot is None
            else horizon_slot)
    slots, units, req, release = inst.slots, inst.units, inst.req, inst.release_slot
    step, origin = inst.step, inst.origin
    best_start = first.schedule.start.copy()
    best_alloc = list(first.schedule.alloc)
    grid = _grid_of(inst, best_start, best_alloc)
    cores = (inst.units * inst.cores_per_unit).astype(np.float64)
    starts_s = origin + best_start * step
    state = IncrementalProfit(pm, starts_s, starts_s + inst.duration, cores, inst.power)
    best_profit = state.profit()
    improved = False
    iterations = 0
    jobs_tried = 0
    stop = False
    for j in (int(x) for x in first.order[::-1]):
        jobs_tried += 1
        lower = int(best_start[j])
        while not stop:
            if (limits.runs is not None and iterations >= limits.runs) or trace.out_of_time():
                stop = True
                break
            lower += delay
            if lower > hmax:
                break
            iterations += 1
            trial = grid.copy()
            trial.take(int(best_start[j]), int(slots[j]), -_usage(inst, j, best_alloc[j]))
            s, room = trial.earliest(max(int(release[j]), lower), int(slots[j]),
                                     int(units[j]), req[j])
            alloc_j = trial.place(s, int(slots[j]), int(units[j]), req[j], room)
            old = origin + int(best_start[j]) * step
            new = origin + s * step
            state.add(j, old, old + int(inst.duration[j]), -1.0)
            state.add(j, new, new + int(inst.duration[j]), 1.0)
            profit = state.profit()
            trace.solutions += 1
            if profit > best_profit:
                best_profit, grid = profit, trial
                best_start[j], best_alloc[j] = s, alloc_j
                improved = True
                trace.record(profit)
                lower = s
            else:  # undo
                state.add(j, new, new + int(inst.duration[j]), -1.0)
                state.add(j, old, old + int(inst.duration[j]), 1.0)
        if stop:
            break
    sched = Schedule(best_start, best_alloc) if improved else first.schedule
    figs = evaluate(sched.to_plan(inst), pm) if improved else first.figures
    best = SearchResult(sched, figs["profit"], figs, first.order)
    best.stats = {"search": "delay", "ordering": first.stats.get("ordering"),
                  "delay_slots": delay, "horizon_slot": hmax, "iterations": iterations,
                  "jobs_delayed": jobs_tried, "all_jobs_done": not stop,
                  "multi": {k: v for k, v in first.stats.items() if k != "search"},
                  **trace.stats()}
    return best


def _usage(inst: PlanInstance, j: int, alloc: Alloc) -> IntArray:
    """Nodes × resources job ``j`` holds under ``alloc``."""
    usage = np.zeros_like(inst.capacity)
    for node, u in alloc:
        usage[node] += u * inst.req[j]
    return usage


def _grid_of(inst: PlanInstance, start: IntArray, alloc: list[Alloc]) -> FreeGrid:
    """The free-capacity grid of a schedule (busy windows included)."""
    grid = FreeGrid(inst.capacity, inst.busy, inst.origin, inst.step,
                    length=int((start + inst.slots).max(initial=1)) + 16)
    for j in range(len(inst)):
        grid.take(int(start[j]), int(inst.slots[j]), _usage(inst, j, alloc[j]))
    return grid


Search = Callable[..., SearchResult]


def run_search(name: str, inst: PlanInstance, pm: ProfitModel, limits: Limits = Limits(),
               **options: Any) -> SearchResult:
    """``heuristic`` | ``multi`` | ``relax`` | ``delay`` by name."""
    if name == "heuristic":
        return run_heuristic(inst, pm, options.get("ordering", "est:inc"))
    if name == "multi":
        return multi_search(inst, pm, limits)
    if name == "relax":
        return relaxation_search(inst, pm, limits, **options)
    if name == "delay":
        return delay_search(inst, pm, limits, **options)
    raise ConfigError(f"unknown search '{name}' (known: {', '.join(SEARCHES)})",
                      field="search")
