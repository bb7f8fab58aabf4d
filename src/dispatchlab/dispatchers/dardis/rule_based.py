"""Profile-aware rule-based baselines RB-FCFS, RB-DF, RB-WT (thesis Alg. 4, §5.5).

At every decision point the queue is ordered (by earliest start — arrival —, by latest
start, or by requested wall-time) and each job in turn starts on the first nodes where a
unit fits both the capacity and the desired profile *now*:
``used[n, k] + req[k] ≤ min(floor(dp_k(now) · c[n, k]), c[n, k])``. The first job that
does not fit gets a reservation (the earliest time the running jobs' requested ends free
enough room under today's limit) and later jobs are backfilled when they fit now and end
by then (the thesis's rule-based reference backfills; it does not say how, we use this
EASY-style rule, within the first ``depth`` jobs behind the reserved one — 400 by
default, the depth of the thesis's PBS setup of §4.5). The profile is hard at start
time only: a profile that drops later does not stop running jobs, which is where the
baselines' over-utilization comes from.

A job whose units could never fit under the highest desired share of the announced
future, even on an empty machine, would wait for ever; it is checked against capacity
alone and counted (``profile_exempt``).
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Sequence
from typing import Any

import numpy as np

from dispatchlab.arrays import IntArray
from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.dispatchers.dardis.task_manager import pack
from dispatchlab.engine.capabilities import Capabilities
from dispatchlab.engine.decisions import Decision, Start
from dispatchlab.engine.desired_utilization import desired_steps
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView

#: Ordering name → what the queue is sorted by.
ORDERS = {"est": "earliest start (arrival)", "lst": "latest start (deadline)",
          "walltime": "requested wall-time"}


class ProfileRuleBased(BaseDispatcher):
    """Ordered queue, first-fit under ``min(profile, capacity)``, one reservation and
    backfilling."""

    capabilities = Capabilities(
        family="dardis", fixed_power_cap=False, varying_power_cap=False,
        follows_desired_utilization=True)

    def __init__(self, order: str = "est", *, backfill: bool = True, depth: int | None = 400,
                 name: str | None = None) -> None:
        if order not in ORDERS:
            raise ValueError(f"unknown order '{order}' (known: {', '.join(ORDERS)})")
        if depth is not None and depth < 0:
            raise ValueError(f"depth must be ≥ 0, got {depth}")
        self.order = order
        self.backfill = backfill
        self.depth = depth
        self.name = name or f"rb:{order}"

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """The desired profile's steps and the sorted queue."""
        self.rng = rng
        plat = view.platform
        self._steps = [desired_steps(view.scenario, r) for r in plat.resources]
        self._top = np.array([float(v.max()) if len(v) else 1.0 for _, v in self._steps])
        self._queue: list[tuple[int, int]] = []
        self._walltime = view.jobs.ints("walltime")
        self._units = view.jobs.ints("units")
        self._est = view.jobs.ints("est")
        self._lst = view.jobs.ints("lst")
        self._submit = view.jobs.ints("submit")
        self._exempt: dict[int, bool] = {}
        self._cycles = 0

    def _key(self, view: SystemView, j: int) -> int:
        if self.order == "walltime":
            return self._walltime[j]
        if self.order == "lst":
            lst = self._lst[j]
            return lst if lst >= 0 else self._submit[j] + int(view.jobs.ewt()[j])
        est = self._est[j]
        return est if est >= 0 else self._submit[j]

    def _limit(self, view: SystemView) -> IntArray:
        """Per node and resource, ``min(floor(share · c), c)`` now."""
        cap = view.capacity
        share = np.ones(cap.shape[1])
        for k, (t, v) in enumerate(self._steps):
            if len(t):
                i = int(np.searchsorted(t, view.now, side="right")) - 1
                share[k] = v[i] if i >= 0 else 1.0
        return np.minimum(np.floor(cap * share[None, :] + 1e-9).astype(np.int64), cap)

    def _fit_units(self, room: IntArray, req: IntArray) -> IntArray:
        asked = req > 0
        return np.maximum((room[:, asked] // req[asked]).min(axis=1), 0)

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        """Start in order what fits under the profile; reserve for the first that does
        not; backfill behind it."""
        for j in (*events.submitted, *events.requeued):
            insort(self._queue, (self._key(view, j), j))
        if not self._queue:
            return ()
        self._cycles += 1
        cap = view.capacity
        used = np.where(view.alive[:, None], cap - view.free, cap)
        limit = self._limit(view)
        room = np.where(view.alive[:, None], limit - used, 0)
        room_cap = view.free.copy()
        out: list[Decision] = []
        started: set[int] = set()
        shadow: int | None = None
        total = room.clip(min=0).sum(axis=0).tolist()
        total_cap = room_cap.sum(axis=0).tolist()
        behind = 0
        for _, j in self._queue:
            if shadow is not None:
                behind += 1
                if self.depth is not None and behind > self.depth:
                    break
                if view.now + self._walltime[j] > shadow:
                    continue
            exempt = self._is_exempt(view, j)
            pooled = total_cap if exempt else total
            if shadow is not None and any(a > pooled[r] for r, a in view.demand_nz[j]):
                continue  # cannot fit now: the pooled room is too small
            req = view.req[j]
            units = self._units[j]
            host = self._fit_units(room_cap, req)
            if not exempt:
                host = np.minimum(self._fit_units(room, req), host)
            if int(host.sum()) >= units:
                nodes, counts = pack(np.arange(len(host)), host, units)
                take = req[None, :] * counts[:, None]
                room[nodes] -= take
                room_cap[nodes] -= take
                spent = take.sum(axis=0).tolist()
                total = [a - b for a, b in zip(total, spent, strict=True)]
                total_cap = [a - b for a, b in zip(total_cap, spent, strict=True)]
                out.append(Start(j, nodes, counts))
                started.add(j)
                if not any(total_cap):
                    break
            elif shadow is None:
                if not self.backfill:
                    break
                shadow = self._shadow(view, j, limit)
        if started:
            self._queue = [(k, j) for k, j in self._queue if j not in started]
        return out

    def _is_exempt(self, view: SystemView, j: int) -> bool:
        """Whether job ``j`` cannot fit under the highest desired share on an empty
        machine (then only capacity applies to it)."""
        known = self._exempt.get(j)
        if known is None:
            cap = view.capacity[view.alive] if view.alive.any() else view.capacity
            top = np.minimum(np.floor(cap * self._top[None, :] + 1e-9).astype(np.int64), cap)
            known = int(self._fit_units(top, view.req[j]).sum()) < self._units[j]
            self._exempt[j] = known
        return known

    def _shadow(self, view: SystemView, j: int, limit: IntArray) -> int:
        """Earliest requested end after which job ``j`` fits under today's limit."""
        req, units = view.req[j], self._units[j]
        cap = view.capacity
        used = np.where(view.alive[:, None], cap - view.free, cap)
        if self._is_exempt(view, j):
            limit = cap
        ends = sorted((r.requested_end, k) for k, r in view.running.items())
        for end, k in ends:
            r = view.running[k]
            used[r.nodes] -= view.req[k][None, :] * r.counts[:, None]
            room = np.where(view.alive[:, None], np.minimum(limit, cap) - used, 0)
            if int(self._fit_units(room, req).sum()) >= units:
                return end
        return 1 << 62

    def run_stats(self) -> dict[str, Any]:
        """Scheduling cycles and jobs exempt from the profile."""
        return {"cycles": self._cycles,
                "profile_exempt": int(sum(self._exempt.values()))}
