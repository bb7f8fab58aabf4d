"""DARDIS with node shutdown (thesis §7.2, §7.6: DARDIS100 %, DARDIS70 %, DARDIS50 %).

The desired profile leaves a share ``1 − s(t)`` of the machine unused. DARDIS``X`` %
switches off ``(100 − X) %`` of it as whole nodes and keeps the rest on to absorb
fragmentation: ``k(t) = floor(off_fraction · (1 − s(t)) · N)`` nodes (``off_fraction``
0.3 for DARDIS70 %, 0.5 for DARDIS50 %, 0 for DARDIS100 %). The thesis states the
fractions, not the mechanics; the rule here:

- **Levels.** Parked node number ``L`` (1 ≤ L ≤ k) is needed from a profile change on
  until ``b_L``, the first later change where ``k < L`` (the profile is announced, so
  ``b_L`` is known; after the last change the profile is taken to hold one more day).
- **Which nodes go off.** At each profile change, every level not held takes, among the
  nodes that are on, idle and not started in this round, the one whose DARDIS profile
  stays free longest within ``[now, b_L)`` (highest index on ties); it stays off until
  its first reservation or ``b_L``: its profile is filled to capacity over that span
  (node managers offer no start there) and it is switched off at once. A span shorter
  than the node's break-even time (transition energy against idle energy, and at least
  shutdown + boot) is not parked (``levels_too_short``); a level without an idle node
  is left unheld until the next change (``levels_unfilled``).
- **When they come back.** Planned in advance: the node is switched on at
  ``b_L − boot_time`` (rounded to the slot grid) and is on when its profile frees, so a
  rising profile costs no boot delay.
- **Jobs that need them.** When a job finds no start in its window even against
  capacity, parked nodes whose parking overlaps the window are brought back, as many as
  the job's units need per try (latest-parked level first), from the earliest moment a
  switched-off node can be on again (now + shutdown + boot, on the slot grid), and the
  round is repeated, before DARDIS's usual retry of a later window.

Parked nodes stay in the node managers' planning (they are off only over the span their
profile is full), so jobs are planned on them after they return.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.dispatchers.dardis.dispatcher import Dardis
from dispatchlab.dispatchers.dardis.timers import pop_due
from dispatchlab.engine.capabilities import Capabilities
from dispatchlab.engine.decisions import Decision, PowerOff, PowerOn, Start, WakeAt
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView
from dispatchlab.platform.node_states import BOOTING, OFF, ON, SHUTTING_DOWN
from dispatchlab.platform.platform import units_fitting

#: After the last announced change the profile is taken to hold this long (s).
TAIL = 86_400


@dataclass(slots=True)
class Parking:
    """A node kept off: its level, profile slots ``[first, last)`` filled, and a version
    that invalidates a stale power-on timer."""

    level: int
    first: int
    last: int
    version: int


def parked_counts(share: FloatArray, n_nodes: int, off_fraction: float) -> IntArray:
    """Nodes to keep off for each desired share: ``floor(f · (1 − s) · N)``."""
    unused = np.clip(1.0 - np.asarray(share, dtype=np.float64), 0.0, 1.0)
    return np.floor(off_fraction * unused * n_nodes + 1e-9).astype(np.int64)


def break_even(view: SystemView) -> IntArray:
    """Per node, the shortest off span (s) that saves energy: transition energy above
    ``off`` against idle energy above ``off``; at least shutdown + boot."""
    plat = view.platform
    n = plat.n_nodes
    boot = np.zeros(n, np.int64) if plat.boot_time is None else plat.boot_time
    down = np.zeros(n, np.int64) if plat.shutdown_time is None else plat.shutdown_time
    floor_s = (boot + down).astype(np.int64)
    table = plat.power_table
    if table is None:
        return floor_s
    gap = np.maximum(table["idle"] - table["off"], 1e-9)
    extra = (down * (table["shutting_down"] - table["off"])
             + boot * (table["booting"] - table["off"]))
    return np.maximum(floor_s, np.ceil(extra / gap).astype(np.int64))


class DardisShutdown(Dardis):
    """DARDIS (First, Min start, backfilling by default) that switches off
    ``off_fraction`` of the nodes its desired profile leaves unused."""

    capabilities = Capabilities(
        family="dardis", fixed_power_cap=False, varying_power_cap=False,
        follows_desired_utilization=True, switches_power_states=True)

    def __init__(self, off_fraction: float, generator: str = "first",
                 policy: str = "min-start", *, backfill: bool = True, depth: int = 32,
                 slot: int = 300, retries: int = 3, last_resort: str = "machine",
                 name: str | None = None) -> None:
        if not 0.0 <= off_fraction <= 1.0:
            raise ValueError(f"off_fraction must be in [0, 1], got {off_fraction}")
        super().__init__(generator, policy, backfill=backfill, depth=depth, slot=slot,
                         retries=retries, last_resort=last_resort,
                         name=name or f"dardis{round(100 * (1 - off_fraction))}")
        self.off_fraction = off_fraction

    # ---- per run ----------------------------------------------------------------

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """DARDIS's reset plus the parking levels of the announced profile."""
        super().reset(view, rng)
        plat = view.platform
        n = plat.n_nodes
        k = plat.resources.index("cores") if "cores" in plat.resources else 0
        times, shares = self._steps[k]
        counts = parked_counts(shares, n, self.off_fraction) if self.off_fraction else (
            np.zeros(len(times), np.int64))
        self._cores_k = k
        self._bt: IntArray = np.asarray(times, np.int64)
        self._bk: IntArray = counts
        self._bi = 0
        self._boot: IntArray = (np.zeros(n, np.int64) if plat.boot_time is None
                                else plat.boot_time.astype(np.int64))
        self._down: IntArray = (np.zeros(n, np.int64) if plat.shutdown_time is None
                                else plat.shutdown_time.astype(np.int64))
        self._even = break_even(view)
        self._parking: dict[int, Parking] = {}
        self._levels: dict[int, int] = {}   # level → node
        self._mine = np.zeros(n, dtype=bool)
        self._on_heap: list[tuple[int, int, int]] = []  # (time, node, version)
        self._waiting_on: set[int] = set()
        self._my_wakes: set[int] = set()
        self._pversion = 0
        self._stats.update({"power_offs": 0, "power_ons": 0, "released_for_jobs": 0,
                            "levels_unfilled": 0, "levels_too_short": 0})

    def _planning_nodes(self, view: SystemView) -> npt.NDArray[np.bool_]:
        """Usable nodes plus the ones this dispatcher switched off or is booting."""
        state = view.node_state
        mine = self._mine & ((state == OFF) | (state == BOOTING) | (state == SHUTTING_DOWN))
        return view.alive | mine

    # ---- decisions ------------------------------------------------------------------

    def decide(self, view: SystemView, events: Events) -> list[Decision]:
        """DARDIS's decisions, then power-ons due, parkings at profile changes, timers."""
        out = list(super().decide(view, events))
        now = view.now
        taken = np.zeros(view.platform.n_nodes, dtype=bool)
        for d in out:
            if type(d) is Start:
                taken[np.asarray(d.nodes)] = True
        self._power_ons(view, now, out)
        while self._bi < len(self._bt) and self._bt[self._bi] <= now:
            self._park(view, now, self._bi, taken, out)
            self._bi += 1
        nxt = []
        if self._bi < len(self._bt):
            nxt.append(int(self._bt[self._bi]))
        if self._on_heap:
            nxt.append(self._on_heap[0][0])
        for t in nxt:
            if t > now and t not in self._my_wakes:
                self._my_wakes.add(t)
                out.append(WakeAt(t))
        self._my_wakes = {t for t in self._my_wakes if t > now}
        return out

    def _power_ons(self, view: SystemView, now: int, out: list[Decision]) -> None:
        """Switch on the nodes whose parking ends within their boot time."""
        for node, p in pop_due(self._on_heap, now, self._parking):
            del self._parking[node]
            if self._levels.get(p.level) == node:
                del self._levels[p.level]
            self._waiting_on.add(node)
        state = view.node_state
        ready = sorted(n for n in self._waiting_on if state[n] == OFF)
        if ready:
            out.append(PowerOn(tuple(ready)))
            self._stats["power_ons"] += len(ready)
            self._waiting_on.difference_update(ready)
        # a node still shutting down is switched on by the decision point its NODE
        # event makes; one already on or booting needs nothing
        self._waiting_on = {n for n in self._waiting_on if state[n] == SHUTTING_DOWN}

    def _level_end(self, i: int, level: int) -> int:
        """End of the run of profile steps from step ``i`` with at least ``level``
        nodes parked (the step after the last one holds :data:`TAIL` more seconds)."""
        below = np.flatnonzero(self._bk[i:] < level)
        if len(below):
            return int(self._bt[i + int(below[0])])
        return int(self._bt[-1]) + TAIL

    def _park(self, view: SystemView, now: int, i: int, taken: npt.NDArray[np.bool_],
              out: list[Decision]) -> None:
        """Fill the unheld levels of step ``i`` with idle, unreserved nodes."""
        want = [lv for lv in range(1, int(self._bk[i]) + 1) if lv not in self._levels]
        if not want:
            return
        slot = self.slot
        state = view.node_state
        idle = ((state == ON) & (view.free == view.capacity).all(axis=1) & ~taken
                & ~np.isin(np.arange(len(state)), list(self._parking)))
        first = now // slot
        by_end: dict[int, list[int]] = {}
        for lv in want:
            by_end.setdefault(self._level_end(i, lv), []).append(lv)
        chosen: list[int] = []
        for end in sorted(by_end, reverse=True):  # longest spans (lowest levels) first
            last = -(-end // slot)
            # nodes × slots reserved; each node can stay off until its first reserved
            # slot (or the level's end)
            used = np.asarray(np.any(self._grid.window(first, last) > 0, axis=0))
            free_until = np.where(used.any(axis=1), first + used.argmax(axis=1), last)
            span = free_until * slot - now
            for lv in sorted(by_end[end]):
                ok = idle & (span >= self._even)
                if not ok.any():
                    key = "levels_too_short" if idle.any() else "levels_unfilled"
                    self._stats[key] += 1
                    continue
                cand = np.flatnonzero(ok)
                node = int(cand[np.lexsort((-cand, -free_until[cand]))[0]])
                idle[node] = False
                self._pversion += 1
                p = Parking(lv, first, int(free_until[node]), self._pversion)
                self._parking[node] = p
                self._levels[lv] = node
                self._mine[node] = True
                self._grid.add(np.array([node]), self._cap[node][:, None], first, p.last)
                heapq.heappush(self._on_heap, (p.last * slot - int(self._boot[node]), node,
                                               p.version))
                chosen.append(node)
        if chosen:
            out.append(PowerOff(tuple(sorted(chosen))))
            self._stats["power_offs"] += len(chosen)

    # ---- a profile announced while running (the hybrid pipeline) --------------------

    def add_profile(self, view: SystemView, times: npt.ArrayLike, shares: npt.ArrayLike
                    ) -> None:
        """Announce more of the desired cores profile (steps after every known one);
        held parkings are extended or cut to their levels' new ends. Call it before
        :meth:`decide` at the same decision point (which sets the timers it needs)."""
        t = np.asarray(times, dtype=np.int64)
        v = np.asarray(shares, dtype=np.float64)
        if not len(t):
            return
        t0, v0 = self._steps[self._cores_k]
        if (len(t0) and t[0] <= t0[-1]) or t[0] <= view.now or (np.diff(t) <= 0).any():
            raise ValueError("add_profile: steps must be increasing and after the known "
                             "ones and now")
        self._steps[self._cores_k] = (np.concatenate([t0, t]), np.concatenate([v0, v]))
        self._profile = True
        counts = parked_counts(v, view.platform.n_nodes, self.off_fraction)
        self._bt = np.concatenate([self._bt, t])
        self._bk = np.concatenate([self._bk, counts])
        self._replan_parkings(view)

    def _replan_parkings(self, view: SystemView) -> None:
        """Move the end of every held parking to its level's end under the profile now
        known: later if the node's profile is free until then, earlier (not before the
        node can be on again) if the level is no longer needed."""
        slot, now = self.slot, view.now
        state = view.node_state
        for lv, node in list(self._levels.items()):
            p = self._parking[node]
            below = np.flatnonzero(self._bk[self._bi:] < lv)
            end = (int(self._bt[self._bi + int(below[0])]) if len(below)
                   else int(self._bt[-1]) + TAIL)
            last = -(-end // slot)
            if last > p.last:
                if (self._grid.window(p.last, last)[:, node] > 0).any():
                    continue
                self._grid.add(np.array([node]), self._cap[node][:, None], p.last, last)
            elif last < p.last:
                back = now + (int(self._down[node]) if state[node] != OFF else 0)
                last = max(last, p.first, -(-(back + int(self._boot[node])) // slot))
                if last >= p.last:
                    continue
                self._grid.add(np.array([node]), self._cap[node][:, None], last, p.last,
                               -1.0)
            else:
                continue
            self._pversion += 1
            self._parking[node] = Parking(lv, p.first, last, self._pversion)
            heapq.heappush(self._on_heap, (last * slot - int(self._boot[node]), node,
                                           self._pversion))

    # ---- bringing nodes back for a job ---------------------------------------------

    def _round(self, view: SystemView, j: int, est: int, lst: int, with_profile: bool,
               alive: npt.NDArray[np.bool_], out: list[Decision]) -> bool:
        """DARDIS's round; when even capacity fails, bring parked nodes back and retry."""
        if super()._round(view, j, est, lst, with_profile, alive, out):
            return True
        if with_profile and self._profile:
            return False  # the capacity round comes next
        while self._release(view, j, est, lst):
            if super()._round(view, j, est, lst, False, alive, out):
                return True
        return False

    def _release(self, view: SystemView, j: int, est: int, lst: int) -> bool:
        """End the parking of as many nodes as job ``j``'s units need among those parked
        over its window (latest-parked level first); False when none could help."""
        slot, now = self.slot, view.now
        lo, hi = est // slot, -(-(lst + int(self._walltime[j])) // slot)
        over = sorted((p.level, n) for n, p in self._parking.items()
                      if p.first < hi and p.last > lo)
        per_node = units_fitting(view.capacity, view.req[j])
        need = int(self._units[j])
        released = False
        state = view.node_state
        for _, node in reversed(over):
            if need <= 0:
                break
            p = self._parking[node]
            back = now + (int(self._down[node]) if state[node] in (ON, SHUTTING_DOWN) else 0)
            back_slot = max(p.first, -(-(back + int(self._boot[node])) // slot))
            if back_slot >= p.last:
                continue
            self._grid.add(np.array([node]), self._cap[node][:, None], back_slot, p.last,
                           -1.0)
            self._pversion += 1
            self._parking[node] = Parking(p.level, p.first, back_slot, self._pversion)
            if self._levels.get(p.level) == node:
                del self._levels[p.level]
            heapq.heappush(self._on_heap, (back_slot * slot - int(self._boot[node]), node,
                                           self._pversion))
            self._stats["released_for_jobs"] += 1
            need -= max(1, int(per_node[node]))
            released = True
        return released

    # ---- reporting ------------------------------------------------------------------

    def run_stats(self) -> dict[str, Any]:
        """DARDIS's statistics (with the power-off / power-on counts)."""
        return super().run_stats()
