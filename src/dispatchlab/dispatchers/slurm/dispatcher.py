"""The ``slurm`` dispatcher: Slurm 22.05's scheduling, configured from a ``slurm.conf``.

Each decision point runs what slurmctld would run then (sources: ``SchedMD/slurm`` tag
``slurm-22-05-8-1``):

1. **Priorities** (:mod:`.priority`): set at submission; under ``priority/multifactor``
   usage is charged and decayed and pending priorities recomputed at every
   ``PriorityCalcPeriod`` boundary that has passed.
2. **The main scheduler** (``src/slurmctld/job_scheduler.c``, ``_schedule``), after
   submissions and job ends (the first ``default_queue_depth`` + 1 jobs) and every
   ``sched_interval`` seconds (the whole queue): pending jobs by partition
   ``PriorityTier``, then priority, then submission order (``sort_job_queue2``); each is
   started now if its partition's usable nodes hold it (:mod:`.select`); a job that cannot
   start marks its partition failed: later jobs of that partition are skipped and its
   nodes are withheld from every later job of the pass. Job ends come before the
   submissions of the same second (the engine's order): when a second has both, a pass
   over the jobs queued before them runs first (a live slurmctld often schedules on the
   ends before those submissions arrive; experiments/live_slurm/README.md).
3. **Backfill** (``sched/backfill``; ``src/plugins/sched/backfill/backfill.c``,
   ``backfill_agent`` and ``_attempt_backfill``): a pass runs at the first decision point
   at least ``bf_interval`` seconds after the previous pass at which some job changed
   (submitted, started, ended, re-prioritized, or given another planned start) at or
   after the previous pass (``_more_work``; Slurm polls every second, so its pass may come
   up to a second later). In the same order as the main scheduler, for up to
   ``bf_max_job_test`` jobs (at most ``bf_max_job_user`` per user when set), the time
   within ``bf_window`` at which the job fits on its partition's nodes as the select
   plugin's will-run test finds it: running jobs free their cores at their requested
   ends, released in batches of jobs ending within 30 s (then 60 s, …) of the batch's
   first, the start being the batch's last end (``cons_common/job_test.c``,
   ``_will_run_test``); the nodes reserved for the jobs planned before it during its run
   are left out (a reservation that begins at the very second the job's limit would end
   counts: ``begin_time <= end_time``); a job that fits now starts now, any other gets a
   reservation of **whole nodes** (``_add_reservation``: the node-space map is a node
   bitmap per time slot) from its start rounded down to ``bf_resolution`` to its end
   rounded down likewise (at least one resolution step). Starting now on nodes no
   earlier reservation holds cannot delay an earlier job.

What is not modelled yet is listed in docs/slurm_twin.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from dispatchlab.arrays import IntArray
from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.dispatchers.slurm.priority import Priorities, PrioritySettings
from dispatchlab.dispatchers.slurm.select import choose_nodes
from dispatchlab.engine.capabilities import Capabilities
from dispatchlab.engine.decisions import Decision, Start, WakeAt
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError
from dispatchlab.params import Attributes
from dispatchlab.platform.platform import CORES
from dispatchlab.platform.slurm_conf import (
    SETTINGS,
    SPELLING,
    SlurmConf,
    parse_slurm_conf,
    read_slurm_conf,
)

#: The settings of a slurm.conf that says nothing about scheduling (Slurm's defaults).
_DEFAULTS_TEXT = "NodeName=x CPUs=1\nPartitionName=all Nodes=ALL Default=YES\n"


def priority_settings(conf: SlurmConf) -> PrioritySettings:
    """The ``Priority*`` settings of ``conf``."""
    kind = conf.settings["prioritytype"].lower().split("/")[1]
    return PrioritySettings(
        kind=kind, weight_age=conf.integer("priorityweightage"),
        weight_fairshare=conf.integer("priorityweightfairshare"),
        weight_jobsize=conf.integer("priorityweightjobsize"),
        weight_partition=conf.integer("priorityweightpartition"),
        weight_qos=conf.integer("priorityweightqos"),
        max_age=max(conf.seconds("prioritymaxage"), 1),
        decay_half_life=conf.seconds("prioritydecayhalflife"),
        calc_period=max(conf.seconds("prioritycalcperiod"), 1),
        favor_small=conf.flag("priorityfavorsmall"),
        fair_tree=conf.settings["priorityflags"].upper() != "NO_FAIR_TREE")


class SlurmDispatcher(BaseDispatcher):
    """Slurm's ``sched/builtin`` or ``sched/backfill`` with ``priority/basic`` or
    ``priority/multifactor`` and ``select/cons_tres`` (see the module doc), configured
    from the slurm.conf at ``conf`` (empty: Slurm's defaults, one partition of every node).
    """

    name = "slurm"
    described_attributes: ClassVar[Attributes] = {"settings": "settings"}
    capabilities = Capabilities(family="slurm", nodes_leaving=False, fixed_power_cap=False,
                                varying_power_cap=False)

    def __init__(self, conf: str = ""):
        self.conf = conf
        self._conf = (read_slurm_conf(conf) if conf
                      else parse_slurm_conf(_DEFAULTS_TEXT, source="(Slurm defaults)"))
        self._prio_settings = priority_settings(self._conf)
        self._stats: dict[str, int] = {}

    # -- set-up -------------------------------------------------------------------------
    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Partitions on the platform's nodes, each job's partition, empty usage."""
        self.rng = rng
        conf = self._conf
        plat = view.platform
        n = plat.n_nodes
        index = {name: k for k, name in enumerate(plat.node_names)}
        self._part_names: list[str] = []
        masks: list[np.ndarray] = []
        tiers: list[int] = []
        factors: list[int] = []
        for part in conf.partitions:
            mask = np.zeros(n, dtype=bool)
            if part.nodes == ("ALL",):
                mask[:] = True
            else:
                missing = [m for m in part.nodes if m not in index]
                if missing:
                    raise ConfigError(f"partition {part.name} names node {missing[0]}, which "
                                      f"the platform ({plat.name}) does not have",
                                      source=f"{conf.source}:{part.line}", field="Nodes")
                mask[[index[m] for m in part.nodes]] = True
            self._part_names.append(part.name)
            masks.append(mask)
            tiers.append(part.priority_tier)
            factors.append(part.priority_job_factor)
        self._part_mask = masks
        self._max_nodes = [p.max_nodes for p in conf.partitions]
        self._tier = tiers
        top = max(factors) or 1
        by_name = {p: k for k, p in enumerate(self._part_names)}
        default = conf.default_partition
        queue_part: list[int] = []
        for q in view.jobs.queues:
            k = by_name.get(q.name)
            if k is None:
                if default is None:
                    raise ConfigError(
                        f"jobs of queue '{q.name}' have no partition of that name and no "
                        f"partition has Default=YES", source=conf.source, field="PartitionName")
                k = by_name[default.name]
            queue_part.append(k)
        self._queue_part = queue_part
        cores = plat.resources.index(CORES)
        self._cores = cores
        self._cluster_cpus = int(plat.capacity[:, cores].sum())
        self._prio = Priorities(self._prio_settings, n, self._cluster_cpus,
                                [f / top for f in factors])
        params = conf.sched_params
        self._backfill = conf.settings["schedulertype"].lower() == "sched/backfill"
        self._bf_interval = params["bf_interval"]
        self._sched_interval = params["sched_interval"]
        self._last_bf: int | None = None  # when the previous backfill pass ran
        self._last_update = 0  # last_job_update: when a job last changed
        self._planned: dict[int, int] = {}  # the previous pass's planned starts
        self._next_sched = self._sched_interval
        self._since_full = False  # a job changed since the last full main pass
        # priority passes on the calc-period grid from the state's own time: a warm start
        # (a live snapshot, hours after its oldest job) runs no pass for the past
        period = self._prio_settings.calc_period
        self._next_calc = (view.now // period + 1) * period
        self._last_calc = view.now
        self._submit = view.jobs.ints("submit")
        self._user = view.jobs.ints("user")
        # jobs already running (a warm start) are charged from their start like the others
        self._ran: dict[int, tuple[int, int, int]] = {  # running job → (user, cpus, start)
            j: (self._user[j], int(view.demand[j, cores]), r.start)
            for j, r in view.running.items()}
        self._done: list[tuple[int, int, int, int]] = []  # (user, cpus, start, end)
        self._queue = view.jobs.ints("queue")
        self._units = view.jobs.ints("units")
        self._wall = view.jobs.ints("walltime")
        self._stats = {"main_starts": 0, "backfill_starts": 0, "backfill_passes": 0,
                      "reservations": 0}

    def run_stats(self) -> dict[str, Any]:
        """Starts by the main scheduler and by backfill, passes, reservations made, and
        the slurm.conf settings read and not used (they cannot change the schedule)."""
        return {**self._stats, "settings_not_used": list(self._conf.warnings)}

    # -- per-job facts ------------------------------------------------------------------
    def _cpus(self, view: SystemView, job: int) -> int:
        return int(view.demand[job, self._cores])

    def _pending_facts(self, view: SystemView, jobs: Sequence[int]
                       ) -> dict[int, tuple[int, int, int, int]]:
        return {j: (self._submit[j], self._cpus(view, j), self._queue_part[self._queue[j]],
                    self._user[j]) for j in jobs}

    # -- the decision point -------------------------------------------------------------
    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        """Priorities, then the main scheduler, then backfill when due (module doc)."""
        now = view.now
        for j in (*events.finished, *events.aborted):
            rec = self._ran.pop(j, None)
            if rec is not None:
                self._done.append((*rec, now))
        if self._priority_passes(view, now):
            self._last_update = now
            self._since_full = True
        event = bool(events.submitted or events.finished or events.requeued or events.aborted)
        if event:
            self._last_update = now
            self._since_full = True
        for j in (*events.submitted, *events.requeued):
            self._prio.on_submit(j, self._submit[j], now, self._cpus(view, j),
                                 self._queue_part[self._queue[j]], self._user[j])
        out: list[Decision] = []
        full = now >= self._next_sched
        if full:
            self._next_sched = (now // self._sched_interval + 1) * self._sched_interval
            # a full pass over an unchanged queue and machine starts nothing: skipped
            full = self._since_full
        free = view.free.copy()
        started: dict[int, tuple[IntArray, IntArray]] = {}
        ended = bool(events.finished or events.aborted)
        if ended and events.submitted:
            # a job end is handled before the submissions of the same second (the
            # engine's order): its pass sees only the jobs queued before them
            self._main(view, free, started, full, later=set(events.submitted))
        if full or event:
            self._main(view, free, started, full)
        if full:
            self._since_full = False
        if started:
            self._last_update = now
        if self._backfill and self._backfill_due(now):
            self._last_bf = now
            before = len(started)
            planned = self._backfill_pass(view, free, started)
            if planned != self._planned or len(started) > before:
                self._last_update = now
            self._planned = planned
        for j, (nodes, counts) in started.items():
            out.append(Start(j, nodes, counts))
            self._ran[j] = (self._user[j], self._cpus(view, j), now)
        if len(view.queue) > len(started):
            due = [self._next_sched] if self._since_full else []
            if self._prio.s.kind != "basic":
                due.append(self._next_calc)
            if (self._backfill and self._last_bf is not None
                    and self._last_update >= self._last_bf):
                due.append(self._last_bf + self._bf_interval)
            if due:
                out.append(WakeAt(max(min(due), now + 1)))
        return out

    def _backfill_due(self, now: int) -> bool:
        """``backfill_agent``: ``bf_interval`` since the previous pass and more work."""
        last = self._last_bf
        return last is None or (now - last >= self._bf_interval
                                 and self._last_update >= last)

    def _priority_passes(self, view: SystemView, now: int) -> bool:
        """Every ``PriorityCalcPeriod`` boundary passed: decay, charge, recompute; True
        when pending jobs were re-prioritized."""
        prio = self._prio
        if prio.s.kind == "basic":
            return False
        changed = False
        period = prio.s.calc_period
        while self._next_calc <= now:
            t, last = self._next_calc, self._last_calc
            prio.decay_all(t - last)
            for user, cpus, start in self._ran.values():
                prio.charge(user, cpus, start, t, last, t)
            for user, cpus, start, end in self._done:
                prio.charge(user, cpus, start, end, last, t)
            self._done = [d for d in self._done if d[3] > t]
            self._last_calc = t
            self._next_calc = t + period
            prio.recalc(t, self._pending_facts(view, list(view.queue)))
            changed = changed or bool(view.queue)
        return changed

    def _order(self, view: SystemView, started: dict[int, Any],
               later: set[int] | None = None) -> list[int]:
        """Pending jobs by partition tier, priority, submission (``sort_job_queue2``),
        leaving out ``later`` (jobs not submitted yet at this pass)."""
        value, tier, qp, queue = self._prio.value, self._tier, self._queue_part, self._queue
        skip = started if not later else {*started, *later}
        jobs = [j for j in view.queue if j not in skip]
        jobs.sort(key=lambda j: (-tier[qp[queue[j]]], -value[j], j))
        return jobs

    def _room(self, view: SystemView, free: IntArray, job: int, usable: np.ndarray
              ) -> list[int] | None:
        """Units of ``job`` each node can take from ``free`` (0 where not usable), or
        ``None`` when even all of them together cannot hold the job."""
        room = None
        for r, amount in view.demand_nz[job]:  # the job's total per resource
            per_unit = amount // self._units[job]
            k = free[:, r] // per_unit
            room = k if room is None else np.minimum(room, k)
        if room is None:
            room = np.full(free.shape[0], self._units[job], dtype=np.int64)
        room = room * usable
        if int(room.sum()) < self._units[job]:
            return None
        return room.tolist()

    def _place(self, view: SystemView, free: IntArray, job: int, usable: np.ndarray
               ) -> tuple[IntArray, IntArray] | None:
        room = self._room(view, free, job, usable)
        max_nodes = self._max_nodes[self._queue_part[self._queue[job]]]
        pick = None if room is None else choose_nodes(room, self._units[job], max_nodes)
        if pick is None:
            return None
        return (np.fromiter(pick.keys(), dtype=np.int64, count=len(pick)),
                np.fromiter(pick.values(), dtype=np.int64, count=len(pick)))

    def _take(self, view: SystemView, free: IntArray, job: int,
              placed: tuple[IntArray, IntArray], started: dict[int, Any]) -> None:
        nodes, counts = placed
        free[nodes] -= counts[:, None] * view.req[job][None, :]
        started[job] = placed

    def _main(self, view: SystemView, free: IntArray, started: dict[int, Any],
              full: bool, later: set[int] | None = None) -> None:
        """``_schedule``: start in order; a job that cannot start fails its partition
        (``later``: jobs this pass does not see yet)."""
        depth = self._conf.sched_params["default_queue_depth"]
        blocked = np.zeros(free.shape[0], dtype=bool)
        failed: set[int] = set()
        for tested, job in enumerate(self._order(view, started, later)):
            if not full and tested > depth:
                break
            part = self._queue_part[self._queue[job]]
            if part in failed:
                continue
            placed = self._place(view, free, job, self._part_mask[part] & ~blocked)
            if placed is None:
                failed.add(part)
                blocked |= self._part_mask[part]
                continue
            self._take(view, free, job, placed, started)
            self._stats["main_starts"] += 1

    def _backfill_pass(self, view: SystemView, free: IntArray,
                       started: dict[int, Any]) -> dict[int, int]:
        """``_attempt_backfill`` (module doc); returns the planned starts."""
        self._stats["backfill_passes"] += 1
        params = self._conf.sched_params
        now = view.now
        window_end = now + params["bf_window"] * 60
        res = params["bf_resolution"]
        max_test, max_user = params["bf_max_job_test"], params["bf_max_job_user"]
        ends: list[tuple[int, IntArray, IntArray, int]] = [
            (r.requested_end, r.nodes, r.counts, j) for j, r in view.running.items()]
        ends += [(now + self._wall[j], p[0], p[1], j) for j, p in started.items()]
        ends.sort(key=lambda e: e[0])
        resv: list[int] = []  # jobs holding a reservation, in the order made
        cap = min(max_test, len(view.queue)) + 1
        resv_start = np.zeros(cap, dtype=np.int64)
        resv_end = np.zeros(cap, dtype=np.int64)
        resv_mask = np.zeros((cap, free.shape[0]), dtype=bool)
        per_user: dict[int, int] = {}
        planned: dict[int, int] = {}
        tested = 0
        end_times, freed = self._freed_cores(view, ends)
        cores = self._cores
        for job in self._order(view, started):
            if tested >= max_test:
                break
            user = self._user[job]
            if max_user and per_user.get(user, 0) >= max_user:
                continue
            tested += 1
            per_user[user] = per_user.get(user, 0) + 1
            wall = self._wall[job]
            p = self._queue_part[self._queue[job]]
            part = self._part_mask[p]
            # the first time the partition has enough free cores in all (a necessary
            # condition: reservations only take nodes away)
            short = int(view.demand[job, cores]) - int(free[part, cores].sum())
            first = now
            if short > 0:
                k = int(np.searchsorted(freed[:, p], short))
                if k >= len(end_times) or end_times[k] > window_end:
                    continue  # never, or beyond bf_window: no reservation
                first = int(end_times[k])
            found = self._earliest(view, free, ends, job, part, wall, first,
                                   resv_start[:len(resv)], resv_end[:len(resv)],
                                   resv_mask[:len(resv)])
            if found is None or found[0] > window_end:
                continue
            t, placed = found
            if t == now:
                self._take(view, free, job, placed, started)
                ends.append((now + wall, placed[0], placed[1], job))
                ends.sort(key=lambda e: e[0])
                end_times, freed = self._freed_cores(view, ends)
                self._stats["backfill_starts"] += 1
                continue
            start = t // res * res
            end = max((t + wall) // res * res, start + res)
            k = len(resv)
            resv_start[k], resv_end[k] = start, end
            resv_mask[k, placed[0]] = True
            resv.append(job)
            planned[job] = t
            self._stats["reservations"] += 1
        return planned

    def _earliest(self, view: SystemView, free: IntArray,
                  ends: list[tuple[int, IntArray, IntArray, int]], job: int,
                  part: np.ndarray, wall: int, first: int, resv_start: IntArray,
                  resv_end: IntArray, resv_mask: np.ndarray
                  ) -> tuple[int, tuple[IntArray, IntArray]] | None:
        """When and where ``job`` can start, as ``_attempt_backfill`` finds it.

        From ``start_res`` = now: the usable nodes are the partition's less those of every
        reservation overlapping ``[start_res, start_res + limit]`` (``begin_time <=
        end_time``); the select plugin's will-run test (``cons_common/job_test.c``,
        ``_will_run_test``) tries the job now, then releases the running jobs on usable
        nodes in order of their requested ends in batches — a batch takes every job
        ending within ``time_window`` of its first one (30 s, doubled after each batch;
        at most ~200 jobs) — and after each batch tries again: the job's start is the
        end of the batch's last job, and no earlier than ``start_res``. When that lies
        beyond the next reservation boundary after ``start_res``, or the job does not
        fit, the search goes on from that boundary (``TRY_LATER``); when the run from the
        start found crosses a reservation on the chosen nodes (``_test_resv_overlap``),
        it goes on from that start. ``first`` is a lower bound on the start (enough free
        cores in the partition)."""
        now, res = view.now, self._conf.sched_params["bf_resolution"]
        bounds = sorted({int(b) for b in (*resv_start.tolist(), *resv_end.tolist())
                         if b > now})
        start_res = now
        tried: dict[bytes, tuple[int, tuple[IntArray, IntArray]] | None] = {}
        while True:
            later = next((b for b in bounds if b > start_res), None)
            usable = part
            if len(resv_start):
                hit = (resv_start <= start_res + wall) & (resv_end > start_res)
                if hit.any():
                    usable = part & ~resv_mask[hit].any(axis=0)
            key = usable.tobytes()  # the will-run test depends on the usable nodes only
            if key not in tried:
                tried[key] = self._will_run(view, free, ends, job, usable, first)
            found = tried[key]
            if found is not None:
                start = max(found[0], start_res)
                lo, hi = start // res * res, (start + wall) // res * res
                if later is None or lo <= later:
                    # _test_resv_overlap: the run from ``start`` crosses a reservation
                    # on the chosen nodes (``start_res``'s window did not reach it):
                    # try again from ``start``
                    if (start > max(now, start_res) and len(resv_start)
                            and ((resv_end > lo) & (resv_start < hi)
                                 & resv_mask[:, found[1][0]].any(axis=1)).any()):
                        start_res = start
                        continue
                    return start, found[1]
            if later is None:
                return None
            start_res = later

    def _will_run(self, view: SystemView, free: IntArray,
                  ends: list[tuple[int, IntArray, IntArray, int]], job: int,
                  usable: np.ndarray, first: int
                  ) -> tuple[int, tuple[IntArray, IntArray]] | None:
        """``_will_run_test`` on the ``usable`` nodes (see :meth:`_earliest`)."""
        now = view.now
        placed = self._place(view, free, job, usable) if first <= now else None
        if placed is not None:
            return now, placed
        free_t = free.copy()
        mine = [e for e in ends if usable[e[1]].any()]
        window, k = 30, 0
        while k < len(mine):
            head, removed = mine[k][0], 0
            while k < len(mine):
                _, nodes, counts, j = mine[k]
                free_t[nodes] += counts[:, None] * view.req[j][None, :]
                k += 1
                removed += 1
                if removed > 201 or (k < len(mine) and mine[k][0] > head + window):
                    break
            window *= 2
            last = mine[k - 1][0]
            if last < first:
                continue
            placed = self._place(view, free_t, job, usable)
            if placed is not None:
                return last, placed
        return None

    def _freed_cores(self, view: SystemView, ends: list[tuple[int, IntArray, IntArray, int]]
                     ) -> tuple[IntArray, IntArray]:
        """The end times, and per end and partition the cores freed in the partition by
        then (cumulative, ``(ends, partitions)``)."""
        times = np.array([e[0] for e in ends], dtype=np.int64)
        freed = np.zeros((len(ends), len(self._part_mask)), dtype=np.int64)
        for k, (_, nodes, counts, j) in enumerate(ends):
            cores = counts * int(view.req[j][self._cores])
            for p, mask in enumerate(self._part_mask):
                freed[k, p] = int(cores[mask[nodes]].sum())
        return times, np.cumsum(freed, axis=0)

    @property
    def settings(self) -> dict[str, Any]:
        """The scheduling settings in force, Slurm's defaults where the file is silent
        (recorded in the run's description: two what-if runs show what differed)."""
        conf = self._conf
        return {**{SPELLING[k]: conf.settings[k] for k in SETTINGS
                   if k != "schedulerparameters"},
                "SchedulerParameters": {**conf.sched_params, "bf_continue": conf.bf_continue},
                "partitions": {p.name: {"tier": p.priority_tier,
                                        "job_factor": p.priority_job_factor,
                                        "max_time": p.max_time, "max_nodes": p.max_nodes,
                                        "default": p.default} for p in conf.partitions}}
