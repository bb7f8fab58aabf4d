"""The dispatching problem at one decision time: which jobs, how long, what is busy.

Everything is relative to now (time 0). Built once per decision from the read-only
view and the duration estimator; both the greedy schedule and the CP-SAT models read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.dispatchers.cp.config import CPConfig
from dispatchlab.dispatchers.cp.timeline import Timeline
from dispatchlab.engine.state import SystemView
from dispatchlab.estimates.base import DurationEstimator


@dataclass
class Busy:
    """Usage of the running jobs that the model believes end after ``rem`` seconds."""

    rem: int  # remaining time used for occupancy (>= 1)
    usage: IntArray  # nodes × resources (pooled models: 1 × resources)


@dataclass
class Instance:
    """Jobs of the model in priority order, with everything the models need."""

    now: int
    pooled: bool
    jobs: list[int]  # queued jobs searched by the model, priority order
    dur: list[int]  # their durations d(τ_i) (≥ 1)
    wait0: list[int]  # time already waited, now − q_i
    ewt: list[int]  # expected waiting time of their queue (≥ 1)
    fixed: list[int]  # v0 HCP: jobs beyond m, postponed to the end of the horizon
    fixed_dur: list[int]
    horizon: int  # eoh − now
    busy: list[Busy]  # running jobs merged by remaining time
    n_running: int
    n_queue: int
    dropped: int  # queued jobs left out of the model (v1+)
    cap: IntArray  # capacity per node (or pooled 1 × resources)
    free: IntArray  # free capacity now, same shape as cap
    req: IntArray  # per-unit request of each model job (pooled: total demand), rows
    units: list[int]  # units per job (pooled: 1)
    max_ewt: int
    greedy: dict[int, int] = field(default_factory=dict)  # job → greedy start
    placement: dict[int, tuple[IntArray, IntArray]] = field(default_factory=dict)
    rules: Any = None  # RuleData (cp/operator_rules.py) when operator rules apply
    # capacity taken over [start, end) on top of the running jobs (pooled 1 × resources;
    # DEC's time-varying power cap as padding); ``free`` already holds those active at 0
    pads: list[tuple[int, int, IntArray]] = field(default_factory=list)


def priority_order(
    view: SystemView,
    jobs: list[int],
    dur: dict[int, int],
    rule: str,
    max_ewt: int,
    ewt: Sequence[int],
    share: Sequence[float],
) -> list[int]:
    """Jobs sorted by decreasing priority at ``view.now`` (static during the search).

    ``wait``: (max ewt / ewt_i)(t − q_i); ``slowdown``: (t − q_i + d_i)/d_i. Ties: smaller
    demand (``share`` × d, share = pooled request normalized by the machine) first, then
    arrival order.
    """
    now = view.now
    submit = view.jobs.submit
    keys = []
    for j in jobs:
        d = dur[j]
        w = now - int(submit[j])
        prio = (w + d) / d if rule == "slowdown" else (max_ewt / ewt[j]) * w
        keys.append((-prio, float(share[j]) * d, j))
    keys.sort()
    return [k[2] for k in keys]


def remaining(view: SystemView, est: DurationEstimator) -> list[tuple[int, int]]:
    """Per running job, (job, predicted remaining time); may be ≤ 0 for underestimates."""
    now = view.now
    return [(j, run.start + est.estimate(j) - now) for j, run in view.running.items()]


def build_instance(
    view: SystemView,
    cfg: CPConfig,
    est: DurationEstimator,
    max_ewt: int,
    ewt: Sequence[int],
    share: Sequence[float],
) -> Instance:
    """The model's view of the system now, shrunk as the version says."""
    now = view.now
    pooled = cfg.kind == "hcp"
    queue = list(view.queue)
    dur = {j: max(1, est.estimate(j)) for j in queue}
    order = priority_order(view, queue, dur, cfg.priority_name, max_ewt, ewt, share)
    fixed: list[int] = []
    if cfg.shrink:
        head = order[: cfg.m]
        if pooled:
            jobs = [j for j in head if view.fits_total(j)]
        else:
            free_now = view.free
            job_units = view.jobs.units
            jobs = [j for j in head if _fits_nodes(free_now, view.req[j], int(job_units[j]))]
    elif pooled:
        jobs, fixed = order[: cfg.m], order[cfg.m :]
    else:
        jobs = order
    dropped = len(queue) - len(jobs) - len(fixed)

    # running jobs: remaining time; v2 fixes underestimates to 1 s
    busy_map: dict[int, IntArray] = {}
    horizon_running = 0
    n_res = view.capacity.shape[1]
    for j, rem in remaining(view, est):
        if rem < 1 and cfg.fix_underestimates:
            rem = 1
        horizon_running += rem  # v0/v1: a negative value shrinks the horizon (the weakness)
        occ = max(rem, 1)  # the job does hold its resources now
        run = view.running[j]
        if pooled:
            usage = view.demand[j][None, :]
        else:
            usage = np.zeros((view.capacity.shape[0], n_res), dtype=np.int64)
            usage[run.nodes] = run.counts[:, None] * view.req[j][None, :]
        if occ in busy_map:
            busy_map[occ] = busy_map[occ] + usage
        else:
            busy_map[occ] = usage.copy()
    busy = [Busy(r, u) for r, u in sorted(busy_map.items())]

    d_jobs = [dur[j] for j in jobs]
    d_fixed = [dur[j] for j in fixed]
    horizon = sum(d_jobs) + sum(d_fixed) + horizon_running
    submit = view.jobs.submit
    if pooled:
        cap = np.asarray(view.total, dtype=np.int64)[None, :]
        free = np.asarray(view.free_total, dtype=np.int64)[None, :]
        req = view.demand
        n_units = [1] * len(jobs)
    else:
        cap, free, req = view.capacity, view.free, view.req
        n_units = [int(u) for u in view.jobs.units[jobs]]
    return Instance(
        now=now,
        pooled=pooled,
        jobs=jobs,
        dur=d_jobs,
        wait0=[now - int(submit[j]) for j in jobs],
        ewt=[int(ewt[j]) for j in jobs],
        fixed=fixed,
        fixed_dur=d_fixed,
        horizon=horizon,
        busy=busy,
        n_running=len(view.running),
        n_queue=len(queue),
        dropped=dropped,
        cap=cap,
        free=free,
        req=req,
        units=n_units,
        max_ewt=max_ewt,
    )


def _fits_nodes(free: IntArray, req: IntArray, units: int) -> bool:
    mask = req > 0
    return int((free[:, mask] // req[mask]).min(axis=1).sum()) >= units


def base_timeline(inst: Instance, scale: FloatArray) -> Timeline:
    """Free capacity over time with only the running jobs (their predicted ends) and the
    padding intervals."""
    releases = [(b.rem, b.usage) for b in inst.busy]
    for start, end, usage in inst.pads:
        if start > 0:
            releases.append((start, -usage))
        releases.append((end, usage))
    return Timeline(inst.free, releases, scale)


def list_schedule(
    inst: Instance, order: list[int], scale: FloatArray
) -> tuple[dict[int, int], dict[int, tuple[IntArray, IntArray]]]:
    """Serial schedule: jobs in ``order``, each at its earliest feasible start."""
    if inst.rules is not None:
        return inst.rules.list_schedule(inst, order, scale)
    tl = base_timeline(inst, scale)
    pos = {j: k for k, j in enumerate(inst.jobs)}
    req = inst.req
    starts: dict[int, int] = {}
    placement: dict[int, tuple[IntArray, IntArray]] = {}
    for j in order:
        k = pos[j]
        start, nodes, counts = tl.earliest_fit(req[j], inst.units[k], inst.dur[k])
        tl.reserve(start, inst.dur[k], nodes, counts, req[j])
        starts[j] = start
        placement[j] = (nodes, counts)
    return starts, placement


def greedy_schedule(inst: Instance, scale: FloatArray) -> None:
    """Priority list schedule: fills ``inst.greedy`` (starts) and ``inst.placement``."""
    inst.greedy, inst.placement = list_schedule(inst, inst.jobs, scale)
    if inst.rules is not None and max(inst.dur, default=0) <= inst.horizon:
        # rules may delay jobs (windows, reservations): the horizon covers the greedy plan
        ends = [inst.greedy[j] + d for j, d in zip(inst.jobs, inst.dur, strict=True)]
        inst.horizon = max([inst.horizon, *ends])


def greedy_is_optimal(inst: Instance, scale: FloatArray) -> bool:
    """True when every job starts at its own earliest start given only the running jobs:
    no schedule can start any job earlier, so the greedy schedule is optimal for every
    objective that never improves by delaying a job (all objectives offered here)."""
    if inst.rules is not None:
        return bool(inst.rules.greedy_is_optimal(inst, scale))
    base: Timeline | None = None
    for k, j in enumerate(inst.jobs):
        s = inst.greedy[j]
        if s == 0:
            continue
        if base is None:
            base = base_timeline(inst, scale)
        lb, _, _ = base.earliest_fit(inst.req[j], inst.units[k], inst.dur[k])
        if lb < s:
            return False
    return True


def can_start_now(inst: Instance) -> bool:
    """Whether any model job fits now (else no schedule starts anything now: running
    jobs only release resources, so fitting now is the earliest possible start)."""
    if inst.rules is not None:
        return bool(inst.rules.can_start_now(inst))
    free = inst.free
    return any(_fits_nodes(free, inst.req[j], inst.units[k]) for k, j in enumerate(inst.jobs))
