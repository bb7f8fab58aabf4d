"""DARDIS: distributed and randomized dispatching under a desired utilization profile
(thesis ch. 5, SPEC §5).

Each job goes through the protocol of the thesis once, at submission:

1. the task manager sends ``(u, req, wt, est, lst)`` to every node manager;
2. every node manager computes its fitting index over the window (:mod:`.fitting`) and
   answers with ``responses`` candidate starts from its generator (:mod:`.generators`);
3. the task manager picks one start offered by enough nodes and the nodes
   (:mod:`.task_manager`), and confirms to all;
4. the chosen node managers reserve the job in their utilization profile (:mod:`.grid`).

Messages: 3 per node per round (submission, answer, confirmation). The desired profile
is soft: a round that finds no start under it is repeated against capacity alone before
the deadline is given up. When no start fits ``[est, lst]`` the window moves on:
``[lst, lst + 2·(lst − est)]`` (the thesis writes ``2·(lst − est)`` for the new latest
start, a length; we double the window from the old latest start), up to ``retries``
times, then it goes after the last planned termination (``last_resort="machine"``, the
thesis's ``max(st + wt)`` over every reservation, where the whole machine is empty) or,
with ``last_resort="nodes"``, from the earliest time at which enough nodes hold no
reservation any more (each node's own last termination: the same certainty without
queueing the job behind reservations on nodes it does not use; docs/dardis.md,
"Makespan on Curie").
A job needing more units than the usable nodes hold (nodes left) waits in the queue and
runs the protocol when nodes change.
Jobs start at their planned time; a job ending early frees its nodes' profiles from now
on, and with ``backfill`` each freed node offers an earlier start, in ``[now, st)``, to
the first ``depth`` jobs planned on it (thesis §5.3.3): a job moves only if all of its
nodes agree on one earlier start, keeping its nodes and units. Only starts overlapping
the freed slots are tried (a later start's fit did not change) unless ``full_window``
asks for the thesis's whole ``[now, st)``: on the first 6,000 Curie jobs of the
experiment the whole window cost 5.7 times the backfilling time for a longer makespan
and more late jobs (docs/dardis.md).

Scheduling time (node managers: fitting index and generator, all nodes in one call)
and dispatching time (task manager: choice and reservation) are summed over the
rounds of each job's protocol and reported per job (the thesis's Table 5.2), apart, in
:meth:`Dardis.run_stats`; backfilling rounds separately, per round. With the First
generator and the Min start policy the round is one compiled pass that stops at the chosen
start (:mod:`.first_min_start`): the choice is then counted in the scheduling time and
dispatching is the reservation alone.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.dispatchers.dardis.backfill_start import first_common_start
from dispatchlab.dispatchers.dardis.first_min_start import first_min_start
from dispatchlab.dispatchers.dardis.fitting_kernel import grid_fitting_index
from dispatchlab.dispatchers.dardis.generators import get_generator, responses
from dispatchlab.dispatchers.dardis.grid import UsageGrid
from dispatchlab.dispatchers.dardis.task_manager import Choice, get_policy
from dispatchlab.dispatchers.dardis.timers import pop_due
from dispatchlab.engine.capabilities import Capabilities
from dispatchlab.engine.decisions import Decision, Plan, Start, WakeAt
from dispatchlab.engine.desired_utilization import desired_steps
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError, DispatchlabError
from dispatchlab.platform.platform import units_fitting

#: Where a job goes after its last retry window: after the machine's last planned
#: termination (the thesis), or after its own nodes' last terminations.
LAST_RESORTS = ("machine", "nodes")


@dataclass(slots=True)
class Reservation:
    """A job's place in the node profiles: start time, slots ``[first, last)``, nodes
    (increasing) × units, and a version that invalidates stale start timers."""

    start: int
    first: int
    last: int
    nodes: IntArray
    counts: IntArray
    version: int


class Dardis(BaseDispatcher):
    """Node managers with a start-time generator, a task-manager policy, optional
    backfilling at terminations."""

    capabilities = Capabilities(
        family="dardis", fixed_power_cap=False, varying_power_cap=False,
        follows_desired_utilization=True)

    def __init__(self, generator: str = "first", policy: str = "min-start", *,
                 backfill: bool = False, depth: int = 32, slot: int = 60, retries: int = 3,
                 rate: float = 3.0, full_window: bool = False, last_resort: str = "machine",
                 name: str | None = None) -> None:
        get_generator(generator, rate)
        get_policy(policy)
        for key, value, least in (("slot", slot, 1), ("retries", retries, 0),
                                  ("depth", depth, 0)):
            if value < least:
                raise ConfigError(f"{key}={value}: must be ≥ {least}", field=key)
        if last_resort not in LAST_RESORTS:
            raise ValueError(f"last_resort must be one of {', '.join(LAST_RESORTS)}, "
                             f"got '{last_resort}'")
        self.generator = generator
        self.policy = policy
        self.backfill = backfill
        self.depth = depth
        self.slot = slot
        self.retries = retries
        self.rate = rate
        self.full_window = full_window
        self.last_resort = last_resort
        self.name = name or f"dardis:{generator},{policy}" + (",backfill" if backfill else "")

    # ---- per run ----------------------------------------------------------------

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Empty profiles; the desired profile's steps from the announced scenario."""
        self.rng = rng
        self._gen = get_generator(self.generator, self.rate)
        self._pick = get_policy(self.policy)
        # the deterministic pair has a round that stops at its answer
        self._first_min = self.generator == "first" and self.policy == "min-start"
        plat = view.platform
        self._cap: FloatArray = view.capacity.astype(np.float64)
        self._grid = UsageGrid(len(plat.resources), plat.n_nodes, self.slot)
        self._steps = [desired_steps(view.scenario, r) for r in plat.resources]
        self._profile = any(len(t) for t, _ in self._steps)
        self._share_memo: tuple[tuple[int, ...], FloatArray] | None = None
        self._walltime = view.jobs.ints("walltime")
        self._units = view.jobs.ints("units")
        self._est = view.jobs.ints("est")
        self._lst = view.jobs.ints("lst")
        self._planned: dict[int, Reservation] = {}
        self._running: dict[int, Reservation] = {}
        self._on_node: list[set[int]] = [set() for _ in range(plat.n_nodes)]
        self._heap: list[tuple[int, int, int]] = []
        self._held: list[int] = []  # jobs more than the usable nodes can host, in order
        self._ends: list[tuple[int, int, int]] = []  # (−last slot, job, version)
        self._wakes: set[int] = set()
        self._version = 0
        self._sched: list[float] = []
        self._disp: list[float] = []
        self._backfill_t: list[float] = []
        self._job_sched = self._job_disp = 0.0
        self._stats = {"rounds": 0, "messages": 0, "soft_placements": 0, "retried_jobs": 0,
                       "after_last_termination": 0, "last_resort_at_est": 0,
                       "backfill_rounds": 0, "held_for_nodes": 0,
                       "backfill_moves": 0, "start_conflicts": 0}

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        """Release ended jobs, backfill, plan arrivals, start what is due."""
        now = view.now
        self._grid.advance(now)
        freed: dict[int, int] = {}  # node → end of the slots given back
        for j in events.left_running:
            res = self._running.pop(j, None)
            if res is not None:
                self._unreserve(view, j, res, now)
                until = res.last * self.slot
                for n in res.nodes.tolist():
                    freed[n] = max(freed.get(n, 0), until)
        out: list[Decision] = []
        if self.backfill and freed:
            self._backfill(view, freed, now, out)
        if events.nodes and self._held:  # nodes came back (or left): try the held jobs
            held, self._held = self._held, []
            for j in held:
                if j in view.queue and j not in self._planned:
                    self._plan(view, j, now, out)
        for j in (*events.submitted, *events.requeued):
            self._plan(view, j, now, out)
        self._start_due(view, now, out)
        while self._heap:
            t, j, v = self._heap[0]
            res = self._planned.get(j)
            if res is None or res.version != v:
                heapq.heappop(self._heap)
                continue
            if t > now and t not in self._wakes:
                self._wakes.add(t)
                out.append(WakeAt(t))
            break
        self._wakes = {t for t in self._wakes if t > now}
        return out

    # ---- the protocol -------------------------------------------------------------

    def _window(self, view: SystemView, j: int, now: int) -> tuple[int, int]:
        """``[est, lst]``: the job's own when it gives them, else arrival and arrival
        plus its queue's expected wait."""
        est, lst = self._est[j], self._lst[j]
        if est < 0:
            est = now
        if lst < 0:
            lst = est + int(view.jobs.ewt()[j])
        est = max(est, now)
        return est, max(lst, est)

    def _plan(self, view: SystemView, j: int, now: int, out: list[Decision]) -> None:
        """Run the protocol for job ``j`` until a start is reserved; its scheduling and
        dispatching times (all its rounds) are recorded once, as the thesis's
        per-job overhead."""
        self._job_sched = self._job_disp = 0.0
        try:
            self._protocol(view, j, now, out)
        finally:
            self._sched.append(self._job_sched)
            self._disp.append(self._job_disp)

    def _protocol(self, view: SystemView, j: int, now: int, out: list[Decision]) -> None:
        alive = self._planning_nodes(view)
        if int(np.where(alive, units_fitting(view.capacity, view.req[j]), 0).sum()) \
                < self._units[j]:
            # more units than the usable nodes hold (nodes left): no node manager can
            # answer; the job waits, queued, and runs the protocol when nodes change
            self._held.append(j)
            self._stats["held_for_nodes"] += 1
            return
        est, lst = self._window(view, j, now)
        length = lst - est
        for attempt in range(self.retries + 1):
            if attempt == 1:
                self._stats["retried_jobs"] += 1
            for with_profile in ((True, False) if self._profile else (False,)):
                if self._round(view, j, est, lst, with_profile, alive, out):
                    if not with_profile and self._profile:
                        self._stats["soft_placements"] += 1
                    return
            est, lst = lst, lst + 2 * max(lst - est, self.slot)
        self._stats["after_last_termination"] += 1
        est = (self._nodes_free_from(view, j, now, alive) if self.last_resort == "nodes"
               else max(now, self._last_end()))
        for with_profile in ((True, False) if self._profile else (False,)):
            if self._round(view, j, est, est + length, with_profile, alive, out):
                return
        # A random start-time generator lets each node offer a few starts drawn from the
        # window; when only the nodes free from ``est`` can host the job (the per-node
        # last resort), they may offer no start in common. ``est`` itself is certain:
        # offered alone, every node free from then on offers it.
        self._stats["last_resort_at_est"] += 1
        if self._round(view, j, est, est, False, alive, out):
            return
        raise DispatchlabError(
            f"DARDIS: job {view.jobs.ints('job_id')[j]} fits no start even on the empty "
            f"machine ({self._units[j]} units of {view.req[j].tolist()} over "
            f"{int(alive.sum())} usable nodes)")

    def _planning_nodes(self, view: SystemView) -> npt.NDArray[np.bool_]:
        """Nodes the node managers plan on: the usable ones (subclasses that switch
        nodes off on purpose add theirs, kept free in the grid while off)."""
        return view.alive

    def _share_upto(self, last: int) -> FloatArray:
        """The table of desired shares of every resource in absolute slots from 0 to at
        least ``last`` (rebuilt when it is too short or the profile grew)."""
        key = tuple(len(t) for t, _ in self._steps)
        memo = self._share_memo
        if memo is None or memo[0] != key or memo[1].shape[1] < last:
            held = memo[1].shape[1] if memo is not None else 512
            size = max(last, 2 * held if memo is not None and memo[1].shape[1] < last
                       else held)
            memo = self._share_memo = (key, self._share_table(0, size))
        return memo[1]

    def _share_table(self, first: int, last: int) -> FloatArray:
        """Desired share of every resource in absolute slots ``[first, last)``."""
        times = np.arange(first, last, dtype=np.int64) * self.slot
        out = np.ones((len(self._steps), len(times)))
        for k, (t, v) in enumerate(self._steps):
            if len(t):
                idx = np.searchsorted(t, times, side="right") - 1
                out[k] = np.where(idx >= 0, v[np.maximum(idx, 0)], 1.0)
        return out

    def _slots(self, j: int, est: int, lst: int) -> tuple[int, int, int, int, int]:
        """Job ``j``'s candidate starts in ``[est, lst]`` in slots: the first slot, how many
        starts, its length in slots (from a slot boundary, and from ``est``) and the span
        of slots the candidates cover."""
        slot, wt = self.slot, self._walltime[j]
        j0 = est // slot
        n_starts = lst // slot - j0 + 1
        width = max(1, -(-wt // slot))
        first_width = max(1, -(-(est + wt) // slot) - j0)
        return j0, n_starts, width, first_width, n_starts - 1 + max(width, first_width)

    def _index(self, view: SystemView, j: int, est: int, lst: int, with_profile: bool
               ) -> tuple[FloatArray, int, int]:
        """Fitting index of the candidate starts in ``[est, lst]`` on every node, read
        from the grid (:func:`~dispatchlab.dispatchers.dardis.fitting_kernel.
        grid_fitting_index`); also the first slot and the duration in slots."""
        j0, n_starts, width, first_width, span = self._slots(j, est, lst)
        up, a0 = self._grid.held(j0, j0 + span)
        share = self._share_upto(j0 + span) if with_profile else None
        req = view.req[j].astype(np.float64)
        index = grid_fitting_index(up, a0, share, j0, self._cap, req, n_starts, width,
                                   first_width)
        return index, j0, width

    def _round(self, view: SystemView, j: int, est: int, lst: int, with_profile: bool,
               alive: npt.NDArray[np.bool_], out: list[Decision]) -> bool:
        """One protocol round over all usable nodes; reserve and return True on success."""
        t0 = time.perf_counter()
        n_alive = int(alive.sum())
        if self._first_min:
            choice = self._first_min_choice(view, j, est, lst, with_profile, alive, n_alive)
            j0 = est // self.slot
            t1 = time.perf_counter()
        else:
            index, j0, _ = self._index(view, j, est, lst, with_profile)
            index[~alive] = -np.inf
            units = self._units[j]
            offered = self._gen(index, responses(units, index.shape[1], n_alive), self.rng)
            t1 = time.perf_counter()
            choice = self._pick(index, offered, units, self.rng)
        if choice is not None:
            self._reserve(view, j, self._time_of(choice, est, j0), choice, out)
        t2 = time.perf_counter()
        self._job_sched += t1 - t0
        self._job_disp += t2 - t1
        self._stats["rounds"] += 1
        self._stats["messages"] += 3 * n_alive
        return choice is not None

    def _first_min_choice(self, view: SystemView, j: int, est: int, lst: int,
                          with_profile: bool, alive: npt.NDArray[np.bool_], n_alive: int
                          ) -> Choice | None:
        """The First generator and Min start policy in one pass that stops at the chosen
        start (:func:`~dispatchlab.dispatchers.dardis.first_min_start.first_min_start`):
        the same choice as the index, the generator and the policy on the whole window."""
        j0, n_starts, width, first_width, span = self._slots(j, est, lst)
        up, a0 = self._grid.held(j0, j0 + span)
        share = self._share_upto(j0 + span) if with_profile else None
        units = int(self._units[j])
        found = first_min_start(up, a0, share, j0, self._cap, alive,
                                view.req[j].astype(np.float64), units,
                                responses(units, n_starts, n_alive), n_starts, width,
                                first_width)
        return None if found is None else Choice(*found)

    def _time_of(self, choice: Choice, est: int, j0: int) -> int:
        return est if choice.start == 0 else (j0 + choice.start) * self.slot

    # ---- reservations -------------------------------------------------------------

    def _amounts(self, view: SystemView, j: int, counts: IntArray) -> FloatArray:
        return view.req[j].astype(np.float64)[:, None] * counts[None, :]

    def _reserve(self, view: SystemView, j: int, start: int, choice: Choice | Reservation,
                 out: list[Decision]) -> None:
        slot = self.slot
        first = start // slot
        last = max(first + 1, -(-(start + self._walltime[j]) // slot))
        self._version += 1
        res = Reservation(start, first, last, choice.nodes, choice.counts, self._version)
        self._grid.add(res.nodes, self._amounts(view, j, res.counts), first, last)
        self._planned[j] = res
        for n in res.nodes.tolist():
            self._on_node[n].add(j)
        heapq.heappush(self._heap, (start, j, res.version))
        heapq.heappush(self._ends, (-last, j, res.version))
        out.append(Plan(j, start))

    def _unreserve(self, view: SystemView, j: int, res: Reservation, now: int) -> None:
        """Give back the reservation's slots from the current one on."""
        self._grid.add(res.nodes, self._amounts(view, j, res.counts),
                       max(res.first, now // self.slot), res.last, -1.0)

    def _last_end(self) -> int:
        """The last planned termination (end of the last reserved slot)."""
        heap = self._ends
        while heap:
            neg, j, v = heap[0]
            res = self._planned.get(j) or self._running.get(j)
            if res is not None and res.version == v:
                return -neg * self.slot
            heapq.heappop(heap)
        return 0

    def _nodes_free_from(self, view: SystemView, j: int, now: int,
                         alive: npt.NDArray[np.bool_]) -> int:
        """The earliest slot boundary from which usable nodes that hold no reservation
        any more can host all of job ``j``'s units (nodes by their last busy slot)."""
        free_from = self._grid.free_from(now // self.slot)
        host = np.where(alive, units_fitting(view.capacity, view.req[j]), 0)
        order = np.argsort(free_from, kind="stable")
        k = int(np.searchsorted(np.cumsum(host[order]), self._units[j]))
        if k >= len(order):
            raise DispatchlabError(
                f"DARDIS: job {view.jobs.ints('job_id')[j]} needs {self._units[j]} units "
                f"of {view.req[j].tolist()}; the {int(alive.sum())} usable nodes hold "
                f"{int(host.sum())}")
        return max(now, int(free_from[order[k]]) * self.slot)

    def _drop_plan(self, j: int) -> Reservation:
        res = self._planned.pop(j)
        for n in res.nodes.tolist():
            self._on_node[n].discard(j)
        return res

    # ---- starts -------------------------------------------------------------------

    def _start_due(self, view: SystemView, now: int, out: list[Decision]) -> None:
        for j, res in pop_due(self._heap, now, self._planned):
            need = view.req[j][None, :] * res.counts[:, None]
            if not bool((view.free[res.nodes] >= need).all()):
                # a node left or a job outran its reservation: plan again from now
                self._stats["start_conflicts"] += 1
                self._drop_plan(j)
                self._unreserve(view, j, res, now)
                self._plan(view, j, now + self.slot, out)
                continue
            self._drop_plan(j)
            self._running[j] = res
            out.append(Start(j, res.nodes, res.counts))

    # ---- backfilling at terminations ------------------------------------------------

    def _backfill(self, view: SystemView, freed: dict[int, int], now: int,
                  out: list[Decision]) -> None:
        """Offer earlier starts to the first ``depth`` jobs planned on each freed node.

        A job planned at ``st`` on nodes freed until ``f`` (the end of the slots the
        ended job gave back) is offered ``[now, min(st, f)]``: a later start does not
        overlap what was freed, so its fit did not change."""
        chosen: set[int] = set()
        planned = self._planned
        for n in sorted(freed):
            chosen.update(heapq.nsmallest(self.depth, self._on_node[n],
                                          key=lambda j: planned[j].start))
        freed_until = np.zeros(len(self._on_node), dtype=np.int64)
        for n, f in freed.items():
            freed_until[n] = f
        j0 = now // self.slot
        for j in sorted(chosen, key=lambda j: (self._planned[j].start, j)):
            res = self._planned[j]
            if res.start <= now:
                continue
            until = res.start
            if not self.full_window:
                until = max(now, min(until, int(freed_until[res.nodes].max())))
            t0 = time.perf_counter()
            col = self._first_common(view, j, now, until, res)
            self._stats["backfill_rounds"] += 1
            self._stats["messages"] += 3 * len(res.nodes)
            new_start = now if col == 0 else (
                (j0 + col) * self.slot if col > 0 else res.start)
            if new_start < res.start:
                self._unreserve(view, j, res, now)
                self._drop_plan(j)
                self._reserve(view, j, new_start, res, out)
                self._stats["backfill_moves"] += 1
            self._backfill_t.append(time.perf_counter() - t0)

    def _first_common(self, view: SystemView, j: int, est: int, lst: int,
                      res: Reservation) -> int:
        """The first candidate start in ``[est, lst]`` (index from ``est``'s slot) at which
        all of the job's nodes host its units with its own reservation taken out, or −1
        (:func:`~dispatchlab.dispatchers.dardis.backfill_start.first_common_start`)."""
        j0, n_starts, width, first_width, span = self._slots(j, est, lst)
        up, a0 = self._grid.held(j0, j0 + span)
        share = self._share_upto(j0 + span) if self._profile else None
        own_lo = max(res.first, j0) - j0
        return first_common_start(up, a0, res.nodes, self._amounts(view, j, res.counts),
                                  own_lo, res.last - j0, self._cap, share, j0,
                                  view.req[j].astype(np.float64), res.counts, n_starts,
                                  width, first_width)

    # ---- reporting ------------------------------------------------------------------

    def run_stats(self) -> dict[str, Any]:
        """Protocol counts and the scheduling / dispatching overhead split (s)."""
        sched, disp = np.array(self._sched), np.array(self._disp)

        def stat(a: npt.NDArray[np.float64]) -> dict[str, float]:
            if not len(a):
                return {"mean_s": 0.0, "std_s": 0.0, "total_s": 0.0}
            return {"mean_s": float(a.mean()), "std_s": float(a.std()),
                    "total_s": float(a.sum())}

        return {**self._stats, "scheduling": stat(sched), "dispatching": stat(disp),
                "backfilling": stat(np.array(self._backfill_t)), "slot_s": self.slot}

