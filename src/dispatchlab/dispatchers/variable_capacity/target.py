"""TargetStretch, TargetASAP and PackedTargetASAP (Robert et al., slides "TargetStretch" …
"PackedTargetASAP"; parameters the slides leave open from the authors' ``simu.cc``).

Machines are ranked by risk: rank = position among the alive machines in index order, and
the highest indices leave first (``choose_nodes``). Each machine keeps its own conservative
backfilling book: a job gets a reservation (machine, start) when it arrives, at the
earliest start that fits that machine's free-core availability, and starts then. The first
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
from dispatchlab.dispatchers.variable_capacity.books import ASAP, PACKED, STRETCH, Books
from dispatchlab.dispatchers.variable_capacity.common import (
    CAPABILITIES,
    WITH_FAMILY,
    AreaShare,
    QuantileShare,
    check_job,
    cores_column,
    highest_leave,
)
from dispatchlab.engine.decisions import Decision, Start, WakeAt
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError

MODES = {"stretch": STRETCH, "asap": ASAP, "packed": PACKED}
_ONE = np.ones(1, dtype=np.int64)


class TargetVC(BaseDispatcher):
    """Risk-aware target strategies; ``mode`` in ``stretch``, ``asap``, ``packed``."""

    capabilities = CAPABILITIES
    described_attributes = WITH_FAMILY

    def __init__(self, mode: str = "asap", neighbourhood: int = 11, safe: int | None = None,
                 util_low: float = 0.80, util_high: float = 0.95, pack: int = 5,
                 quantiles: str | None = None):
        if mode not in MODES:
            raise ConfigError(f"unknown target mode '{mode}' (known: {', '.join(MODES)})",
                              field="mode")
        if neighbourhood < 0 or pack < 1 or not 0 <= util_low <= util_high <= 1:
            raise ConfigError("need neighbourhood ≥ 0, pack ≥ 1 and 0 ≤ util_low ≤ "
                              "util_high ≤ 1", field="neighbourhood")
        if safe is not None and safe < 0:
            raise ConfigError(f"safe={safe}: must be ≥ 0", field="safe")
        self.mode = mode
        self.neighbourhood = neighbourhood
        self.safe = safe
        self.util_low = util_low
        self.util_high = util_high
        self.pack = pack
        self.quantiles = quantiles  # an authors' quantile file instead of online shares
        self.name = {"stretch": "target-stretch", "asap": "target-asap",
                     "packed": "packed-target-asap"}[mode]

    # ---- per run -------------------------------------------------------------------

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Books for every machine, ``M_use`` from the alive count and ``safe``."""
        self.rng = rng
        n = view.platform.n_nodes
        self._ridx = ridx = cores_column(view)
        self._cap: list[int] = view.capacity[:, ridx].tolist()
        self._safe = n // 2 if self.safe is None else self.safe
        if not 0 <= self._safe <= n:
            raise ConfigError(f"{self.name}: safe must be within [0, {n}], got {self._safe}",
                              field="safe")
        self._books = Books(self._cap)
        self._units: list[int] = [0] * view.jobs.n_jobs  # cores per job (a job is 1 unit)
        self._nodes = [np.array([m], dtype=np.int64) for m in range(n)]
        self._book: dict[int, tuple[int, int, int]] = {}   # job -> (node, start, end)
        self._waiting = [0] * n                              # reservations not started
        self._due: list[tuple[int, int]] = []                # (start, job) heap
        self._woken: set[int] = set()
        self._share: AreaShare | QuantileShare = (
            AreaShare() if self.quantiles is None else QuantileShare.from_file(self.quantiles))
        self._seen: set[int] = set()
        alive = int(view.alive.sum())
        self._muse = max(1, min(alive, (alive + self._safe) // 2))
        self._smax = 1.0
        self._stats = {"reallocations": 0, "placements": 0, "started_now": 0}

    def choose_nodes(self, view: SystemView, candidates: np.ndarray, count: int,
                     leaving: bool) -> list[int]:
        """Risk order: the highest indices leave first, the lowest come back first."""
        return highest_leave(candidates, count, leaving)

    # ---- decision point --------------------------------------------------------------

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        """Book arrivals; re-plan when machines changed; start what is due now."""
        now = view.now
        books = self._books
        for j in events.left_running:  # an early end gives its reservation's tail back
            b = self._book.pop(j, None)
            if b is not None and b[2] > now and j not in view.running:
                books.take(self._nodes[b[0]], np.array([now]), np.array([b[2]]),
                           np.array([-self._units[j]]))
        books.advance(now)
        for j in events.submitted:
            c = self._units[j] = check_job(view, j, self._ridx)
            if j not in self._seen:
                self._seen.add(j)
                self._share.add(int(view.jobs.walltime[j]), c)
        if events.nodes or events.aborted:
            self._replan(view)
        elif events.submitted:
            self._place(view, list(events.submitted))
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
            out.append(Start(j, self._nodes[b[0]], _ONE))
        return out

    # ---- placement -----------------------------------------------------------------

    def _place(self, view: SystemView, jobs: list[int]) -> None:
        """Book ``jobs`` in this order, each near its target (:func:`.books.place_jobs`)."""
        ranks = np.flatnonzero(view.alive).astype(np.int64)
        muse = min(self._muse, len(ranks))
        idx = np.array(jobs, dtype=np.int64)
        walltime = np.maximum(view.jobs.walltime[idx], 1)
        submit = view.jobs.submit[idx]
        cores = np.array([self._units[j] for j in jobs], dtype=np.int64)
        share = self._share.shares(walltime)
        node, start, self._smax = self._books.place(
            walltime, submit, cores, share, ranks, muse, MODES[self.mode],
            self.neighbourhood, self.pack, view.now, self._smax)
        now = view.now
        book, waiting, due = self._book, self._waiting, self._due
        placed = 0
        for j, m, s, w in zip(jobs, node.tolist(), start.tolist(), walltime.tolist(),
                              strict=True):
            if m < 0:
                continue  # no machine alive: placed again when machines come back
            placed += 1
            self._stats["started_now"] += s == now
            book[j] = (m, s, s + w)
            waiting[m] += 1
            heapq.heappush(due, (s, j))
        self._stats["placements"] += placed

    def _replan(self, view: SystemView) -> None:
        """Machines changed: keep running jobs, place every pending job again."""
        self._stats["reallocations"] += 1
        now = view.now
        alive = int(view.alive.sum())
        self._muse = max(1, min(self._muse, alive))
        self._update_muse(view, [])
        books = self._books
        books.clear(now)
        running = list(view.running.items())
        book: dict[int, tuple[int, int, int]] = {}
        if running:
            nodes = np.array([int(run.nodes[0]) for _, run in running], dtype=np.int64)
            ends = np.array([max(now + 1, int(run.requested_end)) for _, run in running],
                            dtype=np.int64)
            cores = np.array([self._units[j] for j, _ in running], dtype=np.int64)
            books.take(nodes, np.full(len(running), now, dtype=np.int64), ends, cores)
            for (j, run), m, e in zip(running, nodes.tolist(), ends.tolist(), strict=True):
                book[j] = (m, int(run.start), e)
        self._book = book
        self._waiting = [0] * len(self._cap)
        self._due = []
        self._woken = set()
        submit = view.jobs.submit
        pending = sorted(view.queue, key=lambda q: (int(submit[q]), q))
        if pending:
            self._place(view, pending)

    def _update_muse(self, view: SystemView, starts: list[Decision]) -> None:
        """Move ``M_use`` by one while the risk-free machines are too idle or too busy."""
        alive = int(view.alive.sum())
        if alive == 0:
            return
        ranks = np.flatnonzero(view.alive).tolist()
        free = view.free[:, self._ridx].tolist()
        for d in starts:
            if isinstance(d, Start):
                free[int(d.nodes[0])] -= self._units[d.job]
        load = [1.0 if self._waiting[m] > 0 else 1 - free[m] / self._cap[m] for m in ranks]
        muse = min(self._muse, alive)
        floor = max(1, min(self._safe, alive))
        direction = 0  # one way only: a load that flips between two sizes used to loop
        while True:
            u = sum(load[:muse]) / muse
            if u < self.util_low and muse > floor and direction <= 0:
                muse, direction = muse - 1, -1
            elif u > self.util_high and muse < alive and direction >= 0:
                muse, direction = muse + 1, 1
            else:
                break
            if muse in (floor, alive):
                break
        self._muse = muse

    def run_stats(self) -> dict[str, Any]:
        """Placements, how many started at once, re-plans, final ``S⁺`` and ``M_use``."""
        return {**self._stats, "target_stretch_final": self._smax, "m_use_final": self._muse}
