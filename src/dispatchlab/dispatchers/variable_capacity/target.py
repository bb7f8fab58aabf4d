"""TargetStretch, TargetASAP and PackedTargetASAP (Robert et al., slides "TargetStretch" …
"PackedTargetASAP"; parameters the slides leave open from the authors' ``simu.cc``).

Machines are ranked by risk: rank = position among the alive machines in index order, and
the highest indices leave first (``choose_nodes``). Each machine keeps its own conservative
backfilling book: a job gets a reservation (machine, start) when it arrives, at the
earliest start that fits that machine's free-core profile, and starts then. The first
``M_use`` ranks are the *risk-free* machines used for targets.

- **Category and target**: ``C_i`` = share of the work owned by jobs at least as long as
  job ``i`` (:class:`~dispatchlab.dispatchers.variable_capacity.common.AreaShare`);
  target rank ``min(⌊C_i · M_use⌋, M_use − 1)`` (the slides' ``⌊C_i M_use⌋ + 1``,
  1-based): the longest jobs go to the safest machines. *Packed*: the risk-free machines
  form packs of ``pack`` machines; the target is the first machine of pack
  ``min(⌊C_i · P⌋, P − 1)``, ``P = max(1, ⌊M_use / pack⌋)``.
- **Neighbourhood**: the target, then ranks target+1, target−1, target+2, … up to
  ``neighbourhood`` away, inside ``[0, M_use)`` (the authors try the riskier side first).
- **TargetStretch**: the first machine of the neighbourhood whose earliest start keeps the
  planned stretch ``(start + w − r) / w`` within the target stretch ``S⁺``; else the
  neighbourhood machine with the smallest stretch (ties: nearest to the target).
- **TargetASAP / packed**: the first machine of the neighbourhood where the job starts now;
  else the target if its stretch stays within ``S⁺``; else the smallest stretch.
- ``S⁺`` is the largest planned stretch so far (starts at 1; the authors' ``maxStret``).
- **M_use** starts at ``(alive + safe) / 2`` and moves by one while the mean load of the
  risk-free machines (a machine with a reservation waiting counts as full, else its used
  share of cores) is under ``util_low`` (down, not below ``safe``) or over ``util_high``
  (up, not above the alive count); checked after every decision point.
- **Machines change**: every reservation not started is dropped, running jobs keep their
  machines, and the pending jobs (with the re-queued ones) are placed again in release
  order (the slides' "set of risk-free machines recomputed, re-allocate pending jobs").
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

import numpy as np

from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.dispatchers.slot_profile import SlotProfile
from dispatchlab.dispatchers.variable_capacity.common import (
    AreaShare,
    check_job,
    cores_column,
    highest_leave,
)
from dispatchlab.engine.decisions import Decision, Start, WakeAt
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError

MODES = ("stretch", "asap", "packed")
_ONE = np.ones(1, dtype=np.int64)
_NODES = [np.array([k], dtype=np.int64) for k in range(4096)]


class TargetVC(BaseDispatcher):
    """Risk-aware target strategies; ``mode`` in ``stretch``, ``asap``, ``packed``."""

    def __init__(self, mode: str = "asap", neighbourhood: int = 11, safe: int | None = None,
                 util_low: float = 0.80, util_high: float = 0.95, pack: int = 5):
        if mode not in MODES:
            raise ConfigError(f"unknown target mode '{mode}' (known: {', '.join(MODES)})",
                              field="mode")
        if neighbourhood < 0 or pack < 1 or not 0 <= util_low <= util_high <= 1:
            raise ConfigError("need neighbourhood ≥ 0, pack ≥ 1 and 0 ≤ util_low ≤ "
                              "util_high ≤ 1", field="neighbourhood")
        self.mode = mode
        self.neighbourhood = neighbourhood
        self.safe = safe
        self.util_low = util_low
        self.util_high = util_high
        self.pack = pack
        self.name = {"stretch": "target-stretch", "asap": "target-asap",
                     "packed": "packed-target-asap"}[mode]

    # ---- per run -------------------------------------------------------------------

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Books for every machine, ``M_use`` from the alive count and ``safe``."""
        self.rng = rng
        n = view.platform.n_nodes
        if n > len(_NODES):
            raise ConfigError(f"{self.name}: at most {len(_NODES)} machines", field="nodes")
        self._ridx = ridx = cores_column(view)
        self._cap: list[int] = view.capacity[:, ridx].tolist()
        self._safe = n // 2 if self.safe is None else self.safe
        if not 0 <= self._safe <= n:
            raise ConfigError(f"{self.name}: safe must be within [0, {n}], got {self._safe}",
                              field="safe")
        self._units: list[int] = [0] * view.jobs.n_jobs  # cores per job (a job is 1 unit)
        self._n_jobs = view.jobs.n_jobs
        self._prof = [self._profile(m) for m in range(n)]
        self._book: dict[int, tuple[int, int, int]] = {}   # job -> (node, start, end)
        self._waiting = [0] * n                              # reservations not started
        self._due: list[tuple[int, int]] = []                # (start, job) heap
        self._woken: set[int] = set()
        self._share = AreaShare()
        self._seen: set[int] = set()
        alive = int(view.alive.sum())
        self._muse = max(1, min(alive, (alive + self._safe) // 2))
        self._smax = 1.0
        self._stats = {"reallocations": 0, "placements": 0, "started_now": 0,
                       "on_target": 0}

    def _profile(self, m: int) -> SlotProfile:
        return SlotProfile(self._cap[m], self._units, n_jobs=self._n_jobs)

    def choose_nodes(self, view: SystemView, candidates: np.ndarray, count: int,
                     leaving: bool) -> list[int]:
        """Risk order: the highest indices leave first, the lowest come back first."""
        return highest_leave(candidates, count, leaving)

    # ---- decision point --------------------------------------------------------------

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        """Book arrivals; re-plan when machines changed; start what is due now."""
        now = view.now
        for j in events.left_running:  # an early end gives its reservation's tail back
            b = self._book.pop(j, None)
            if b is not None and b[2] > now and j not in view.running:
                self._prof[b[0]].give(j, now, b[2], self._units[j])
        for p in self._prof:
            p.advance(now)
        for j in events.submitted:
            c = self._units[j] = check_job(view, j, self._ridx)
            if j not in self._seen:
                self._seen.add(j)
                self._share.add(int(view.jobs.walltime[j]), c)
        if events.nodes or events.aborted:
            self._replan(view)
        else:
            for j in events.submitted:
                self._place(view, j)
        out = self._due_starts(view)
        self._update_muse(view, out)
        if self._due:
            t = self._due[0][0]
            if t > now and t not in self._woken:
                self._woken.add(t)
                out.append(WakeAt(t))
        return out

    def _due_starts(self, view: SystemView) -> list[Decision]:
        now = view.now
        due = self._due
        out: list[Decision] = []
        while due and due[0][0] <= now:
            s, j = heapq.heappop(due)
            b = self._book.get(j)
            if b is None or b[1] != s or j not in view.queue:
                continue  # stale: re-planned since
            self._waiting[b[0]] -= 1
            out.append(Start(j, _NODES[b[0]], _ONE))
        return out

    # ---- placement -----------------------------------------------------------------

    def _ranks(self, view: SystemView) -> list[int]:
        """Alive machines in risk order (safest first)."""
        return np.flatnonzero(view.alive).tolist()

    def _target(self, share: float, muse: int) -> int:
        if self.mode == "packed":
            packs = max(1, muse // self.pack)
            return min(min(int(share * packs), packs - 1) * self.pack, muse - 1)
        return min(int(share * muse), muse - 1)

    def _place(self, view: SystemView, job: int, ranks: list[int] | None = None) -> None:
        """Book ``job`` on a machine of the neighbourhood of its target."""
        ranks = self._ranks(view) if ranks is None else ranks
        muse = min(self._muse, len(ranks))
        if muse == 0:
            return  # no machine alive: placed again when machines come back
        now = view.now
        w = max(1, int(view.jobs.walltime[job]))
        r = int(view.jobs.submit[job])
        k = self._target(self._share.share(w), muse)
        order = [k]
        for d in range(1, self.neighbourhood + 1):
            if k + d < muse:
                order.append(k + d)
            if k - d >= 0:
                order.append(k - d)
        found: list[tuple[int, int]] = []  # (start, node) in neighbourhood order
        chosen = -1
        smax = self._smax
        for rank in order:
            node = ranks[rank]
            fit = self._prof[node].earliest(job, w)
            if fit is None:
                continue
            s = fit[0]
            found.append((s, node))
            if self.mode == "stretch":
                if (s + w - r) / w <= smax:
                    chosen = len(found) - 1
                    break
            elif s == now:
                chosen = len(found) - 1
                break
        if chosen < 0 and found:
            if self.mode != "stretch" and order and found[0][1] == ranks[order[0]] \
                    and (found[0][0] + w - r) / w <= smax:
                chosen = 0  # ASAP: the target when its stretch stays within S⁺
            else:
                chosen = min(range(len(found)), key=lambda i: found[i][0])
        if chosen < 0:
            return
        s, node = found[chosen]
        self._stats["placements"] += 1
        self._stats["started_now"] += s == now
        self._stats["on_target"] += node == ranks[k]
        self._smax = max(self._smax, (s + w - r) / w)
        self._prof[node].take(job, s, s + w, self._units[job])
        self._book[job] = (node, s, s + w)
        self._waiting[node] += 1
        heapq.heappush(self._due, (s, job))

    def _replan(self, view: SystemView) -> None:
        """Machines changed: keep running jobs, place every pending job again."""
        self._stats["reallocations"] += 1
        now = view.now
        alive = int(view.alive.sum())
        self._muse = max(1, min(self._muse, alive)) if alive else 0
        self._update_muse(view, [])
        self._prof = [self._profile(m) for m in range(len(self._prof))]
        self._prof_now(now)
        book: dict[int, tuple[int, int, int]] = {}
        for j, run in view.running.items():
            node = int(run.nodes[0])
            end = max(now + 1, int(run.requested_end))
            self._prof[node].take(j, now, end, self._units[j])
            book[j] = (node, int(run.start), end)
        self._book = book
        self._waiting = [0] * len(self._prof)
        self._due = []
        self._woken = set()
        ranks = self._ranks(view)
        submit = view.jobs.submit
        for j in sorted(view.queue, key=lambda q: (int(submit[q]), q)):
            self._place(view, j, ranks)

    def _prof_now(self, now: int) -> None:
        for p in self._prof:
            p.advance(now)

    def _update_muse(self, view: SystemView, starts: list[Decision]) -> None:
        """Move ``M_use`` by one while the risk-free machines are too idle or too busy."""
        alive = int(view.alive.sum())
        if alive == 0:
            return
        ranks = self._ranks(view)
        free = view.free[:, self._ridx].tolist()
        for d in starts:
            if isinstance(d, Start):
                free[int(d.nodes[0])] -= self._units[d.job]
        load = [1.0 if self._waiting[m] > 0 else 1 - free[m] / self._cap[m] for m in ranks]
        muse = min(self._muse, alive)
        floor = max(1, min(self._safe, alive))
        while True:
            u = sum(load[:muse]) / muse
            if u < self.util_low and muse > floor:
                muse -= 1
            elif u > self.util_high and muse < alive:
                muse += 1
            else:
                break
            if muse in (floor, alive):
                break
        self._muse = max(1, muse)

    def describe(self) -> dict[str, Any]:
        """Configuration."""
        return {"name": self.name, "family": "variable-capacity", "mode": self.mode,
                "neighbourhood": self.neighbourhood, "safe": self.safe,
                "util_low": self.util_low, "util_high": self.util_high, "pack": self.pack}

    def run_stats(self) -> dict[str, Any]:
        """Placements, how many started at once or on their target, re-plans, S⁺, M_use."""
        return {**self._stats, "target_stretch_final": self._smax, "m_use_final": self._muse}
