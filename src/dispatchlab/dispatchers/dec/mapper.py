"""DEC's mapper (Borghesi et al. 2015 §5.2): the relaxed CP schedule made real, time step by
time step.

At each time step *t* of the plan (its start times and the predicted ends of what runs), the
jobs the CP schedule starts at *t* — after the jobs postponed at earlier steps — are placed
in priority order on real nodes with the PRB node order (least marginal power, then most
loaded: the ``energy-model`` allocator of ``prb-power``), and each start is checked against
the cap in force at *t* with the machine's exact power (idle nodes included, the engine's
power meter on the planned free capacity). A job that does not fit (nodes or power) is
postponed to the next step. Every step where a job the CP started then had to be postponed
yields a *conflict set*: the jobs the CP schedule runs at *t* (running jobs included), not
all of which can run together (not minimal). Only the first step (now) becomes decisions;
the later ones give the mapped schedule's objective and the conflict sets the feedback
loop (``dec-feedback``) learns from. Durations are the dispatcher's predictions.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from dispatchlab.arrays import IntArray
from dispatchlab.dispatchers.allocators import Allocator
from dispatchlab.dispatchers.cp.instance import Instance
from dispatchlab.dispatchers.cp.model import true_objective
from dispatchlab.dispatchers.dec.power import cap_at
from dispatchlab.engine.budget import EPS, fits_cap
from dispatchlab.engine.decisions import Start
from dispatchlab.engine.state import SystemView


@dataclass
class Conflict:
    """Jobs the CP schedule runs together at ``time`` though the mapper could not."""

    time: int
    jobs: tuple[int, ...]  # model positions (indices into inst.jobs)
    running: tuple[int, ...]  # running jobs (engine indices)


@dataclass
class Mapped:
    """The mapped schedule: relative starts per model position, the starts now."""

    starts: list[int]
    now: list[Start]
    postponed_now: int = 0  # jobs the CP started now that the mapper postponed
    postponed: int = 0  # the same over every step mapped
    conflicts: list[Conflict] = field(default_factory=list)
    objective: float = math.inf
    complete: bool = True  # False: only the first step was mapped


@dataclass(frozen=True)
class Machine:
    """What a plan is mapped on: the system now, the node order (``allocator``), the
    running jobs with their predicted remaining time (``remaining``) and the cap from now
    on (``caps``, :func:`~dispatchlab.dispatchers.dec.power.cap_steps`)."""

    view: SystemView
    allocator: Allocator
    remaining: list[tuple[int, int]]
    caps: list[tuple[int, float]]


def map_schedule(machine: Machine, inst: Instance, plan: list[int], full: bool) -> Mapped:
    """Map ``plan`` (relative starts per model position) on the real machine; ``full``: map
    every step (else only now)."""
    view, allocator = machine.view, machine.allocator
    remaining, caps = machine.remaining, machine.caps
    n = len(inst.jobs)
    req = view.req
    units = view.jobs.units
    meter = view.power_model if view.budget is not None else None
    free = view.free.copy()
    power = float(view.budget.used) if view.budget is not None else 0.0
    ends: list[tuple[int, int, int, IntArray, IntArray]] = []  # (end, seq, job, nodes, counts)
    for i, (j, rem) in enumerate(remaining):
        run = view.running[j]
        ends.append((max(rem, 1), -1 - i, j, run.nodes, run.counts))
    heapq.heapify(ends)
    by_start: dict[int, list[int]] = {}
    for k, s in enumerate(plan):
        by_start.setdefault(s, []).append(k)
    plan_times = sorted(by_start)
    cap_times = [t for t, _ in caps]
    mapped = [-1] * n
    out = Mapped(starts=mapped, now=[], complete=full)
    pending: list[int] = []
    seq = 0
    t = 0
    pi = 0  # next plan time index
    left = n
    while left:
        while ends and ends[0][0] <= t:  # release what ends by t
            _, _, j, nodes, counts = heapq.heappop(ends)
            free[nodes] += counts[:, None] * req[j][None, :]
            if meter is not None:
                power -= meter.start_delta(j, nodes, counts, free)
        while pi < len(plan_times) and plan_times[pi] <= t:
            pending.extend(by_start[plan_times[pi]])
            pi += 1
        pending.sort()  # priority order
        cap = cap_at(caps, t)
        waiting: list[int] = []
        fresh_fail = False
        for k in pending:
            j = inst.jobs[k]
            placed = allocator.place(free, req[j], int(units[j]))
            if placed is not None:
                nodes, counts = placed
                order = np.argsort(nodes)
                nodes, counts = nodes[order].astype(np.int64), counts[order].astype(np.int64)
                delta = meter.start_delta(j, nodes, counts, free) if meter is not None else 0.0
                if delta <= EPS or fits_cap(power, delta, cap):
                    free[nodes] -= counts[:, None] * req[j][None, :]
                    power += delta
                    mapped[k] = t
                    left -= 1
                    heapq.heappush(ends, (t + inst.dur[k], seq, j, nodes, counts))
                    seq += 1
                    if t == 0:
                        out.now.append(Start(j, nodes, counts))
                    continue
            waiting.append(k)
            if plan[k] == t:
                fresh_fail = True
                out.postponed += 1
                if t == 0:
                    out.postponed_now += 1
        pending = waiting
        if fresh_fail:
            out.conflicts.append(_conflict(inst, plan, remaining, t))
        if not full or not left:
            break
        nxt = [ends[0][0]] if ends else []
        if pi < len(plan_times):
            nxt.append(plan_times[pi])
        if pending:
            nxt.extend(c for c in cap_times if c > t)
        nxt = [x for x in nxt if x > t]
        if not nxt:  # nothing will change: what waits cannot be mapped (cap below idle)
            for k in pending:
                mapped[k] = max(inst.horizon, t + 1)
            break
        t = min(nxt)
    if full:
        out.objective = true_objective(inst, "wait", mapped)
    return out


def _conflict(
    inst: Instance, plan: list[int], remaining: list[tuple[int, int]], t: int
) -> Conflict:
    """The jobs the CP schedule runs at ``t``."""
    jobs = tuple(k for k, s in enumerate(plan) if s <= t < s + inst.dur[k])
    running = tuple(j for j, rem in remaining if max(rem, 1) > t)
    return Conflict(t, jobs, running)
