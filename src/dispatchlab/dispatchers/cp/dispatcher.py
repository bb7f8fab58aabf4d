"""The CP dispatchers: HCP (pooled CP schedule + best-fit mapper) and PCP (per-node CP).

At each decision point: build the instance (jobs in priority order, durations from the
estimator), compute the greedy priority list schedule, and call CP-SAT only when the
decision is not already settled — nothing can start now, or every job starts at its own
earliest possible time (then the greedy schedule is optimal). The solver starts from the
greedy schedule as a complete hint. Any solver failure, time-out or invalid model falls
back to the greedy decision; a proven infeasibility (possible in v0/v1 when
underestimated running jobs shrink the horizon) starts nothing, as in the paper.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, ClassVar, TypeAlias

import numpy as np

from dispatchlab.arrays import FloatArray
from dispatchlab.dispatchers.allocators import BestFit
from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.dispatchers.cp.budget_guard import within_budget
from dispatchlab.dispatchers.cp.config import CP_CAPABILITIES, CPConfig
from dispatchlab.dispatchers.cp.instance import (
    Instance,
    build_instance,
    can_start_now,
    greedy_is_optimal,
    greedy_schedule,
    list_schedule,
)
from dispatchlab.dispatchers.cp.model import Built, add_hint, build_model, true_objective
from dispatchlab.dispatchers.cp.operator_rules import apply_rules, next_wake, rule_decisions
from dispatchlab.dispatchers.cp.search import INFEASIBLE, Outcome, search
from dispatchlab.dispatchers.cp.stats import DecisionLog
from dispatchlab.engine.decisions import Decision, Start, WakeAt
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView
from dispatchlab.estimates.accuracy import TrackedEstimator
from dispatchlab.estimates.base import DurationEstimator
from dispatchlab.estimates.registry import get_estimator

#: A decision's plan: the instance, the chosen relative start per job (job → s), and the
#: CP-SAT model and solver whose placements are read (``None``: greedy or no solve).
Plan: TypeAlias = tuple[Instance, dict[int, int], Built | None, Any]

_NOT_COUNTED = ("mem", "memory")  # left out of the "requested/available resources" sizes


def make_estimator(spec: str | DurationEstimator) -> DurationEstimator:
    """An estimator by registered name, or an estimator instance returned as is."""
    if not isinstance(spec, str):
        return spec
    return get_estimator(spec)


class CPDispatcher(BaseDispatcher):
    """PCP or HCP, version 0–3, with a duration estimator (see :class:`CPConfig`)."""

    capabilities = CP_CAPABILITIES
    #: described as the config's entries (resolved defaults included), plus the estimator
    #: object when one is given (a named one is the config's ``estimator``)
    merged_params: ClassVar[tuple[str, ...]] = ("config",)
    omitted_at_default = ("estimator",)

    def __init__(
        self,
        config: CPConfig | None = None,
        estimator: str | DurationEstimator | None = None,
        **changes: Any,
    ) -> None:
        cfg = (config or CPConfig()).with_(**changes)
        if isinstance(estimator, str):
            cfg = cfg.with_(estimator=estimator)
            estimator = None
        self.config = cfg
        self.name = cfg.name
        self.estimator = estimator
        self._log = DecisionLog()
        self._est: TrackedEstimator | None = None

    # ---- run setup -------------------------------------------------------------------
    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Estimator, per-job constants and an empty decision log."""
        self.rng = rng
        self._seed = int(rng.integers(0, 2**31 - 1))
        inner = make_estimator(self.estimator or self.config.estimator)
        self._est = TrackedEstimator(inner)
        self._est.reset(view, rng)
        q_ewt = np.array([max(1, q.ewt) for q in view.jobs.queues] or [3600], dtype=np.int64)
        self._q_ewt = q_ewt
        self._max_ewt = int(q_ewt.max())
        self._ewt: list[int] = []  # per known job: its queue's ewt, its pooled demand share
        self._share: list[float] = []
        top = view.capacity.max(axis=0).astype(np.float64)
        self._node_scale: FloatArray = 1.0 / np.where(top > 0, top, 1.0)
        tot = np.asarray(view.total, dtype=np.float64)
        self._pool_scale: FloatArray = 1.0 / np.where(tot > 0, tot, 1.0)
        self._counted = np.array([r not in _NOT_COUNTED for r in view.platform.resources])
        self._mapper = BestFit()
        self._mapper.reset(view, rng)
        self._started: dict[int, int] = {}
        self._prev_plan: dict[int, int] = {}
        self._log = DecisionLog()

    @property
    def oracle(self) -> bool:
        """True when the duration predictor reads actual run times (``-real`` presets)."""
        est = self.estimator
        if est is not None:
            return bool(getattr(est, "oracle", False))
        return self.config.estimator in ("real", "oracle")

    def _learn_new_jobs(self, view: SystemView) -> None:
        """Per-job constants of the jobs submitted since the last call."""
        k, known = len(self._ewt), view.jobs.known
        if k == known:
            return
        q = np.clip(view.jobs.queue[k:known], 0, len(self._q_ewt) - 1)
        self._ewt.extend(self._q_ewt[q].tolist())
        total = np.asarray(view.total, dtype=np.float64)
        share = (view.demand[k:known] / np.where(total > 0, total, 1.0)).sum(axis=1)
        self._share.extend(share.tolist())

    # ---- the decision ----------------------------------------------------------------
    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        """Start the jobs the CP schedule (or its greedy fallback) starts now."""
        assert self._est is not None, "reset() first"
        self._learn_new_jobs(view)
        now = view.now
        for j in events.finished:
            s = self._started.pop(j, None)
            if s is not None:
                self._est.observe(j, now - s)
        for j in events.aborted:
            self._started.pop(j, None)
        if not view.queue:
            return []
        row: dict[str, Any] = {
            "time": now,
            "queue": len(view.queue),
            "running": len(view.running),
            "fallback": False,
        }
        t0 = time.perf_counter()
        try:
            plan = self._plan(view, row)
        except Exception as exc:  # a dispatcher must never crash the run
            row.update(path="fallback", fallback=True, error=f"{type(exc).__name__}: {exc}")
            plan = None
        out: list[Decision]
        if view.rules is not None:  # operator rules: cp/operator_rules.py checks every start
            out = list(rule_decisions(view, plan, self._mapper, row))
        else:
            out = self._last_resort(view) if plan is None else self._starts(view, plan, row)
        out = within_budget(view, out)  # the CP models do not plan power
        row["started"] = sum(1 for d in out if type(d) is Start)
        row.setdefault("build_ms", (time.perf_counter() - t0) * 1e3)
        self._log.add(row)
        for d in out:
            if type(d) is Start:
                self._started[d.job] = now
        if not view.running and row["started"] == 0:
            wake = now + 1 if view.rules is None else next_wake(view)
            if wake is not None:  # (under rules the engine also wakes us when rules change)
                out.append(WakeAt(max(wake, now + 1)))  # nothing else would wake us up
        return out

    def _plan(self, view: SystemView, row: dict[str, Any]) -> Plan:
        """Instance and starts (job → relative start) chosen by greedy or by CP-SAT."""
        cfg = self.config
        assert self._est is not None
        t0 = time.perf_counter()
        inst = build_instance(view, cfg, self._est, self._max_ewt, self._ewt, self._share)
        if view.rules is not None:
            apply_rules(inst, view, self._est)
        req = view.demand[inst.jobs][:, self._counted] if inst.jobs else np.zeros((0,))
        row.update(
            model_jobs=len(inst.jobs),
            dropped=inst.dropped,
            req_res=int(req.sum()),
            avl_res=int(np.asarray(view.free_total)[self._counted].sum()),
            intervals=len(inst.jobs) + len(inst.fixed) + len(inst.busy),
        )
        if not inst.jobs:
            row["path"] = "empty"
            return inst, {}, None, None
        scale = self._pool_scale if inst.pooled else self._node_scale
        greedy_schedule(inst, scale)
        objective = cfg.objective_name
        greedy_starts = [inst.greedy[j] for j in inst.jobs]
        row["greedy_objective"] = true_objective(inst, objective, greedy_starts)
        if not can_start_now(inst):
            row["path"] = "no-start"
            return inst, {}, None, None
        if any(d > inst.horizon for d in inst.dur):
            # v0/v1 with underestimated running jobs: the horizon is too short for some
            # job, the model has no solution (what CP-SAT would prove): start nothing
            row.update(path="infeasible", status=INFEASIBLE)
            return inst, {}, None, None
        if cfg.trivial_skip and greedy_is_optimal(inst, scale):
            row.update(path="greedy-optimal", objective=row["greedy_objective"])
            return inst, dict(inst.greedy), None, None
        if not inst.pooled and cfg.version >= 1:
            est_optional = len(inst.jobs) * max(cfg.candidates, 1) * 2
        else:
            est_optional = 0 if inst.pooled else len(inst.jobs) * view.capacity.shape[0]
        if est_optional > cfg.max_optional:
            row.update(path="fallback", fallback=True, status="TOO_LARGE")
            return inst, dict(inst.greedy), None, None
        if self.config.warm_start:
            greedy_starts = self._warm(inst, scale, objective, greedy_starts, row)
        try:
            return self._solve(inst, greedy_starts, row, t0)
        except Exception as exc:  # a solver failure must not stop the run
            row.update(
                path="fallback", fallback=True, status="ERROR", error=f"{type(exc).__name__}: {exc}"
            )
            return inst, dict(inst.greedy), None, None

    def _warm(
        self,
        inst: Instance,
        scale: FloatArray,
        objective: str,
        greedy_starts: list[int],
        row: dict[str, Any],
    ) -> list[int]:
        """Warm start: replay the previous decision's order (planned jobs by planned start,
        new jobs after them in priority order) as a list schedule; keep it when it beats
        the priority schedule (it then also serves as the fallback)."""
        prev = self._prev_plan
        if not any(j in prev for j in inst.jobs):
            return greedy_starts
        rank = {j: k for k, j in enumerate(inst.jobs)}
        order = sorted(inst.jobs, key=lambda j: (prev.get(j, 1 << 62), rank[j]))
        if order == inst.jobs:
            return greedy_starts
        starts, placement = list_schedule(inst, order, scale)
        warm = [starts[j] for j in inst.jobs]
        value = true_objective(inst, objective, warm)
        if value < row["greedy_objective"] - 1e-9:
            inst.greedy, inst.placement = starts, placement
            row["warm"] = True
            return warm
        return greedy_starts

    def _solve(
        self, inst: Instance, greedy_starts: list[int], row: dict[str, Any], t0: float
    ) -> Plan:
        """Build the CP-SAT model, search, and read the starts (or fall back)."""
        cfg = self.config
        objective = cfg.objective_name
        bounds = self._bounds(inst)
        built = build_model(
            inst, objective, bounds, cfg.candidates, cfg.version == 0, cfg.use_priority_search
        )
        if cfg.search.hint:
            add_hint(built, inst, greedy_starts, inst.placement)
        row.update(
            intervals=built.n_intervals,
            optional=built.n_optional,
            cumulatives=built.n_cumulatives,
            build_ms=(time.perf_counter() - t0) * 1e3,
        )
        if built.infeasible:
            row.update(path="infeasible", status=INFEASIBLE, runs=0, solve_ms=0.0)
            return inst, {}, None, None
        out = self._search(built)
        row.update(
            status=out.status,
            runs=out.runs,
            solve_ms=out.wall * 1e3,
            det_time=out.det_time,
            bound=out.bound,
        )
        if out.hit_wall_limit:
            self._log.wall_limit_hits += 1
        if out.has_solution and out.solver is not None:
            starts = [int(out.solver.value(v)) for v in built.starts]
            value = true_objective(inst, objective, starts)
            if value > row["greedy_objective"] + 1e-9 and not self.config.bounded:
                # the search ended below its own hint (rounded weights, or the hint was
                # not completed in time): never decide worse than the greedy schedule
                row.update(path="solver", objective=row["greedy_objective"], kept_greedy=True)
                return inst, dict(inst.greedy), None, None
            row.update(path="solver", objective=value)
            now = inst.now
            self._prev_plan = {j: now + s for j, s in zip(inst.jobs, starts, strict=True)}
            return inst, dict(zip(inst.jobs, starts, strict=True)), built, out.solver
        if out.status == INFEASIBLE:
            row["path"] = "infeasible"  # proved: queue everything again (paper)
            return inst, {}, None, None
        row.update(path="fallback", fallback=True)
        return inst, dict(inst.greedy), None, None

    def _search(self, built: Built) -> Outcome:
        cfg = self.config
        return search(
            built.model, cfg.search, self._seed, cfg.use_presolve, cfg.search.fixed_search
        )

    def _bounds(self, inst: Instance) -> dict[str, int]:
        """Thesis composite models: cap each bounded objective at slack × its optimum."""
        cfg = self.config
        out: dict[str, int] = {}
        greedy = [inst.greedy[j] for j in inst.jobs]
        for name in cfg.bounded:
            if name == cfg.objective_name:
                continue
            pure = build_model(
                inst, name, {}, cfg.candidates, cfg.version == 0, cfg.use_priority_search
            )
            if cfg.search.hint:
                add_hint(pure, inst, greedy, inst.placement)
            res = self._search(pure)
            if res.has_solution and res.solver is not None:
                theta = int(res.solver.value(pure.exprs[name]))
                out[name] = int(theta * cfg.bound_slack)
        return out

    # ---- turning a plan into engine decisions -----------------------------------------
    def _starts(self, view: SystemView, plan: Plan, row: dict[str, Any]) -> list[Decision]:
        inst, starts, built, solver = plan
        now_jobs = [j for j in inst.jobs if starts.get(j, 1) == 0]  # priority order
        if not now_jobs:
            return []
        free = view.free.copy()
        req = view.req
        units = view.jobs.units
        out: list[Decision] = []
        postponed = 0
        index = {j: k for k, j in enumerate(inst.jobs)}
        for j in now_jobs:
            if inst.pooled:
                placed = self._mapper.place(free, req[j], int(units[j]))
                if placed is None:
                    postponed += 1  # pooled schedule not realizable on nodes: next time
                    continue
                nodes, counts = placed
                order = np.argsort(nodes)
                nodes, counts = nodes[order], counts[order]
            elif built is not None and solver is not None:
                pairs = [(n, int(solver.value(u))) for n, u in built.units[index[j]]]
                pairs = [(n, c) for n, c in pairs if c > 0]
                nodes = np.array([n for n, _ in pairs], dtype=np.int64)
                counts = np.array([c for _, c in pairs], dtype=np.int64)
            else:
                nodes, counts = inst.placement[j]
            need = counts[:, None] * req[j][None, :]
            if len(nodes) == 0 or (free[nodes] < need).any() or int(counts.sum()) != units[j]:
                self._log.invalid_dropped += 1  # never hand the engine an invalid start
                continue
            free[nodes] -= need
            out.append(Start(j, nodes.astype(np.int64), counts.astype(np.int64)))
        row["postponed"] = postponed
        return out

    def _last_resort(self, view: SystemView) -> list[Decision]:
        """If even the greedy path failed: best-fit in arrival order, nothing clever."""
        free = view.free.copy()
        out: list[Decision] = []
        for j in view.queue:
            placed = self._mapper.place(free, view.req[j], int(view.jobs.units[j]))
            if placed is None:
                continue
            nodes, counts = placed
            order = np.argsort(nodes)
            nodes, counts = nodes[order], counts[order]
            free[nodes] -= counts[:, None] * view.req[j][None, :]
            out.append(Start(j, nodes, counts))
        return out

    # ---- reporting ---------------------------------------------------------------------
    def run_stats(self) -> dict[str, Any]:
        """Decision summary, predictor accuracy and the per-decision log (columns)."""
        stats = self._log.summary()
        # deterministic budgets make a run depend only on its inputs and seed, unless the
        # wall-clock safety net fired (or the paper's wall-clock search control is used)
        stats["reproducible"] = self.config.search.deterministic and not stats[
            "wall_limit_hits"
        ]
        if self._est is not None:
            stats["predictor"] = {"name": self._est.name, **self._est.report()}
        stats["decision_log"] = self._log.table()
        return stats

    def decision_log(self) -> dict[str, list[Any]]:
        """Per-decision statistics of the last run, column-wise."""
        return self._log.table()
