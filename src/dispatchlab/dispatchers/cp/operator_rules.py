"""Operator rules in the CP dispatchers (thesis §4.3, eqs. 4.3–4.7).

:func:`apply_rules` attaches a :class:`RuleData` to an instance when ``view.rules`` is set;
the instance, model and dispatcher hooks then ask it for:

- start-time domains: the eligible intervals of each job (queue windows open, queue not
  stopped — a stopped queue's jobs get no start before the stop ends, eq. 4.3);
- reservation blocks: each occurrence within the horizon holds its nodes (minus what the
  running jobs, which the engine let run there, still use) as a fixed interval in the
  cumulatives — pooled for HCP, per node for PCP; PCP also forbids a reserved node to a
  job whose wall-time would run into an occurrence (``p ⇒ o ≤ s − w ∨ o ≥ e``);
- node restrictions: PCP candidates are the queue's nodes;
- heterogeneous jobs (eq. 4.7): components share their start (equalities) and the greedy
  list schedule and the mapper place all components or none;
- a rule-aware greedy list schedule (hint, fallback, optimality witness).

Reservation jobs (eq. 4.4) are left out of the model and started first-fit inside their
reservation, on its nodes, when eligible (:func:`rule_decisions`), as the rule-based
dispatchers do. Every start is checked against ``allowed_nodes`` and ``eligible``.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from dispatchlab.arrays import BoolArray, FloatArray, IntArray
from dispatchlab.dispatchers.allocators import Allocator
from dispatchlab.dispatchers.cp.instance import Instance
from dispatchlab.dispatchers.cp.timeline import Timeline, best_fit, fit_units
from dispatchlab.engine.constraints import Constraints
from dispatchlab.engine.decisions import Start
from dispatchlab.engine.state import SystemView
from dispatchlab.estimates.base import DurationEstimator
from dispatchlab.platform.platform import units_fitting

_FAR = 1 << 62
_MAX_STEPS = 20_000
_MAX_OCC = 64  # occurrences of one standing reservation modelled per decision
_LOOKAHEAD = 8 * 86400  # domains and blocks cover the horizon plus this (seconds)


@dataclass
class Block:
    """Reserved capacity over ``[start, end)`` (relative) of reservation ``res``."""

    res: int
    start: int
    end: int
    usage: IntArray  # nodes × resources: capacity held (pooled: 1 × resources)


@dataclass
class RuleData:
    """The rules as one instance sees them (indices ``k`` are model job positions)."""

    rules: Constraints
    now: int
    pooled: bool
    domains: list[list[tuple[int, int]]]  # per model job: eligible start intervals (rel.)
    groups: dict[int, list[int]]  # model index of a component → its group (model indices)
    blocks: list[Block]
    node_blocks: list[Block]  # per-node usage, also in pooled mode
    limit: int  # domains end here (an interval ending here is open-ended)

    # ---- greedy -------------------------------------------------------------------------

    def timeline(self, inst: Instance, scale: FloatArray) -> Timeline:
        """Free capacity with the running jobs and the reservation blocks."""
        free = inst.free.copy()
        releases: list[tuple[int, IntArray]] = [(b.rem, b.usage) for b in inst.busy]
        for blk in self.blocks:
            if blk.start <= 0:
                free -= blk.usage
            else:
                releases.append((blk.start, -blk.usage))
            releases.append((blk.end, blk.usage))
        return Timeline(free, releases, scale)

    def group(self, k: int) -> list[int]:
        """Model indices starting together with ``k`` (``[k]`` for an ordinary job)."""
        return self.groups.get(k, [k])

    def earliest(self, tl: Timeline, inst: Instance, ks: list[int], before: int | None = None
                 ) -> tuple[int, list[tuple[IntArray, IntArray]]] | None:
        """Earliest relative start (≤ ``before``) at which all of ``ks`` are eligible and
        fit together on the nodes they may use, with their placements."""
        rules, now = self.rules, self.now
        jobs = [inst.jobs[k] for k in ks]
        reqs = [inst.req[j] for j in jobs]
        units = [inst.units[k] for k in ks]

        def place(room: IntArray, t: int) -> list[tuple[IntArray, IntArray]] | None:
            masks = [None if self.pooled else rules.allowed_nodes(j, now + t) for j in jobs]
            return _place_group(room, reqs, units, masks, tl.scale)

        return tl.earliest(max(inst.dur[k] for k in ks), place,
                           before=None if before is None else before + 1,
                           eligibility=_GroupEligibility(self, ks), far=_FAR - now,
                           max_steps=_MAX_STEPS)

    def list_schedule(self, inst: Instance, order: list[int], scale: FloatArray
                      ) -> tuple[dict[int, int], dict[int, tuple[IntArray, IntArray]]]:
        """Serial schedule honouring the rules: each job (whole heterogeneous job) at its
        earliest eligible start on allowed nodes."""
        tl = self.timeline(inst, scale)
        pos = {j: k for k, j in enumerate(inst.jobs)}
        starts: dict[int, int] = {}
        placement: dict[int, tuple[IntArray, IntArray]] = {}
        for j in order:
            if j in starts:
                continue
            ks = self.group(pos[j])
            got = self.earliest(tl, inst, ks)
            if got is None:
                raise ValueError(f"job {j} cannot be scheduled under the rules")
            t, placed = got
            for k, (nodes, counts) in zip(ks, placed, strict=True):
                c = inst.jobs[k]
                tl.reserve(t, inst.dur[k], nodes, counts, inst.req[c])
                starts[c] = t
                placement[c] = (nodes, counts)
        return starts, placement

    def greedy_is_optimal(self, inst: Instance, scale: FloatArray) -> bool:
        """Every job starts at its own earliest rule-aware start on the running jobs only."""
        base: Timeline | None = None
        for k, j in enumerate(inst.jobs):
            s = inst.greedy[j]
            if s == 0 or self.group(k)[0] != k:
                continue
            if base is None:
                base = self.timeline(inst, scale)
            got = self.earliest(base, inst, self.group(k), before=s - 1)
            if got is not None:
                return False
        return True

    def can_start_now(self, inst: Instance) -> bool:
        """Some job (whole heterogeneous job) is eligible and fits its allowed nodes now."""
        base = self.timeline(inst, np.ones(inst.cap.shape[1]))
        return any(self.earliest(base, inst, self.group(k), before=0) is not None
                   for k in range(len(inst.jobs)) if self.group(k)[0] == k)

    # ---- model hooks ----------------------------------------------------------------------

    def start_var(self, m: cp_model.CpModel, k: int, hi: int, name: str) -> cp_model.IntVar:
        """``o_k`` over its eligible intervals within ``[0, hi]`` (thesis: forbidden
        intervals removed from the domain; a stopped queue's jobs cannot start)."""
        spans = [[a, hi if b >= self.limit else min(b, hi)] for a, b in self.domains[k]
                 if a <= hi]
        if not spans:
            spans = [[hi, hi]]  # cannot start within the horizon: the decision filters it
        return m.new_int_var_from_domain(cp_model.Domain.from_intervals(spans), name)

    def link(self, m: cp_model.CpModel, starts: list[cp_model.IntVar]) -> None:
        """Eq. 4.7: the components of a heterogeneous job start at the same instant."""
        for k, ks in self.groups.items():
            if ks[0] == k:
                for c in ks[1:]:
                    m.add(starts[c] == starts[k])

    def pooled_blocks(self, m: cp_model.CpModel, r: int
                      ) -> list[tuple[cp_model.IntervalVar, int]]:
        """Fixed intervals holding resource ``r`` of the reserved nodes (pooled)."""
        out = []
        for b, blk in enumerate(self.blocks):
            v = int(blk.usage[0, r])
            if v > 0:
                iv = m.new_fixed_size_interval_var(max(blk.start, 0), blk.end - max(blk.start, 0),
                                                   f"res{b}_{r}")
                out.append((iv, v))
        return out

    def node_blocks_at(self, m: cp_model.CpModel, n: int, r: int
                       ) -> list[tuple[cp_model.IntervalVar, int]]:
        """Fixed intervals holding resource ``r`` of reserved node ``n`` (per node)."""
        out = []
        for b, blk in enumerate(self.blocks):
            v = int(blk.usage[n, r])
            if v > 0:
                iv = m.new_fixed_size_interval_var(max(blk.start, 0), blk.end - max(blk.start, 0),
                                                   f"res{b}_{n}_{r}")
                out.append((iv, v))
        return out

    def candidates(self, inst: Instance, k: int, nodes: IntArray) -> IntArray:
        """PCP candidates restricted to the nodes of the job's queue."""
        rules = self.rules
        mask = rules.q_mask[rules.queue[inst.jobs[k]]]
        return nodes if mask is None else nodes[mask[nodes]]

    def guard(self, m: cp_model.CpModel, inst: Instance, k: int, n: int,
              p: cp_model.IntVar, o: cp_model.IntVar, hi: int) -> None:
        """A reserved node only if the job's wall-time ends before each occurrence starts
        or the job starts after it ends: ``p ⇒ o ≤ s − w ∨ o ≥ e``."""
        rules = self.rules
        w = rules.walltime[inst.jobs[k]]
        for b, blk in enumerate(self.blocks):
            if not rules.reservations[blk.res].mask[n]:
                continue
            s, e = blk.start, blk.end
            before, after = s - w >= 0, e <= hi
            if not before and not after:
                m.add(p == 0)
            elif not before:
                m.add(o >= e).only_enforce_if(p)
            elif not after:
                m.add(o <= s - w).only_enforce_if(p)
            else:
                side = m.new_bool_var(f"g{k}_{n}_{b}")
                m.add(o <= s - w).only_enforce_if([p, side])
                m.add(o >= e).only_enforce_if([p, side.Not()])


class _GroupEligibility:
    """When all of a group's model jobs may start, in relative time: the first time in
    every member's start domain, and the rules' next change."""

    def __init__(self, data: RuleData, ks: list[int]):
        self.data = data
        self.ks = ks

    def next_eligible(self, t: int) -> int:
        data = self.data
        for _ in range(100):  # a fixpoint over the members' domains
            t2 = max(_next_in(data.domains[k], t, data.limit) for k in self.ks)
            if t2 == t:
                break
            t = t2
        return t

    def next_change(self, t: int) -> int:
        return self.data.rules.next_change(self.data.now + t) - self.data.now


def _place_group(room: IntArray, reqs: list[IntArray], units: list[int],
                 masks: list[BoolArray | None], scale: FloatArray
                 ) -> list[tuple[IntArray, IntArray]] | None:
    """Best-fit placement of every component on what the previous ones left, or None."""
    left = room.copy()
    out = []
    for req, u, mask in zip(reqs, units, masks, strict=True):
        fit = fit_units(left, req)
        if mask is not None:
            fit = fit * mask
        if int(fit.sum()) < u:
            return None
        nodes, counts = best_fit(left, req, fit, u, scale)
        left[nodes] -= counts[:, None] * req[None, :]
        out.append((nodes, counts))
    return out


def _domain(rules: Constraints, job: int, now: int, limit: int) -> list[tuple[int, int]]:
    """Eligible start intervals of a regular job, relative to ``now``, up to ``limit``."""
    out: list[tuple[int, int]] = []
    qt = rules.q_times[rules.queue[job]]
    if qt is None:
        return [(0, limit)]
    t = now
    end = now + limit
    for _ in range(10_000):
        t = rules.next_eligible(job, t)
        if t > end:
            break
        close = _FAR
        for a, _b in qt.stops:
            if a > t:
                close = min(close, a)
        cal = qt.windows
        if cal is not None:
            cal.is_open(t)  # extends the calendar past t
            i = bisect_right(cal.opens, t) - 1
            close = min(close, cal.closes[i])
        close = min(close, end + 1)
        out.append((t - now, close - 1 - now))
        if close > end:
            break
        t = close
    return out


def apply_rules(inst: Instance, view: SystemView, est: DurationEstimator) -> None:
    """Restrict ``inst`` to what the model plans under ``view.rules`` and attach the rules.

    Leaves out reservation jobs (started inside their reservation by the decision), jobs
    that can never start, and heterogeneous jobs with a component outside the model.
    """
    rules = view.rules
    assert rules is not None
    now = inst.now
    keep: list[int] = []
    jobs_set = set(inst.jobs)
    for k, j in enumerate(inst.jobs):
        if rules.job_res[j] >= 0 or rules.next_eligible(j, now) >= _FAR:
            continue
        lead = rules.group_of.get(j)
        if lead is not None and not all(c in jobs_set for c in rules.components[lead]):
            continue
        keep.append(k)
    if len(keep) < len(inst.jobs):
        inst.dropped += len(inst.jobs) - len(keep)
        inst.jobs = [inst.jobs[k] for k in keep]
        inst.dur = [inst.dur[k] for k in keep]
        inst.wait0 = [inst.wait0[k] for k in keep]
        inst.ewt = [inst.ewt[k] for k in keep]
        inst.units = [inst.units[k] for k in keep]
    fixed = [(j, d) for j, d in zip(inst.fixed, inst.fixed_dur, strict=True)
             if rules.job_res[j] < 0]
    inst.fixed = [j for j, _ in fixed]
    inst.fixed_dur = [d for _, d in fixed]
    pos = {j: k for k, j in enumerate(inst.jobs)}
    groups: dict[int, list[int]] = {}
    for comps in rules.components.values():
        ks = [pos[c] for c in comps if c in pos]
        if len(ks) == len(comps) and len(ks) > 1:
            for k in ks:
                groups[k] = ks
    limit = inst.horizon + _LOOKAHEAD
    domains = [_domain(rules, j, now, limit) for j in inst.jobs]
    node_blocks = _blocks(rules, view, est, now, limit)
    blocks = node_blocks
    if inst.pooled:
        blocks = [Block(b.res, b.start, b.end, b.usage.sum(axis=0, keepdims=True))
                  for b in node_blocks]
    _cut_reserved(inst, view, domains, node_blocks)
    inst.rules = RuleData(rules, now, inst.pooled, domains, groups, blocks, node_blocks, limit)


def _cut_reserved(inst: Instance, view: SystemView, domains: list[list[tuple[int, int]]],
                  blocks: list[Block]) -> None:
    """A job that cannot fit outside a reservation's nodes cannot start while its
    wall-time would run into an occurrence: ``o ∉ (s − w, e)`` (both models; for HCP the
    pooled cumulative cannot see which nodes a job uses)."""
    rules = view.rules
    assert rules is not None
    cap = view.capacity
    for k, j in enumerate(inst.jobs):
        w = rules.walltime[j]
        qmask = rules.q_mask[rules.queue[j]]
        units = int(view.jobs.units[j])
        for blk in blocks:
            res = rules.reservations[blk.res]
            usable = ~res.mask if qmask is None else qmask & ~res.mask
            fit = int(units_fitting(cap[usable], view.req[j]).sum()) if usable.any() else 0
            if fit < units:
                domains[k] = _cut(domains[k], blk.start - w + 1, blk.end - 1)


def _cut(spans: list[tuple[int, int]], a: int, b: int) -> list[tuple[int, int]]:
    """``spans`` (inclusive intervals) minus ``[a, b]``."""
    out = []
    for x, y in spans:
        if y < a or x > b:
            out.append((x, y))
            continue
        if x < a:
            out.append((x, a - 1))
        if y > b:
            out.append((b + 1, y))
    return out


def _next_in(spans: list[tuple[int, int]], t: int, limit: int) -> int:
    """The first point ``≥ t`` of ``spans`` (open-ended past ``limit``), else huge."""
    for x, y in spans:
        if y >= limit:
            return max(x, t)
        if t <= y:
            return max(x, t)
    return _FAR


def _blocks(rules: Constraints, view: SystemView, est: DurationEstimator, now: int,
            limit: int) -> list[Block]:
    """Per-node blocks of the reservation occurrences ending after now, starting before
    ``now + limit``: the reserved capacity minus what running jobs there still hold then
    (by their predicted ends), so that blocks and running jobs never exceed a node."""
    out: list[Block] = []
    if not rules.reservations:
        return out
    cap = view.capacity
    running = [(j, max(run.start + est.estimate(j) - now, 1), run)
               for j, run in view.running.items()]
    for r, res in enumerate(rules.reservations):
        k = res.first_ending_after(now)
        for _ in range(_MAX_OCC):
            if k < 0 or not res._k_range(k):
                break
            s, e = res.occurrence(k)
            if s >= now + limit:
                break
            rs = s - now
            usage = np.zeros_like(cap)
            usage[res.nodes] = cap[res.nodes]
            for j, rem, run in running:
                if rem > rs:
                    held = np.zeros_like(cap)
                    held[run.nodes] = run.counts[:, None] * view.req[j][None, :]
                    usage -= np.where(res.mask[:, None], held, 0)
            out.append(Block(r, rs, e - now, np.maximum(usage, 0)))
            if res.period is None:
                break
            k += 1
    return out


# ---- decisions ------------------------------------------------------------------------------


def _place(alloc: Allocator, free: IntArray, req: IntArray, units: int,
           mask: BoolArray | None) -> tuple[IntArray, IntArray] | None:
    room = free if mask is None else np.where(mask[:, None], free, 0)
    placed = alloc.place(room, req, units)
    if placed is None:
        return None
    nodes, counts = placed
    order = np.argsort(nodes)
    return np.asarray(nodes)[order].astype(np.int64), np.asarray(counts)[order].astype(np.int64)


def _valid(view: SystemView, job: int, nodes: IntArray, counts: IntArray, free: IntArray,
           mask: BoolArray | None) -> bool:
    if len(nodes) == 0 or int(counts.sum()) != int(view.jobs.units[job]) or counts.min() <= 0:
        return False
    if len(nodes) > 1 and not (nodes[1:] > nodes[:-1]).all():
        return False
    if mask is not None and not mask[nodes].all():
        return False
    return not (free[nodes] < counts[:, None] * view.req[job][None, :]).any()


def start_group(view: SystemView, alloc: Allocator, job: int, free: IntArray,
                proposals: dict[int, tuple[IntArray, IntArray]] | None = None
                ) -> list[Start] | None:
    """Starts of ``job`` (every component of a heterogeneous job) now, on the proposed
    placements when valid, else on the allocator's; ``free`` is updated. None if any
    component is not eligible or does not fit (then ``free`` is unchanged)."""
    rules = view.rules
    assert rules is not None
    now = view.now
    lead = rules.group_of.get(job)
    comps = [job] if lead is None else rules.components[lead]
    if not all(rules.eligible(c, now) for c in comps):
        return None
    left = free.copy()
    out: list[Start] = []
    for c in comps:
        mask = rules.allowed_nodes(c, now)
        prop = (proposals or {}).get(c)
        if prop is not None and _valid(view, c, prop[0], prop[1], left, mask):
            nodes, counts = prop
        else:
            placed = _place(alloc, left, view.req[c], int(view.jobs.units[c]), mask)
            if placed is None:
                return None
            nodes, counts = placed
        left[nodes] -= counts[:, None] * view.req[c][None, :]
        out.append(Start(c, nodes.astype(np.int64), counts.astype(np.int64)))
    free[:] = left
    return out


def rule_decisions(view: SystemView, plan: tuple[Instance, dict[int, int], Any, Any] | None,
                   alloc: Allocator, row: dict[str, Any]) -> list[Start]:
    """The starts now under the rules: the plan's jobs starting now (whole heterogeneous
    jobs, allowed nodes only; the arrival order when there is no plan), then the
    reservation jobs that are eligible, first-fit inside their reservation."""
    rules = view.rules
    assert rules is not None
    free = view.free.copy()
    out: list[Start] = []
    done: set[int] = set()
    postponed = 0
    if plan is not None:
        inst, starts, built, solver = plan
        index = {j: k for k, j in enumerate(inst.jobs)}
        for j in inst.jobs:
            if starts.get(j, 1) != 0 or j in done:
                continue
            lead = rules.group_of.get(j)
            comps = [j] if lead is None else rules.components[lead]
            done.update(comps)
            if any(starts.get(c, 1) != 0 for c in comps):
                postponed += 1
                continue
            props: dict[int, tuple[IntArray, IntArray]] = {}
            for c in comps:
                if inst.pooled:
                    continue
                if built is not None and solver is not None and c in index:
                    pairs = [(n, int(solver.value(u))) for n, u in built.units[index[c]]]
                    pairs = [(n, u) for n, u in pairs if u > 0]
                    props[c] = (np.array([n for n, _ in pairs], dtype=np.int64),
                                np.array([u for _, u in pairs], dtype=np.int64))
                elif c in inst.placement:
                    props[c] = inst.placement[c]
            got = start_group(view, alloc, j, free, props)
            if got is None:
                postponed += 1
            else:
                out.extend(got)
    # without a plan: ordinary jobs in arrival order; then, always, the reservation jobs
    for reserved in ((False, True) if plan is None else (True,)):
        for j in view.queue:
            if j in done or (rules.job_res[j] >= 0) != reserved:
                continue
            lead = rules.group_of.get(j)
            done.update([j] if lead is None else rules.components[lead])
            got = start_group(view, alloc, j if lead is None else lead, free)
            if got is not None:
                out.extend(got)
    row["postponed"] = postponed
    return out


def next_wake(view: SystemView) -> int | None:
    """When an idle machine should decide again: now + 1 when a queued job is eligible
    now (the engine wakes the dispatcher at every rule change otherwise)."""
    rules = view.rules
    assert rules is not None
    now = view.now
    best = _FAR
    for j in view.queue:
        best = min(best, rules.next_eligible(j, now))
        if best <= now:
            return now + 1
    return best if best < _FAR else None


__all__ = ["Block", "RuleData", "apply_rules", "next_wake", "rule_decisions", "start_group"]
