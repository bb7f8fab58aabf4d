"""The slot availability: free interchangeable unit slots as a step function of future time.

Used by conservative backfilling when every job's unit asks the same resource vector. The
breakpoints and counts live in two preallocated arrays (numpy when the compiled kernels are
available, Python lists otherwise) operated on by
:mod:`~dispatchlab.engine.compiled.slot_availability_ops` — the same source either way.
:class:`SlotReservations` keeps conservative backfilling's reservations next to it, in
arrays too, and compresses them all in one call.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np

from dispatchlab.dispatchers.slot_book_ops import TABLES, compress_kernel, rebuild_kernel
from dispatchlab.engine.compiled.compiled_ops import slot_availability_ops
from dispatchlab.engine.compiled.slot_availability_ops import NEVER, NONE


class SlotAvailability:
    """Free unit slots over time; a job's placement is its unit count."""

    __slots__ = ("_free", "_known", "_ops", "_times", "n", "need", "size", "units")

    def __init__(self, total: int, units: list[int], ops: SimpleNamespace | None = None,
                 n_jobs: int | None = None):
        """``units``: each job's units — a list that may grow as jobs arrive, up to
        ``n_jobs`` (default: its length now); ``ops``: the operations (default: compiled
        when available, see
        :func:`~dispatchlab.engine.compiled.compiled_ops.slot_availability_ops`)."""
        ops = ops or slot_availability_ops()
        self._ops = ops
        self.units = units
        self.size = len(units) if n_jobs is None else n_jobs
        self._known = len(units)
        self.n = 1
        if ops.compiled:
            self.need: Any = np.zeros(self.size, dtype=np.int64)
            self.need[:self._known] = units
            self._times: Any = np.zeros(64, dtype=np.int64)
            self._free: Any = np.zeros(64, dtype=np.int64)
        else:
            self.need = units
            self._times = [0] * 64
            self._free = [0] * 64
        self._free[0] = total

    # ---- views -----------------------------------------------------------------------

    @property
    def times(self) -> list[int]:
        """Breakpoints: ``times[0]`` = now, strictly increasing."""
        return [int(t) for t in self._times[: self.n]]

    @property
    def free(self) -> list[int]:
        """Free slots per segment."""
        return [int(f) for f in self._free[: self.n]]

    def __len__(self) -> int:
        return self.n

    def sync(self) -> None:
        """Take in the units of jobs that arrived since the last call."""
        known = len(self.units)
        if known > self._known and self._ops.compiled:
            self.need[self._known:known] = self.units[self._known:known]
        self._known = known

    def job_array(self, fill: int) -> Any:
        """A per-job integer array of the kind the operations take, filled with ``fill``."""
        size = self.size
        if self._ops.compiled:
            return np.full(size, fill, dtype=np.int64)
        return [fill] * size

    # ---- the Availability operations -----------------------------------------------------

    def advance(self, now: int) -> None:
        """Drop the past: the first segment starts at ``now``."""
        self.n = self._ops.avail_advance(self._times, self._free, self.n, now)

    def _room(self, more: int) -> None:
        """Grow the arrays so that ``more`` breakpoints fit."""
        cap = len(self._times)
        if self.n + more <= cap:
            return
        while cap < self.n + more:
            cap *= 2
        if self._ops.compiled:
            self._times = np.resize(self._times, cap)
            self._free = np.resize(self._free, cap)
        else:
            self._times += [0] * (cap - len(self._times))
            self._free += [0] * (cap - len(self._free))

    def take(self, job: int, t0: int, t1: int, placement: int) -> None:
        """Occupy ``placement`` slots over ``[t0, t1)``."""
        self._room(2)
        self.n = self._ops.avail_add(self._times, self._free, self.n, t0, t1, -placement)

    def give(self, job: int, t0: int, t1: int, placement: int) -> None:
        """Free ``placement`` slots over ``[t0, t1)``."""
        self._room(2)
        self.n = self._ops.avail_add(self._times, self._free, self.n, t0, t1, placement)

    def earliest(self, job: int, dur: int, before: int | None = None) -> tuple[int, int] | None:
        """Earliest start ``< before`` with ``units[job]`` slots free for ``dur`` seconds."""
        need = self.units[job]
        t = self._ops.avail_fit(self._times, self._free, self.n, need, dur,
                               NEVER if before is None else before, NEVER)
        return None if t == NONE else (int(t), need)

    def min_free(self) -> int:
        """Smallest free count anywhere (negative = overcommitted)."""
        return int(self._ops.avail_min_free(self._free, self.n))


#: Books of this many reservations or more compress with
#: :func:`~dispatchlab.dispatchers.slot_book_ops.compress_skipping`.
SKIP_FROM = 256


class SlotReservations:
    """The reservation book of conservative backfilling over a :class:`SlotAvailability`.

    Per job its window ``[start, end)`` (``start`` = NONE: no reservation); a binary heap of
    the reserved jobs by (start, job) (``heap``, their starts by heap position in ``key``)
    with each job's position in it. The operations are
    :mod:`~dispatchlab.engine.compiled.slot_availability_ops`, so a compression is one call
    whatever the queue length. Answers exactly as
    :class:`~dispatchlab.dispatchers.rule_based.selection.reservations.Reservations` would.
    """

    __slots__ = ("_cached", "_out", "_was", "availability", "end", "heap", "hn",
                 "key", "pos", "searched", "start")

    def __init__(self, availability: SlotAvailability) -> None:
        self.availability = availability
        self.start = availability.job_array(NONE)
        self.end = availability.job_array(NONE)
        self.key = availability.job_array(0)
        self.heap = availability.job_array(0)
        self.pos = availability.job_array(-1)
        self.hn = 0
        self._out = availability.job_array(0)  # room for every job
        self._was = np.zeros(availability.size, dtype=np.int64)
        self._cached = np.zeros(TABLES, dtype=np.int64)
        #: Earliest-fit searches the compressions of long books made (jobs passed over at a
        #: glance are not searched: :mod:`~dispatchlab.dispatchers.slot_book_ops`).
        self.searched = 0

    def __contains__(self, job: int) -> bool:
        return bool(self.pos[job] >= 0)

    def reserve(self, job: int, dur: int) -> int | None:
        """Earliest fit, taken from the availability."""
        avail = self.availability
        avail._room(2)
        avail.n, self.hn, t = avail._ops.avail_reserve(
            avail._times, avail._free, avail.n, job, avail.units[job], dur, NEVER, self.start,
            self.end, self.key, self.heap, self.pos, self.hn)
        return None if t == NONE else int(t)

    def compress(self, order: list[int], now: int) -> tuple[list[int], list[int]]:
        """All of :meth:`Reservations.compress
        <dispatchlab.dispatchers.rule_based.selection.reservations.Reservations.compress>` in one
        compiled call (more when the availability's arrays must grow on the way), searching
        only the reservations that may move when the book holds :data:`SKIP_FROM` or more
        (:func:`~dispatchlab.dispatchers.slot_book_ops.compress_skipping`; a shorter one
        compresses with the ahead-of-time compiled operation, no JIT kernel to load)."""
        avail = self.availability
        avail.sync()
        ops = avail._ops
        count = len(order)
        seq: Any = np.array(order, dtype=np.int64) if ops.compiled else order
        out, start = self._out, self.start
        jobs: list[int] = []
        first = 0
        while first < count:
            avail._room(len(avail._times) if first else 4)  # double when it ran out of room
            if self.hn < SKIP_FROM:
                avail.n, n_moved, first = ops.avail_compress(
                    avail._times, avail._free, avail.n, seq, first, count, start, self.end,
                    avail.need, now, self.key, self.heap, self.pos, out)
            else:
                best = np.empty((TABLES, len(avail._times)), dtype=np.int64)
                avail.n, n_moved, first, searched = compress_kernel(ops.compiled)(
                    avail._times, avail._free, avail.n, seq, first, count, start, self.end,
                    avail.need, now, self.key, self.heap, self.pos, out, best, self._cached)
                self.searched += searched
            jobs += out[:n_moved].tolist() if ops.compiled else out[:n_moved]
        if ops.compiled:
            return jobs, start[jobs].tolist()
        return jobs, [start[j] for j in jobs]

    def rebuild(self, order: list[int], now: int) -> tuple[list[int], list[int]]:
        """Give every reservation back (from ``now`` on) and reserve again, in the order of
        ``order``, each job that held one, for its old duration, at its earliest fit — as
        :meth:`drain`, giving back and :meth:`reserve` one by one would, in one compiled
        call. Returns the jobs reserved again, in order, and their starts (a job without a
        fit is no longer in the book)."""
        avail = self.availability
        avail.sync()
        ops = avail._ops
        avail._room(4 * self.hn + 4)
        seq: Any = np.array(order, dtype=np.int64) if ops.compiled else order
        avail.n, self.hn, n_placed = rebuild_kernel(ops.compiled)(
            avail._times, avail._free, avail.n, seq, len(order), self.start, self.end,
            avail.need, now, self.key, self.heap, self.pos, self.hn, self._was, self._out)
        jobs = self._out[:n_placed].tolist() if ops.compiled else self._out[:n_placed]
        if ops.compiled:
            return jobs, self.start[jobs].tolist()
        return jobs, [self.start[j] for j in jobs]

    def next_due(self) -> int:
        """Start of the heap's top."""
        return int(self.key[0]) if self.hn else NEVER

    def pop_due(self, now: int) -> list[tuple[int, int, Any]]:
        """Pop the due jobs off the heap; a slot placement is the job's unit count."""
        if not self.hn or self.key[0] > now:
            return []
        ops = self.availability._ops
        self.hn, count = ops.book_pop_due(self.start, self.key, self.heap, self.pos, self.hn,
                                          now, self._out)
        units, end = self.availability.units, self.end
        jobs = self._out[:count].tolist() if ops.compiled else self._out[:count]
        return [(j, int(end[j]), units[j]) for j in jobs]

    def drain(self) -> list[tuple[int, int, int, Any]]:
        """Everything, emptied."""
        units = self.availability.units
        jobs = sorted(int(j) for j in self.heap[: self.hn])
        out = [(j, int(self.start[j]), int(self.end[j]), units[j]) for j in jobs]
        for j in jobs:
            self.start[j] = self.end[j] = NONE
            self.pos[j] = -1
        self.hn = 0
        return out
