"""Test helpers: a decision-recording wrapper and an independent minimal EASY simulator."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dispatchlab.dispatchers.base import Dispatcher
from dispatchlab.engine.decisions import Decision, Plan, Start
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView
from dispatchlab.metrics.results import Results


@dataclass
class Call:
    """One decision point: its time and the starts and plans returned, in order."""

    time: int
    decisions: list[tuple[str, int, int]]  # ("start" | "plan", job, time)

    @property
    def starts(self) -> list[int]:
        return [j for kind, j, _ in self.decisions if kind == "start"]

    @property
    def plans(self) -> list[tuple[int, int]]:
        return [(j, t) for kind, j, t in self.decisions if kind == "plan"]


@dataclass
class Recording:
    """Every call of a run, in order."""

    calls: list[Call] = field(default_factory=list)

    def plans_of(self) -> dict[int, list[tuple[int, int]]]:
        """Job → [(call time, planned start), …] in call order."""
        out: dict[int, list[tuple[int, int]]] = {}
        for c in self.calls:
            for j, t in c.plans:
                out.setdefault(j, []).append((c.time, t))
        return out


class Recorded:
    """Wraps a dispatcher and records what it returns at each call (for property tests)."""

    def __init__(self, inner: Dispatcher) -> None:
        self.inner = inner
        self.name = inner.name
        self.oracle = bool(getattr(inner, "oracle", False))  # forwards the declaration
        self.recording = Recording()

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        self.recording = Recording()
        self.inner.reset(view, rng)

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        out = self.inner.decide(view, events)
        seen: list[tuple[str, int, int]] = []
        for d in out:
            if isinstance(d, Start):
                seen.append(("start", d.job, view.now))
            elif isinstance(d, Plan):
                seen.append(("plan", d.job, d.time))
        self.recording.calls.append(Call(view.now, seen))
        return out

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    def run_stats(self) -> dict[str, Any]:
        return self.inner.run_stats()


def placement(res: Results, job: int) -> tuple[list[int], list[int]]:
    """Node indices and unit counts a job ran on."""
    assert res.recorder is not None
    nodes, counts = res.recorder.alloc_nodes[job], res.recorder.alloc_counts[job]
    assert nodes is not None and counts is not None
    return nodes.tolist(), counts.tolist()


def reference_easy(
    submit: np.ndarray, duration: np.ndarray, estimate: np.ndarray, procs: np.ndarray,
    total: int,
) -> np.ndarray:
    """Textbook FIFO + EASY over a pool of ``total`` processors; returns start times.

    Written for clarity, independently of dispatchlab: at every instant with an event, end
    the jobs due, queue the arrivals, start the queue head while it fits, then reserve for
    the blocked head (shadow time = when enough processors are free if running jobs end at
    start + estimate; extra = processors free then beyond the head's need) and backfill
    every later job that fits now and ends by the shadow time or fits in the extra.
    """
    n = len(submit)
    start = np.full(n, -1, dtype=np.int64)
    ends: list[tuple[int, int]] = []  # (actual end, job)
    expected: dict[int, int] = {}  # running job → expected end
    queue: list[int] = []
    free = total
    nxt = 0
    while nxt < n or ends:
        now = int(submit[nxt]) if nxt < n else ends[0][0]
        if ends and ends[0][0] < now:
            now = ends[0][0]
        while ends and ends[0][0] == now:
            _, j = heapq.heappop(ends)
            free += int(procs[j])
            del expected[j]
        while nxt < n and submit[nxt] == now:
            queue.append(nxt)
            nxt += 1

        def run(j: int, now: int) -> None:
            nonlocal free
            start[j] = now
            free -= int(procs[j])
            expected[j] = now + int(estimate[j])
            heapq.heappush(ends, (now + int(duration[j]), j))

        while queue and procs[queue[0]] <= free:
            run(queue.pop(0), now)
        if not queue:
            continue
        head = queue[0]
        avail, shadow = free, None
        for e, j in sorted((e, j) for j, e in expected.items()):
            if shadow is not None and e > shadow:
                break
            avail += int(procs[j])
            if shadow is None and avail >= procs[head]:
                shadow = e
        assert shadow is not None
        extra = avail - int(procs[head])
        for j in list(queue[1:]):
            if procs[j] > free:
                continue
            if now + estimate[j] <= shadow:
                run(j, now)
                queue.remove(j)
            elif procs[j] <= extra:
                run(j, now)
                queue.remove(j)
                extra -= int(procs[j])
    return start
