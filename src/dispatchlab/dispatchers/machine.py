"""Capacity as selection schemes see it: free now, expected releases, one EASY reservation.

Two implementations answer the same questions:

- :class:`SlotMachine` when every job's unit asks the same resource vector (SWF traces in
  pool or whole-node mode): node ``n`` then hosts ``k_n`` units whatever runs beside them,
  so a job fits iff ``units ≤ free slots``. Every check is integer arithmetic; nodes are
  chosen (by the allocator) only for jobs that start.
- :class:`NodeMachine` otherwise (GPUs, memory, mixed jobs): fits are checked on the
  nodes × resources matrix with numpy, a pooled-total test first.

Both keep the running jobs sorted by *expected* end (start + the estimator's duration at
start) — the true end lives in the engine's future and is never read.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from typing import Any

import numpy as np

from dispatchlab.arrays import IntArray
from dispatchlab.dispatchers.allocators import Allocator, FirstFit, Placement
from dispatchlab.dispatchers.availability import (
    Availability,
    LiveRequests,
    NodeAvailability,
    SlotAvailability,
)
from dispatchlab.dispatchers.free_slots import FreeSlots
from dispatchlab.dispatchers.group_placement import GroupPlacement, place_all
from dispatchlab.dispatchers.workspace import Workspace
from dispatchlab.engine.decisions import Start
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import DispatchlabError
from dispatchlab.estimates.base import DurationEstimator, WalltimeEstimate
from dispatchlab.platform.platform import units_fitting

_FAR = 1 << 62
_MAX_STEPS = 100_000
#: A shadow time meaning "no reservation can be made now".
NEVER = _FAR


class Machine:
    """Shared bookkeeping: running jobs by expected end, start times, the call's workspace.

    Per call, :meth:`begin` updates the running set from the engine's events; a selection
    scheme then asks :meth:`fits` / :meth:`start` (and the EASY or availability helpers of the
    subclasses) in priority order.
    """

    def __init__(self, view: SystemView, allocator: Allocator, estimator: DurationEstimator):
        self.view = view
        self.alloc = allocator
        self.estimator = estimator
        self.units: list[int] = view.jobs.ints("units")
        self.now = 0
        self.ends: list[tuple[int, int]] = []  # (expected end, job), sorted
        self.end_of: dict[int, int] = {}
        self._start_of: dict[int, int] = {}
        self._ws: Workspace | None = None
        #: the estimator's ``observe``, or None when it learns nothing (requested times)
        self._observe = (None if type(estimator).observe is WalltimeEstimate.observe
                         else estimator.observe)
        #: whether estimates may change during the run (the estimator learns)
        self.learns = self._observe is not None

    # ---- per call -------------------------------------------------------------------

    def begin(self, view: SystemView, events: Events) -> None:
        """Forget jobs that stopped running (telling the estimator the run time of those
        that finished); fresh scratch state."""
        now = view.now
        left = events.left_running if events.aborted else events.finished
        if left:
            aborted = set(events.aborted) if events.aborted else ()
            ends, end_of, start_of = self.ends, self.end_of, self._start_of
            observe = self._observe
            for j in left:
                e = end_of.pop(j, None)
                if e is None:
                    continue  # not started through this machine
                del ends[bisect_left(ends, (e, j))]
                started = start_of.pop(j)
                if observe is not None and j not in aborted:
                    observe(j, now - started)
                self._finished(j)
        self.now = now
        self._ws = None

    def _finished(self, job: int) -> None:
        """Subclass hook: a running job ended."""

    def adopt(self, view: SystemView) -> None:
        """Count the jobs already running on ``view`` as if started through this machine
        (expected end: their start + the estimate). A simulation starts empty, so this does
        nothing there; a machine built on a live system's state needs it."""
        for job, run in view.running.items():
            e = run.start + self.estimator.estimate(job)
            insort(self.ends, (e, job))
            self.end_of[job] = e
            self._start_of[job] = run.start
            self._adopted(job, run.nodes, run.counts)

    def _adopted(self, job: int, nodes: IntArray, counts: IntArray) -> None:
        """Subclass hook: a running job was adopted."""

    def workspace(self) -> Workspace:
        """The scratch free matrix of this call (created on first use)."""
        if self._ws is None:
            self._ws = Workspace(self.view)
        return self._ws

    def _record(self, job: int, nodes: IntArray, counts: IntArray) -> Start:
        """Commit a start now: scratch capacity, expected end, the Start decision."""
        ws = self._ws
        if ws is None:
            ws = self._ws = Workspace(self.view)
        d = ws.take(job, nodes, counts)
        self._expect(job)
        return d

    def _expect(self, job: int) -> None:
        """A job started now: its expected end."""
        e = self.now + self.estimator.estimate(job)
        ends = self.ends
        if not ends or (e, job) > ends[-1]:
            ends.append((e, job))
        else:
            insort(ends, (e, job))
        self.end_of[job] = e
        self._start_of[job] = self.now

    def power_allows(self, job: int, placement: Any) -> bool:
        """True when starting ``job`` on ``placement`` now keeps within the power cap."""
        view = self.view
        if view.budget is None:
            return True
        ws = self.workspace()
        if isinstance(placement, list):
            power = group_power(view, ws.free, placement)
        elif isinstance(placement, tuple):
            power = ws.power_of(job, *placement)
        else:  # slot counts: placed by the allocator at start, at the job's own power
            placed = self.alloc.place(ws.free, view.req[job], self.units[job])
            if placed is None:
                return False
            power = ws.power_of(job, *placed)
        return power <= ws.power_left + 1e-6

    def overdue(self) -> list[int]:
        """Running jobs whose expected end is not after now (estimate too short)."""
        out = []
        for e, j in self.ends:
            if e > self.now:
                break
            out.append(j)
        return out

    def postpone(self, jobs: list[int], until: int) -> None:
        """Expect running ``jobs`` to end at ``until`` instead (they outlived the estimate)."""
        for j in jobs:
            e = self.end_of[j]
            del self.ends[bisect_left(self.ends, (e, j))]
            insort(self.ends, (until, j))
            self.end_of[j] = until

    # ---- interface of the subclasses -------------------------------------------------

    def any_free(self) -> bool:
        """False when no queued job can possibly start now (nothing free)."""
        raise NotImplementedError

    def fits(self, job: int) -> bool:
        """Whether ``job`` can start now; remembers the placement for :meth:`start`."""
        raise NotImplementedError

    def start(self, job: int) -> Start:
        """Start ``job`` now (after :meth:`fits` returned true for it)."""
        raise NotImplementedError

    def reserve(self, job: int) -> int:
        """EASY: the earliest time ``job`` fits given expected ends (the shadow time), or
        :data:`NEVER` when it cannot fit the usable nodes even once every running job has
        ended (nodes are down or off: no reservation holds until they are back).

        Remembers what stays free at that time beside the job's reservation ("extra").
        """
        raise NotImplementedError

    def fits_beside(self, job: int) -> bool:
        """EASY: fits now using only capacity that is also extra at the shadow time."""
        raise NotImplementedError

    def start_beside(self, job: int) -> Start:
        """EASY: start ``job`` (after :meth:`fits_beside`), consuming extra capacity."""
        raise NotImplementedError

    def availability(self) -> Availability:
        """An empty resource-time availability of the whole machine."""
        raise NotImplementedError

    def held(self, job: int) -> Any:
        """What running ``job`` holds, in the availability's placement type."""
        raise NotImplementedError

    def running_parts(self) -> list[tuple[int, int, Any]]:
        """(expected end, job, what it holds) of every running job started through this
        machine, each component of a heterogeneous job on its own."""
        return [(e, j, self.held(j)) for e, j in self.ends]

    def start_reserved(self, job: int, placement: Any) -> Start:
        """Start ``job`` now on the placement its availability reservation holds."""
        raise NotImplementedError


class SlotMachine(Machine):
    """All units ask one resource vector: capacity is a count of unit slots."""

    def __init__(
        self,
        view: SystemView,
        allocator: Allocator,
        estimator: DurationEstimator,
        slots_per_node: IntArray,
    ):
        super().__init__(view, allocator, estimator)
        self.slots = slots_per_node
        self.total = int(slots_per_node[view.alive].sum())
        self.busy = 0
        self.free = self.total
        self.extra = 0
        self._placed: tuple[int, IntArray, IntArray] | None = None
        self._req = view.unit_request if view.unit_request is not None else \
            np.zeros(0, np.int64)
        #: first-fit from its own free slots per node (the first-fit allocator, no power
        #: budget): a start reads no scratch matrix and makes no compiled call
        self._slots: FreeSlots | None = None
        if type(allocator) is FirstFit and view.budget is None and len(self._req):
            self._slots = FreeSlots(view, self._req, int(slots_per_node.max(initial=0)))
        self._starts: list[Start] = []  # this call's starts (own slots: the workspace's replay)

    def begin(self, view: SystemView, events: Events) -> None:
        """Release the slots of jobs that stopped; recount slots when nodes changed."""
        own = self._slots
        if events.aborted or self._observe is not None:
            super().begin(view, events)
        else:  # the common case, inlined: jobs that ended release their slots
            finished = events.finished
            if finished:
                ends, end_of, start_of, units = self.ends, self.end_of, self._start_of, self.units
                busy = self.busy
                for j in finished:
                    e = end_of.pop(j, None)
                    if e is None:
                        continue  # not started through this machine
                    if ends[0][1] == j:
                        del ends[0]
                    else:
                        del ends[bisect_left(ends, (e, j))]
                    del start_of[j]
                    busy -= units[j]
                    if own is not None:
                        own.give_back(j)
                self.busy = busy
            self.now = view.now
            self._ws = None
        if self._starts:
            self._starts = []
        if events.nodes:
            self.total = int(self.slots[view.alive].sum())
        if own is not None and own.changes != view.node_changes:
            own.sync(view)  # nodes changed state since its last look
        self.free = self.total - self.busy

    def _finished(self, job: int) -> None:
        self.busy -= self.units[job]
        if self._slots is not None:
            self._slots.give_back(job)

    def _adopted(self, job: int, nodes: IntArray, counts: IntArray) -> None:
        self.busy += self.units[job]
        self.free = self.total - self.busy
        if self._slots is not None:  # (its slots are already taken in the view's matrix)
            self._slots.held[job] = (nodes.tolist(), counts.tolist())

    def workspace(self) -> Workspace:
        """The scratch free matrix of this call (with its own slots: the view's, minus the
        starts of this call)."""
        if self._ws is None:
            self._ws = ws = Workspace(self.view)
            for d in self._starts:
                ws.take(d.job, d.nodes, d.counts)
        return self._ws

    def any_free(self) -> bool:
        """Some slot is free."""
        return self.free > 0

    def fits(self, job: int) -> bool:
        """Enough free slots (and, under a power budget, enough power where they are)."""
        if self.units[job] > self.free:
            return False
        if self.view.budget is None:
            return True
        ws = self.workspace()
        placed = self.alloc.place(ws.free, self._req, self.units[job])
        if placed is None or not ws.power_fits(job, *placed):
            return False
        self._placed = (job, *placed)
        return True

    def start(self, job: int) -> Start:
        """Choose nodes with the allocator (always succeeds when the slots are free)."""
        u = self.units[job]
        own = self._slots
        if own is not None:  # first-fit on its own free slots
            self.free -= u
            self.busy += u
            d = own.take(job, u)
            self._starts.append(d)
            self._expect(job)
            return d
        cached = self._placed
        if cached is not None and cached[0] == job:
            placed: Placement | None = (cached[1], cached[2])
            self._placed = None
        else:  # (no start yet in this call: the free matrix is the view's own)
            ws = self._ws
            placed = self.alloc.place(self.view.free if ws is None else ws.free, self._req, u)
        if placed is None:  # pragma: no cover - guarded by the slot invariant
            raise DispatchlabError(f"slot accounting broke: job {job} does not fit")
        self.free -= u
        self.busy += u
        return self._record(job, placed[0], placed[1])

    def reserve(self, job: int) -> int:
        """Release expected ends in order until ``job`` fits; extra = free then − need."""
        need = self.units[job]
        avail = self.free
        units = self.units
        soon = self.now + 1
        shadow = -1
        for e, j in self.ends:
            t = e if e > soon else soon
            if shadow >= 0 and t > shadow:
                break
            avail += units[j]
            if shadow < 0 and avail >= need:
                shadow = t
        if shadow < 0:  # too large for the usable nodes now: nothing to protect
            self.extra = self.free
            return NEVER
        self.extra = avail - need
        return shadow

    def fits_beside(self, job: int) -> bool:
        """Fits now and within the extra slots."""
        return self.units[job] <= self.extra and self.fits(job)

    def start_beside(self, job: int) -> Start:
        """Start and consume extra slots."""
        self.extra -= self.units[job]
        return self.start(job)

    def availability(self) -> SlotAvailability:
        """A slot-count availability of the usable nodes."""
        return SlotAvailability(self.total, self.units, n_jobs=self.view.jobs.n_jobs)

    def held(self, job: int) -> int:
        """Slots = units."""
        return self.units[job]

    def start_reserved(self, job: int, placement: Any) -> Start:
        """Slots are interchangeable: allocate now."""
        return self.start(job)


class NodeMachine(Machine):
    """General case: fits on the nodes × resources matrix, honouring operator rules.

    With ``view.rules`` (:class:`~dispatchlab.engine.constraints.Constraints`) a job is
    placed only when it is eligible (queue window open, queue not stopped, inside its
    reservation) and only on the nodes it may use then (its queue's nodes, minus nodes
    whose reservation its wall-time would run into; its reservation's nodes); a
    heterogeneous job is placed and started as a whole — :meth:`start` returns the first
    component's decision and keeps the others in :attr:`companions` for the policy.

    EASY's reservation for the head is made at the earliest time it is eligible and fits
    on the nodes it may use (given expected ends and rule changes), on the nodes the
    dispatcher's allocator chooses on what is free then — where the head would go if it
    started at that time, as a scheduler with that node-selection policy would reserve.
    """

    def __init__(self, view: SystemView, allocator: Allocator, estimator: DurationEstimator):
        super().__init__(view, allocator, estimator)
        self.rules = view.rules
        self.companions: list[Start] = []
        self._placed: tuple[int, Any] | None = None
        self._held: dict[int, Placement] = {}  # each running job's own nodes and counts
        self._groups: dict[int, GroupPlacement] = {}  # heterogeneous jobs, by leader
        self.extra: IntArray = np.zeros_like(view.capacity)
        top = view.capacity.max(axis=0).astype(np.float64)
        self._scale = 1.0 / np.where(top > 0, top, 1.0)
        self._req = LiveRequests(view)

    def _finished(self, job: int) -> None:
        self._held.pop(job, None)
        self._groups.pop(job, None)

    def _adopted(self, job: int, nodes: IntArray, counts: IntArray) -> None:
        self._held[job] = (nodes, counts)

    def take_companions(self) -> list[Start]:
        """The other components' starts decided in this call (then forgotten)."""
        out, self.companions = self.companions, []
        return out

    def any_free(self) -> bool:
        """Some resource is free somewhere."""
        return any(self.workspace().free_total)

    def _room(self, free: IntArray, job: int, t: int) -> IntArray:
        """``free`` restricted to the nodes the job may use if it starts at ``t``."""
        mask = None if self.rules is None else self.rules.allowed_nodes(job, t)
        return free if mask is None else np.where(mask[:, None], free, 0)

    def _try(self, job: int, free: IntArray) -> bool:
        """Place the job within ``free`` (and the power budget); remember the placement."""
        ws = self.workspace()
        if self.rules is None:
            placed = self.alloc.place(free, self.view.req[job], self.units[job])
            if placed is None or not ws.power_fits(job, *placed):
                return False
            self._placed = (job, placed)
            return True
        group = place_all(self.rules, self.alloc, self._req, self.units, job,
                          self._room(free, job, self.now))
        if group is None:
            return False
        if self.view.budget is not None:
            power = group_power(self.view, ws.free, group)
            if power > ws.power_left + 1e-6:
                return False
        self._placed = (job, group if len(group) > 1 else (group[0][1], group[0][2]))
        return True

    def _eligible(self, job: int) -> bool:
        return self.rules is None or self.rules.eligible(job, self.now)

    def fits(self, job: int) -> bool:
        """Eligible now, pooled totals first, then the allocator on the node matrix."""
        ws = self.workspace()
        grouped = self.rules is not None and job in self.rules.components
        if not grouped and not ws.fits_total(job):
            return False
        return self._eligible(job) and self._try(job, ws.free)

    def start(self, job: int) -> Start:
        """Start on the placement found by the last successful check."""
        placed = self._placed
        if placed is None or placed[0] != job:
            raise DispatchlabError(f"start of job {job} without a successful fit check")
        self._placed = None
        return self.start_reserved(job, placed[1])

    def start_reserved(self, job: int, placement: Any) -> Start:
        """Start ``job`` on ``placement``: (nodes, counts), or one triple per component of
        a heterogeneous job (the job itself first)."""
        if not isinstance(placement, list):
            nodes, counts = placement
            self._held[job] = (nodes, counts)
            return self._record(job, nodes, counts)
        first: Start | None = None
        for comp, nodes, counts in placement:
            self._held[comp] = (nodes, counts)
            d = self._record(comp, nodes, counts)
            if comp == job:
                first = d
            else:
                self.companions.append(d)
        if first is None:  # pragma: no cover - placements always hold their leader
            raise DispatchlabError(f"placement of job {job} lacks the job itself")
        if len(placement) > 1:
            self._groups[job] = placement
        return first

    def held(self, job: int) -> Any:
        """A running job's placement (a component list for a heterogeneous job)."""
        return self._groups.get(job, self._held[job])

    def running_parts(self) -> list[tuple[int, int, Any]]:
        """Each running job or component with its own nodes and counts."""
        return [(e, j, self._held[j]) for e, j in self.ends]

    def fits_beside(self, job: int) -> bool:
        """EASY backfilling: eligible, placeable within ``min(free now, extra)``."""
        ws = self.workspace()
        if self.rules is None and not ws.fits_total(job):
            return False
        return self._eligible(job) and self._try(job, np.minimum(ws.free, self.extra))

    def start_beside(self, job: int) -> Start:
        """Start and consume extra capacity on the chosen nodes."""
        placed = self._placed
        if placed is not None and placed[0] == job:
            parts = placed[1] if isinstance(placed[1], list) else [(job, *placed[1])]
            for comp, nodes, counts in parts:
                self.extra[nodes] -= counts[:, None] * self.view.req[comp]
        return self.start(job)

    def reserve(self, job: int) -> int:
        """EASY's shadow time for ``job``: release expected ends in order (and step through
        rule changes) until it is eligible and fits; reserve where the allocator places it."""
        ws = self.workspace()
        rules, req, units = self.rules, self.view.req, self.units
        future = ws.free.copy()
        pooled = np.asarray(ws.free_total, dtype=np.int64)
        need_total = units[job] * req[job]
        simple = rules is None or job not in rules.components
        ends, i, n = self.ends, 0, len(self.ends)
        soon = self.now + 1
        t = soon
        for _ in range(_MAX_STEPS):
            while i < n and max(ends[i][0], soon) <= t:
                j = ends[i][1]
                nodes, counts = self._held[j]
                used = counts[:, None] * req[j]
                future[nodes] += used
                pooled += used.sum(axis=0)
                i += 1
            if (not simple or (pooled >= need_total).all()) and \
                    (rules is None or rules.eligible(job, t)):
                room = self._room(future, job, t)
                group = (place_all(rules, self.alloc, self._req, units, job, room)
                         if rules is not None else
                         _single(job, self.alloc.place(room, req[job], units[job])))
                if group is not None:
                    for comp, nodes, counts in group:
                        future[nodes] -= counts[:, None] * req[comp]
                    self.extra = future
                    return t
            nxt = min(ends[i][0] if i < n else _FAR,
                      rules.next_change(t) if rules is not None else _FAR)
            if nxt >= _FAR:
                break
            t = max(nxt, t + 1)
        # too large for the usable nodes (some are down or off) or never eligible: no
        # reservation to protect (the engine rejects jobs the whole machine cannot host)
        self.extra = ws.free.copy()
        return NEVER

    def availability(self) -> NodeAvailability:
        """A nodes × resources availability of the usable nodes, placing reservations with this
        machine's allocator, honouring the operator rules."""
        return NodeAvailability(alive_capacity(self.view), self._req, self.units, self.alloc,
                           self.rules)


def _single(job: int, placed: Placement | None) -> GroupPlacement | None:
    return None if placed is None else [(job, placed[0], placed[1])]


def make_machine(view: SystemView, allocator: Allocator, estimator: DurationEstimator,
                 nodes: bool = False) -> Machine:
    """A :class:`SlotMachine` when all units ask the same vector, no operator rule applies
    and ``nodes`` (concrete placements wanted) is not set, else a :class:`NodeMachine`."""
    machine: Machine
    if view.unit_request is not None and view.rules is None and not nodes:
        machine = SlotMachine(view, allocator, estimator,
                              units_fitting(view.capacity, view.unit_request))
    else:
        machine = NodeMachine(view, allocator, estimator)
    machine.adopt(view)
    return machine


def alive_capacity(view: SystemView) -> IntArray:
    """The capacity of the usable nodes (rows of the others are 0)."""
    if view.alive.all():
        return view.capacity
    return np.where(view.alive[:, None], view.capacity, 0)


def group_power(view: SystemView, free: IntArray, group: list[Any]) -> float:
    """What the components ``(job, nodes, counts)`` of a heterogeneous job add to the power
    when they start together from ``free`` (each after the ones before it)."""
    scratch = free.copy()
    total = 0.0
    for job, nodes, counts in group:
        total += view.power_of(job, nodes, counts, scratch)
        scratch[nodes] -= counts[:, None] * view.req[job]
    return total
