"""A node availability that also keeps the machine's IT power over future time, under a cap.

:class:`PowerAvailability` is a :class:`~dispatchlab.dispatchers.availability.NodeAvailability`
whose
reservations must fit the power cap as well as the nodes: at every segment of the window a
job would occupy, the IT power then — rebuilt from the availability's free capacity through the
engine's power meter (idle nodes, node states and the node model's first-core cost
included), plus the own power of the jobs held then in job-power mode — plus what the job
adds on the nodes the allocator gives it must stay within the cap. The power is a
non-decreasing function of what is in use on each node, so giving capacity back (an early
end, a reservation moving) never takes any segment over the cap; only the cap falling can.

The cap is the one in force now, then the announced ``power_cap`` changes of
``view.scenario``: each segment part a job would occupy is checked against the lowest cap
announced over it, and every announced change is a breakpoint of the availability (a start time
tried), so a job may be reserved from the moment a rise lets it in.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from dispatchlab.arrays import BoolArray, FloatArray, IntArray
from dispatchlab.dispatchers.allocators import Allocator
from dispatchlab.dispatchers.availability import LiveRequests, NodeAvailability
from dispatchlab.dispatchers.group_placement import GroupPlacement
from dispatchlab.dispatchers.rule_based.segment_power import SegmentMeter
from dispatchlab.engine.budget import EPS
from dispatchlab.engine.cap_schedule import announced_caps
from dispatchlab.engine.constraints import Constraints
from dispatchlab.engine.power_meter import MachinePower
from dispatchlab.engine.state import Budget, SystemView
from dispatchlab.platform.node_states import ON

#: Watts per unit (and one more) taken off a lower bound of what a start adds: far above the
#: rounding of the meter's sums, far below any node figure.
_ROUNDING = 1e-6


class PowerAvailability(NodeAvailability):
    """Free capacity per node over time, and the IT power it implies, under ``budget``."""

    __slots__ = ("_fixed", "_floors", "_parts", "_power", "_segments", "budget", "meter",
                 "view")

    def __init__(self, view: SystemView, capacity: IntArray, req: IntArray | LiveRequests,
                 units: list[int], alloc: Allocator, rules: Constraints | None,
                 meter: MachinePower, budget: Budget):
        super().__init__(capacity, req, units, alloc, rules)
        self.view, self.meter, self.budget = view, meter, budget
        self._segments = SegmentMeter(meter)
        # job-power mode: the jobs' own power held over windows, (t0, t1, W); a give adds
        # the negative entry
        self._parts: list[tuple[int, int, float]] = []
        self._power: tuple[tuple[int, bytes], FloatArray] | None = None  # segment_power
        self._floors: dict[bytes, float] = {}  # per request row: the meter's unit floor
        self._fixed: tuple[tuple[int, float, bytes], float | None] | None = None  # fixed_cap

    def advance(self, now: int) -> None:
        """Drop the past (and the job-power entries that ended)."""
        super().advance(now)
        if self._parts:
            self._parts = [p for p in self._parts if p[1] > now]

    def _own(self, job: int, placement: Any) -> float:
        """The jobs' own power of ``placement`` (0 in node mode)."""
        if self.meter.jobs is None:
            return 0.0
        if isinstance(placement, list):
            return sum(self.meter.job_part(c, n, k) for c, n, k in placement)
        return self.meter.job_part(job, *placement)

    def take(self, job: int, t0: int, t1: int, placement: Any) -> None:
        """Occupy ``placement`` over ``[t0, t1)``, its own power too."""
        kept = self._kept_power()
        super().take(job, t0, t1, placement)
        w = self._own(job, placement)
        if w:
            self._parts.append((t0, t1, w))
        self._carry_power(kept, t0, t1)

    def give(self, job: int, t0: int, t1: int, placement: Any) -> None:
        """Free ``placement`` over ``[t0, t1)``, its own power too."""
        kept = self._kept_power()
        super().give(job, t0, t1, placement)
        w = self._own(job, placement)
        if w:
            self._parts.append((t0, t1, -w))
        self._carry_power(kept, t0, t1)

    def _kept_power(self) -> tuple[IntArray, FloatArray] | None:
        """The breakpoints and the :meth:`segment_power` kept for them, when it is valid
        now and the nodes alone make it (no job-power entries)."""
        got = self._power
        if got is None or self._parts or got[0] != (self.timeline.version,
                                                    self.view.node_state.tobytes()):
            return None
        return self.segment_times(), got[1]

    def _carry_power(self, kept: tuple[IntArray, FloatArray] | None, t0: int, t1: int
                     ) -> None:
        """After a change over ``[t0, t1)``: the segment power of the segments outside it
        taken over from ``kept``, that of the segments inside it computed (each segment's
        figure depends on its own free capacity alone, so it is the one a full pass gives)."""
        if kept is None:
            return
        old_times, old_power = kept
        times = self.segment_times()
        power = old_power[np.searchsorted(old_times, times, side="right") - 1]
        a, b = np.searchsorted(times, (t0, t1)).tolist()
        if b > a:
            power[a:b] = self._segments.nodes_power(self.free[a:b])
        self._power = ((self.timeline.version, self.view.node_state.tobytes()), power)

    def segment_power(self) -> FloatArray:
        """The IT power (W) of each segment: nodes (from their free capacity, states as
        now) plus the jobs' own power held then (kept while neither changes; not to be
        written to)."""
        key = (self.timeline.version, self.view.node_state.tobytes())
        if self._power is not None and self._power[0] == key:
            return self._power[1]
        power = self._segments.nodes_power(self.free)
        if self._parts:
            times = np.asarray(self.times, dtype=np.int64)
            for t0, t1, w in self._parts:
                power[(times >= t0) & (times < t1)] += w
        self._power = (key, power)
        return power

    def headroom(self, job: int) -> float | None:
        """Under a fixed cap, the most IT power a segment may draw for ``job`` to start in
        it: the cap (and the meter's tolerance) less a lower bound of what any placement
        of the job adds — its units times the meter's
        :meth:`~dispatchlab.engine.power_meter.MachinePower.unit_floor`, a little less
        for rounding. ``None`` when there is no such bound (announced cap changes, nodes
        not all on, jobs drawing their own power)."""
        cap = self.fixed_cap()
        if cap is None:
            return None
        req = self.req[job]
        key = req.tobytes()
        floor = self._floors.get(key)
        if floor is None:
            floor = self._floors[key] = self.meter.unit_floor(req)
        units = self.units[job]
        low = units * floor - _ROUNDING * (1 + units)
        return cap + EPS - low if low > 0 else None

    def fixed_cap(self) -> float | None:
        """The cap when it is the same over all future time and every node is on (the
        conditions of :meth:`headroom`), else ``None``; kept while the time, the cap and
        the node states are unchanged."""
        view = self.view
        key = (view.now, self.budget.cap, view.node_state.tobytes())
        if self._fixed is None or self._fixed[0] != key:
            caps = announced_caps(view, self.budget.cap)
            fixed = None if caps.times or math.isinf(caps.now_cap) or not (
                view.node_state == ON).all() else caps.now_cap
            self._fixed = (key, fixed)
        return self._fixed[1]

    def power_room(self, job: int) -> tuple[np.ndarray, float] | None:
        """The segments' power and the :meth:`headroom` it must leave for ``job``."""
        room = self.headroom(job)
        return None if room is None else (self.segment_power(), room)

    def window_filter(self, job: int) -> Callable[[IntArray, IntArray], BoolArray] | None:
        """Rule out the windows where some segment's power leaves no :meth:`headroom`
        (every placement there would exceed the cap)."""
        room = self.headroom(job)
        if room is None:
            return None
        over = np.concatenate(([0], np.cumsum(self.segment_power() > room)))

        def keep(starts: IntArray, ends: IntArray) -> BoolArray:
            return over[ends] == over[starts]  # no segment over in [start, end)

        return keep

    def earliest(self, job: int, dur: int, before: int | None = None
                 ) -> tuple[int, Any] | None:
        """Earliest start ``< before`` where the job fits in nodes and power (announced cap
        changes made breakpoints first)."""
        caps = announced_caps(self.view, self.budget.cap)
        times = self.timeline.times
        for c in caps.times:
            if c > times[0]:
                self.timeline._split(c)
        return super().earliest(job, dur, before)

    def acceptor(self, job: int, dur: int) -> Callable[[Any, int], bool] | None:
        """Accept a placement at ``t`` iff at every segment of ``[t, t + dur)`` the power
        then plus what the job adds on it stays within the lowest cap announced over it."""
        caps = announced_caps(self.view, self.budget.cap)
        if math.isinf(caps.now_cap) and not caps.times:
            return None
        seg: list[FloatArray] = []  # computed on the first placement tested

        def fits(placement: Any, t: int) -> bool:
            if not seg:
                seg.append(self.segment_power())
            power, free, times = seg[0], self.free, self.times
            i, e = self.timeline.window(t, dur)
            limit = caps.now_cap if not caps.times else None
            deltas = None if isinstance(placement, list) else self._segments.start_deltas(
                job, placement[0], placement[1], free[i:e])
            if limit is not None and deltas is not None:  # the loop below, at once
                return not bool((power[i:e] + deltas > limit + EPS).any())
            for k in range(i, e):
                if limit is None:
                    lo = max(times[k], t)
                    hi = min(times[k + 1], t + dur) if k + 1 < len(times) else t + dur
                    cap = caps.lowest(lo, max(hi, lo + 1))
                else:
                    cap = limit
                delta = (self._delta(job, placement, free[k]) if deltas is None
                         else deltas[k - i])
                if power[k] + delta > cap + EPS:
                    return False
            return True

        return fits

    def _delta(self, job: int, placement: Any, free: IntArray) -> float:
        """What ``placement`` adds to the power from ``free`` (components in turn)."""
        if not isinstance(placement, list):
            nodes, counts = placement
            return self.meter.start_delta(job, nodes, counts, free=free)
        group: GroupPlacement = placement
        scratch = free.copy()
        total = 0.0
        for comp, nodes, counts in group:
            total += self.meter.start_delta(comp, nodes, counts, free=scratch)
            scratch[nodes] -= counts[:, None] * self.view.req[comp]
        return total
