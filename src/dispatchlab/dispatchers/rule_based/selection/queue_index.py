"""The queued jobs indexed by job index with their unit counts and expected durations: which
is the next queued job after a given one that EASY could backfill, without visiting the
others.

EASY's backfill scan on an overloaded machine walks a long queue of jobs that cannot
start. A job behind the head can start only if its units are free (and, under a power
budget, what they draw at least fits what is left) and it either ends by the shadow time
or fits the extra units. When the queue is kept by job index (arrival orderings) this
index lets the scan jump from one such job to the next: a segment tree over job indices
(Python lists: one value per lookup, no numpy call overhead) holding, per subtree, the
fewest units and the shortest expected duration of its queued jobs; a subtree is skipped
when no job of it can meet the conditions.
"""

from __future__ import annotations

_NONE = 1 << 62  # the value of a job that is not queued


class BackfillIndex:
    """Fewest units and shortest durations over subtrees of job indices ``0 … n − 1``
    (queued jobs only)."""

    __slots__ = ("count", "dur", "known", "size", "units")

    def __init__(self, n_jobs: int) -> None:
        self.size = 1 << max(1, (max(n_jobs, 1) - 1).bit_length())
        self.units: list[int] = [_NONE] * (2 * self.size)
        self.dur: list[int] = [_NONE] * (2 * self.size)
        self.count = 0  # jobs held
        self.known = 0  # jobs submitted when the index was last brought up to date

    def put(self, job: int, units: int, duration: int) -> None:
        """``job`` is queued, asking ``units`` for an expected ``duration``."""
        i = job + self.size
        if self.units[i] == _NONE:
            self.count += 1
        self._set(i, units, duration)

    def drop(self, job: int) -> None:
        """``job`` left the queue."""
        i = job + self.size
        if self.units[i] != _NONE:
            self.count -= 1
            self._set(i, _NONE, _NONE)

    def _set(self, i: int, units: int, duration: int) -> None:
        us, ds = self.units, self.dur
        us[i] = units
        ds[i] = duration
        i >>= 1
        while i:
            u = min(us[2 * i], us[2 * i + 1])
            d = min(ds[2 * i], ds[2 * i + 1])
            if us[i] == u and ds[i] == d:
                break
            us[i] = u
            ds[i] = d
            i >>= 1

    def next_candidate(self, first: int, limit: int, within: int, extra: int) -> int:
        """The lowest queued job index ``≥ first`` asking at most ``limit`` units that
        either lasts at most ``within`` seconds or asks at most ``extra`` units; -1 if none.
        """
        size, us, ds = self.size, self.units, self.dur
        if first >= size:
            return -1
        i = first + size
        while True:
            u = us[i]
            if u <= limit and (u <= extra or ds[i] <= within):
                if i >= size:
                    return i - size
                i <<= 1  # a subtree that may hold one: its left half first
                continue
            while i & 1:  # a right child: climb to the first ancestor with a right sibling
                i >>= 1
            if i == 0:
                return -1
            i += 1
