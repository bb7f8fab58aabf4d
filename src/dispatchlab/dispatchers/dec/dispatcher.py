"""DEC and DEC-feedback (Borghesi et al. 2015 §5): relaxed CP schedule + mapper, under a cap.

At each decision point:

1. **Schedule** (relaxed): an HCP-style CP-SAT model on pooled resources (one cumulative per
   resource type) plus power as one more pooled cumulative (``dec_power``: active power
   only, cheapest nodes, linear; a time-varying cap announced in advance as padding
   intervals). Objective, as the paper's eq. (2): the weighted queue time
   ``Σ (max ewt / ewt_i)(s_i − q_i)``. The greedy priority list schedule on the same
   relaxed resources (PRB's order) is the complete hint and the fallback.
2. **Map** (``dec_mapper``): the jobs the schedule starts now are placed on real nodes in
   priority order, PRB's node order, the cap checked with idle power; what does not fit
   waits for the next decision point.
3. **Feedback** (``dec-feedback``, up to ``feedback`` iterations): the whole plan is mapped
   step by step; each step where the mapper postponed a job the CP had started yields a
   conflict set, added as a cumulative of unit demands with capacity ``|set| − 1``, with a
   strictly better objective than the best mapped schedule so far (mapping only delays
   jobs, so a relaxed schedule at or above it cannot map better). Re-solve, re-map, keep
   the best mapped schedule; stop when a solve finds nothing or no new conflict appears.

Budgets are those of the CP dispatchers (``SearchConfig``: deterministic by default;
``-paper``: the paper's 5 s doubling to 60 s of wall clock, not reproducible).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from ortools.sat.python import cp_model

from dispatchlab.dispatchers.allocators import MarginalPowerFirst
from dispatchlab.dispatchers.cp.config import CPConfig
from dispatchlab.dispatchers.cp.dispatcher import CPDispatcher, Plan
from dispatchlab.dispatchers.cp.instance import (
    Instance,
    build_instance,
    can_start_now,
    greedy_is_optimal,
    greedy_schedule,
    priority_order,
    remaining,
)
from dispatchlab.dispatchers.cp.model import (
    Built,
    add_hint,
    build_model,
    true_objective,
    wait_coefficients,
)
from dispatchlab.dispatchers.cp.stats import DecisionLog
from dispatchlab.dispatchers.dec.mapper import Conflict, Machine, Mapped, map_schedule
from dispatchlab.dispatchers.dec.names import DEC_CAPABILITIES, dec_name
from dispatchlab.dispatchers.dec.power import LinearPower, add_power, cap_steps
from dispatchlab.dispatchers.workspace import Workspace
from dispatchlab.engine.decisions import Decision, Start, WakeAt
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError
from dispatchlab.params import Attributes, Parametrized


def dec_cp_config(**changes: Any) -> CPConfig:
    """The CP part of DEC: pooled (HCP) model of every queued job up to ``m`` (the paper
    schedules all waiting jobs; v0 keeps the jobs beyond ``m`` at the horizon's end),
    weighted-wait objective and priority, no warm start from the previous decision."""
    base = CPConfig(kind="hcp", version=0, objective="wait", priority="wait",
                    skip_trivial=True, warm_start=False)
    return base.with_(**changes)


@dataclass(frozen=True)
class DecConfig(Parametrized):
    """``feedback``: iterations of the feedback loop (0: DEC_noFeedBack); ``cp``: model
    size and search control (:class:`CPConfig`)."""

    merged_params = ("cp",)

    feedback: int = 0
    cp: CPConfig = field(default_factory=dec_cp_config)

    def __post_init__(self) -> None:
        if self.feedback < 0:
            raise ConfigError("feedback iterations must be >= 0", field="feedback")
        if self.cp.kind != "hcp":
            raise ConfigError("DEC schedules pooled resources (kind hcp)", field="kind")


class DecLog(DecisionLog):
    """The CP decision log plus DEC's columns."""

    EXTRA = ("solves", "iterations", "conflicts", "feedback_status", "mapped_objective",
             "cap_max", "prb_fallback")

    def __init__(self) -> None:
        super().__init__()
        for c in self.EXTRA:
            self.cols[c] = []

    def add(self, row: dict[str, Any]) -> None:
        """Append one decision (missing columns are None)."""
        super().add(row)
        for c in self.EXTRA:
            self.cols[c].append(row.get(c))

    def summary(self) -> dict[str, Any]:
        """The CP summary plus solves, feedback iterations, conflict sets, PRB fallbacks."""
        out = super().summary()

        def total(name: str) -> int:
            return int(sum(v or 0 for v in self.cols[name]))

        fb = Counter(x for v in self.cols["feedback_status"] if v for x in v.split("+"))
        out.update(solves=total("solves"), feedback_iterations=total("iterations"),
                   conflict_sets=total("conflicts"), feedback_statuses=dict(fb),
                   prb_fallbacks=int(sum(1 for v in self.cols["prb_fallback"] if v)))
        return out


class DecDispatcher(CPDispatcher):
    """DEC (``feedback=0``) or DEC-feedback (see the module docstring)."""

    capabilities = DEC_CAPABILITIES
    #: described as the CP configuration's entries, the feedback iterations, the family
    #: and how the power relaxation and the mapper work
    merged_params = ("config", "dec")
    relaxation_note = ("active power only, cheapest nodes, linear (first-core cost spread "
                       "over the node's cores)")
    mapper_note = "priority order, least marginal power then most loaded node, cap with idle power"
    described_attributes: ClassVar[Attributes] = {
        "family": "capabilities.family", "relaxation": "relaxation_note",
        "mapper": "mapper_note"}

    def __init__(self, dec: DecConfig | None = None, name: str | None = None):
        cfg = dec or DecConfig()
        super().__init__(cfg.cp)
        self.dec = cfg
        self.name = name or dec_name(cfg.feedback, not cfg.cp.search.deterministic)
        self._log = DecLog()
        self._now_starts: list[Start] = []
        self._stuck = False
        self._wake: int | None = None

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """The CP setup, the relaxed power figures and PRB's node order."""
        super().reset(view, rng)
        self._log = DecLog()
        self._power = LinearPower(view)
        self._alloc = MarginalPowerFirst()
        self._alloc.reset(view, rng)
        self._now_starts = []

    def decide(self, view: SystemView, events: Events) -> list[Decision]:
        """DEC's decision; under operator rules, the HCP path (rules, then the cap). When
        nothing runs and the plan starts its first job later (an announced cap rise), the
        dispatcher wakes at that time rather than every second."""
        self._now_starts = []
        self._stuck = False
        self._wake = None
        out = list(super().decide(view, events))
        if self._wake is not None and any(type(d) is WakeAt for d in out):
            out = [d for d in out if type(d) is not WakeAt] + [WakeAt(self._wake)]
        return out

    # ---- the decision ----------------------------------------------------------------
    def _plan(self, view: SystemView, row: dict[str, Any]) -> Plan:
        if view.rules is not None:  # operator rules: HCP's rule-aware path (cap after)
            return super()._plan(view, row)
        cfg = self.config
        assert self._est is not None
        t0 = time.perf_counter()
        inst = build_instance(view, cfg, self._est, self._max_ewt, self._ewt, self._share)
        rem = remaining(view, self._est)
        scale = self._pool_scale
        if view.budget is not None:
            info = add_power(inst, view, self._power, rem, {})
            row["cap_max"] = info["cap_max"]
            scale = np.append(scale, 1.0 / max(info["cap_max"], 1.0))
        row.update(model_jobs=len(inst.jobs), dropped=inst.dropped,
                   intervals=len(inst.jobs) + len(inst.fixed) + len(inst.busy))
        if not inst.jobs:
            row["path"] = "empty"
            return inst, {}, None, None
        greedy_schedule(inst, scale)
        ends = [inst.greedy[j] + d for j, d in zip(inst.jobs, inst.dur, strict=True)]
        inst.horizon = max([inst.horizon, *ends])
        greedy = [inst.greedy[j] for j in inst.jobs]
        row["greedy_objective"] = true_objective(inst, "wait", greedy)
        if not can_start_now(inst):  # the mapper only delays: nothing starts now either
            row["path"] = "no-start"
            self._wake = view.now + min(greedy)
            return inst, {}, None, None
        caps = cap_steps(view)
        full = self.dec.feedback > 0
        built: Built | None = None
        plan = greedy
        row.update(solves=0, runs=0, solve_ms=0.0, det_time=0.0)
        if cfg.trivial_skip and greedy_is_optimal(inst, scale):
            row.update(path="greedy-optimal", objective=row["greedy_objective"])
        else:
            built = self._model(inst, greedy)
            row["build_ms"] = (time.perf_counter() - t0) * 1e3
            plan = self._solve_plan(built, inst, greedy, row)
        machine = Machine(view, self._alloc, rem, caps)
        mapped = map_schedule(machine, inst, plan, full)
        if full and mapped.conflicts:
            if built is None:
                built = self._model(inst, greedy)
            mapped = self._feedback(machine, inst, built, plan, mapped, row)
        row.update(postponed=mapped.postponed_now,
                   mapped_objective=mapped.objective if full else None)
        self._now_starts = mapped.now
        self._stuck = bool(mapped.postponed_now) and not mapped.now
        later = [s for s in (mapped.starts if full else plan) if s > 0]
        if not mapped.now and later:
            self._wake = view.now + min(later)
        return inst, {}, None, None

    def _model(self, inst: Instance, hint: list[int]) -> Built:
        cfg = self.config
        built = build_model(inst, "wait", {}, cfg.candidates, False, cfg.use_priority_search)
        if cfg.search.hint:
            add_hint(built, inst, hint, None)
        return built

    def _solve_plan(
        self, built: Built, inst: Instance, fallback: list[int], row: dict[str, Any]
    ) -> list[int]:
        """One search; its starts, or ``fallback`` (greedy) when it has none or is worse."""
        out = self._search(built)
        row["solves"] += 1
        row["runs"] += out.runs
        row["solve_ms"] += out.wall * 1e3
        row["det_time"] += out.det_time
        row.update(status=out.status, bound=out.bound)
        if out.hit_wall_limit:
            self._log.wall_limit_hits += 1
        if out.has_solution and out.solver is not None:
            starts = [int(out.solver.value(v)) for v in built.starts]
            value = true_objective(inst, "wait", starts)
            if value <= row["greedy_objective"] + 1e-9:
                row.update(path="solver", objective=value)
                return starts
            row.update(path="solver", objective=row["greedy_objective"], kept_greedy=True)
            return fallback
        row.update(path="fallback", fallback=True, objective=row["greedy_objective"])
        return fallback

    def _feedback(
        self,
        machine: Machine,
        inst: Instance,
        built: Built,
        plan: list[int],
        mapped: Mapped,
        row: dict[str, Any],
    ) -> Mapped:
        """Conflict sets and strictly better bounds, up to ``feedback`` re-solves."""
        m = built.model
        coefs = wait_coefficients(inst)
        objective = cp_model.LinearExpr.weighted_sum(built.starts, coefs)
        occ = {j: max(r, 1) for j, r in machine.remaining}
        seen: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
        best, current = mapped, mapped
        iterations = conflicts = 0
        statuses: list[str] = []
        for _ in range(self.dec.feedback):
            new = [c for c in current.conflicts if (c.jobs, c.running) not in seen
                   and len(c.jobs) + len(c.running) >= 2 and c.jobs]
            if not new:
                break
            for c in new:
                seen.add((c.jobs, c.running))
                self._add_conflict(m, inst, built, c, occ)
                conflicts += 1
            bound = sum(w * s for w, s in zip(coefs, best.starts, strict=True)) - 1
            m.add(objective <= bound)
            if self.config.search.hint:
                add_hint(built, inst, plan, None)
            iterations += 1
            got = self._search(built)
            statuses.append(got.status)
            row["solves"] += 1
            row["runs"] += got.runs
            row["solve_ms"] += got.wall * 1e3
            row["det_time"] += got.det_time
            if got.hit_wall_limit:
                self._log.wall_limit_hits += 1
            if not (got.has_solution and got.solver is not None):
                break
            plan = [int(got.solver.value(v)) for v in built.starts]
            current = map_schedule(machine, inst, plan, True)
            if current.objective < best.objective - 1e-9:
                best = current
        row.update(iterations=iterations, conflicts=conflicts,
                   feedback_status="+".join(statuses) or None)
        return best

    @staticmethod
    def _add_conflict(
        m: cp_model.CpModel, inst: Instance, built: Built, c: Conflict, occ: dict[int, int]
    ) -> None:
        """Not all of the set at once: unit demands, capacity |set| − 1."""
        ivs = [m.new_fixed_size_interval_var(built.starts[k], inst.dur[k], f"c{c.time}_{k}")
               for k in c.jobs]
        ivs += [m.new_fixed_size_interval_var(0, occ[j], f"cr{c.time}_{j}") for j in c.running]
        m.add_cumulative(ivs, [1] * len(ivs), len(ivs) - 1)

    # ---- turning the mapping into engine decisions -------------------------------------
    def _starts(self, view: SystemView, plan: Plan, row: dict[str, Any]) -> list[Decision]:
        out: list[Decision] = list(self._now_starts)
        if self._stuck and not view.running:
            # the mapper postponed everything the plan started now, and nothing runs to
            # free anything before the next event: PRB's pass over the queue
            out = self._prb(view)
            row["prb_fallback"] = bool(out)
        return out

    def _last_resort(self, view: SystemView) -> list[Decision]:
        """If the plan failed: PRB's pass over the queue (priority order, cap checked)."""
        return self._prb(view)

    def _prb(self, view: SystemView) -> list[Decision]:
        assert self._est is not None
        queue = list(view.queue)
        dur = {j: max(1, self._est.estimate(j)) for j in queue}
        order = priority_order(view, queue, dur, "wait", self._max_ewt, self._ewt, self._share)
        ws = Workspace(view)
        out: list[Decision] = []
        units = view.jobs.units
        for j in order:
            if not ws.fits_total(j):
                continue
            placed = self._alloc.place(ws.free, view.req[j], int(units[j]))
            if placed is None:
                continue
            nodes, counts = placed
            if ws.power_fits(j, nodes, counts):
                out.append(ws.take(j, nodes, counts))
        return out
