"""Versioned timers: a heap of ``(time, key, version)`` where a later plan for the same
key makes the earlier entries stale (DARDIS's planned starts, its node power-ons)."""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping
from typing import Protocol, TypeVar


class Versioned(Protocol):
    """Anything carrying the version its timer was pushed with."""

    @property
    def version(self) -> int: ...


V = TypeVar("V", bound=Versioned)


def pop_due(heap: list[tuple[int, int, int]], now: int, live: Mapping[int, V]
            ) -> Iterator[tuple[int, V]]:
    """Pop the timers due by ``now`` and yield ``(key, live[key])`` for those still current
    (the key is live with the timer's version); stale ones are dropped. The heap is
    re-read at each step, so the caller may push (later) timers meanwhile."""
    while heap and heap[0][0] <= now:
        _, key, version = heapq.heappop(heap)
        item = live.get(key)
        if item is not None and item.version == version:
            yield key, item
