"""What operators configure, as the engine enforces it for every dispatcher.

:class:`Constraints` binds a platform's queues and reservations (and the workload's
heterogeneous jobs) to one workload's jobs and local clock, and answers:

- at submission, :meth:`~Constraints.rejections`: jobs breaking a queue limit, or that no
  node configuration, queue node set or reservation could ever host — with a reason each;
- at decision time, :meth:`~Constraints.eligible` (may the job start at ``t`` at all:
  queue window open, queue not stopped, inside its reservation with time left) and
  :meth:`~Constraints.allowed_nodes` (which nodes it may use at ``t``: its queue's nodes,
  minus nodes whose reservation its wall-time would run into; the reservation's nodes for
  a reservation job);
- for validation, :meth:`~Constraints.violation` (why a start is not allowed);
- for the event loop, :meth:`~Constraints.next_change` (the next time something opens:
  a window, the end of a stop, a reservation starting or ending) and
  :meth:`~Constraints.hopeless` (queued reservation jobs that can no longer run).

Dispatchers read the same object as ``view.rules`` (``None`` when nothing applies).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dispatchlab.arrays import BoolArray, IntArray
from dispatchlab.engine import kernels
from dispatchlab.engine.local_time import Clock, WindowCalendar
from dispatchlab.errors import ConfigError
from dispatchlab.platform.platform import Platform, units_fitting
from dispatchlab.platform.queues import QueueConfig
from dispatchlab.workload.workload import Workload

_FAR = 1 << 62


def engine_rules_apply(workload: Workload, platform: Platform) -> bool:
    """True when queues with rules, reservations or heterogeneous jobs are in play."""
    return platform.has_rules or bool((workload.hetjob >= 0).any())


@dataclass(frozen=True)
class BoundReservation:
    """A reservation with times in simulated seconds and nodes as indices/mask."""

    name: str
    queue: str
    nodes: IntArray
    mask: BoolArray
    start: int
    duration: int
    period: int | None
    count: int | None

    def _k_range(self, k: int) -> bool:
        return k >= 0 and (self.count is None or k < self.count)

    def occurrence(self, k: int) -> tuple[int, int]:
        """Start and end of occurrence ``k``."""
        s = self.start + k * (self.period or 0)
        return s, s + self.duration

    def at(self, t: int) -> int:
        """Index of the occurrence running at ``t``, or -1."""
        k = 0 if self.period is None else (t - self.start) // self.period
        if not self._k_range(k):
            return -1
        s, e = self.occurrence(k)
        return k if s <= t < e else -1

    def first_ending_after(self, t: int) -> int:
        """Index of the first occurrence ending after ``t``, or -1 when none does."""
        if self.period is None:
            k = 0
        else:
            k = max(0, (t - self.start - self.duration) // self.period + 1)
        if not self._k_range(k):
            return -1
        return k if self.occurrence(k)[1] > t else -1

    def overlaps(self, t0: int, t1: int) -> bool:
        """True when an occurrence intersects ``[t0, t1)``."""
        k = self.first_ending_after(t0)
        return k >= 0 and self.occurrence(k)[0] < t1

    def next_boundary(self, t: int) -> int:
        """The first occurrence start or end strictly after ``t`` (or a huge value)."""
        k = self.first_ending_after(t)
        if k < 0:
            return _FAR
        s, e = self.occurrence(k)
        return s if s > t else e

    def last_end(self) -> int:
        """End of the last occurrence (huge for a standing reservation without count)."""
        if self.period is not None and self.count is None:
            return _FAR
        return self.occurrence((self.count or 1) - 1)[1]


class QueueTimes:
    """When one queue's jobs may start: its windows minus its stopped intervals."""

    def __init__(self, q: QueueConfig, clock: Clock, where: str):
        self.windows = WindowCalendar(q.windows, clock) if q.windows else None
        stops = []
        for k, (a, b) in enumerate(q.stopped):
            t0 = clock.parse(a, f"{where}.stopped[{k}][0]")
            t1 = clock.parse(b, f"{where}.stopped[{k}][1]")
            if t1 <= t0:
                raise ConfigError(f"stop ends ({t1}) before it starts ({t0})",
                                  field=f"{where}.stopped[{k}]")
            stops.append((t0, t1))
        self.stops = sorted(stops)

    def open(self, t: int) -> bool:
        """True when a job of the queue may start at ``t``."""
        for a, b in self.stops:
            if a <= t < b:
                return False
        return self.windows is None or self.windows.is_open(t)

    def next_open(self, t: int) -> int:
        """Earliest ``t' ≥ t`` at which the queue may start a job."""
        for _ in range(10_000):
            moved = False
            for a, b in self.stops:
                if a <= t < b:
                    t, moved = b, True
            if self.windows is not None:
                nt = self.windows.next_open(t)
                moved = moved or nt != t
                t = nt
            if not moved:
                return t
        raise ConfigError("queue windows and stops leave no time to start a job")

    def next_opening(self, t: int) -> int:
        """The first instant after ``t`` at which the queue may newly start jobs."""
        best = _FAR
        for _, b in self.stops:
            if b > t:
                best = min(best, b)
        if self.windows is not None:
            best = min(best, self.windows.next_opening(t))
        return best


class Constraints:
    """Queue rules, reservations and heterogeneous jobs bound to one run."""

    def __init__(self, workload: Workload, platform: Platform, req: IntArray):
        self.workload = workload
        self.platform = platform
        self.req = req
        self.clock = Clock(workload.origin_unix, workload.timezone)
        n, n_nodes = workload.n_jobs, platform.n_nodes
        self.walltime: list[int] = workload.walltime.tolist()
        wq_names = [q.name for q in workload.queues]
        self.reservations = [self._bind(k, r) for k, r in enumerate(platform.reservations)]
        self._check_overlaps()
        res_by_queue = {r.queue: i for i, r in enumerate(self.reservations)}
        # per workload queue: its config (or None), node mask, time rules, reservation
        self.configs: list[QueueConfig | None] = [platform.queues.get(q) for q in wq_names]
        self.q_mask: list[BoolArray | None] = []
        self.q_times: list[QueueTimes | None] = []
        for q, cfg in zip(wq_names, self.configs, strict=True):
            mask = None
            times = None
            if cfg is not None and cfg.nodes:
                mask = np.zeros(n_nodes, dtype=bool)
                mask[platform.node_set(cfg.nodes, f"queues.{q}.nodes")] = True
            if cfg is not None and cfg.has_time_rules:
                times = QueueTimes(cfg, self.clock, f"queues.{q}")
            self.q_mask.append(mask)
            self.q_times.append(times)
        self.q_res = [res_by_queue.get(q, -1) for q in wq_names]
        self.queue: list[int] = workload.queue.tolist()
        self.job_res: list[int] = [self.q_res[q] for q in self.queue]
        self.timed = any(t is not None for t in self.q_times)
        self.restricts_nodes = bool(self.reservations) or any(m is not None
                                                              for m in self.q_mask)
        # heterogeneous jobs: leader (first component) → components
        self.components: dict[int, list[int]] = {}
        self.leader: dict[int, int] = {}
        het = workload.hetjob
        for j in np.flatnonzero(het >= 0).tolist():
            gid = int(het[j])
            lead = self.leader.setdefault(gid, j)
            self.components.setdefault(lead, []).append(j)
        self.group_of: dict[int, int] = {j: lead for lead, comps in self.components.items()
                                         for j in comps}
        # orders in which to place a heterogeneous job's components: the most constrained
        # (fewest units on the empty machine) first, then the workload's order
        self.placement_orders: dict[int, list[list[int]]] = {}
        for lead, comps in self.components.items():
            room = {c: int(units_fitting(platform.capacity, req[c]).sum()) // max(
                int(workload.units[c]), 1) for c in comps}
            tight = sorted(comps, key=lambda c: (room[c], c))
            self.placement_orders[lead] = [tight] if tight == comps else [tight, comps]
        self._all_nodes = np.ones(n_nodes, dtype=bool)
        self._fit_memo: dict[tuple[object, bytes], int] = {}
        self.n_jobs = n

    # ---- set-up ---------------------------------------------------------------------

    def _bind(self, k: int, r: object) -> BoundReservation:
        from dispatchlab.platform.reservations import Reservation

        assert isinstance(r, Reservation)
        where = f"reservations[{k}]"
        nodes = self.platform.node_set(r.nodes, f"{where}.nodes")
        mask = np.zeros(self.platform.n_nodes, dtype=bool)
        mask[nodes] = True
        start = self.clock.parse(r.start, f"{where}.start")
        if start < 0:
            raise ConfigError(f"reservation '{r.name}' starts {-start} s before the "
                              "workload's origin", field=f"{where}.start")
        return BoundReservation(r.name, r.queue_name, nodes, mask, start, r.duration,
                                r.period, r.count)

    def _check_overlaps(self) -> None:
        """Two reservations may not hold one node at the same time (checked exactly for
        one-off reservations and over the first 1000 occurrences of standing ones)."""
        res = self.reservations
        for a in range(len(res)):
            for b in range(a + 1, len(res)):
                ra, rb = res[a], res[b]
                if not (ra.mask & rb.mask).any():
                    continue
                for k in range(1000 if ra.period else 1):
                    if not ra._k_range(k):
                        break
                    s, e = ra.occurrence(k)
                    if rb.overlaps(s, e):
                        node = self.platform.node_names[int(np.flatnonzero(ra.mask & rb.mask)[0])]
                        raise ConfigError(
                            f"reservations '{ra.name}' and '{rb.name}' both hold node {node} "
                            f"around t={s}: the second is infeasible",
                            field=f"reservations[{b}]")

    # ---- submission -----------------------------------------------------------------

    def rejections(self) -> dict[int, str]:
        """Jobs rejected at submission, with the reason (limits, node sets, reservations)."""
        wl, plat = self.workload, self.platform
        out: dict[int, str] = {}
        units = wl.units.tolist()
        forever_busy = np.zeros(plat.n_nodes, dtype=bool)  # standing, no gap long enough
        for j in range(wl.n_jobs):
            cfg = self.configs[self.queue[j]]
            qname = wl.queues[self.queue[j]].name
            why = self._limit_violation(j, cfg, qname, units[j]) if cfg is not None else None
            if why is None:
                why = self._placement_impossible(j, qname, units[j], forever_busy)
            if why is not None:
                out[j] = why
        # heterogeneous jobs: one rejected component rejects the whole job, and so does a
        # job whose components do not fit the empty machine together
        for lead, comps in self.components.items():
            bad = [c for c in comps if c in out]
            gid = int(wl.hetjob[lead])
            if not bad and not self._group_fits_empty(lead, comps):
                for c in comps:
                    out[c] = (f"heterogeneous job {gid}: its {len(comps)} components do not fit "
                              "the nodes it may use together, even on the empty machine")
            elif bad:
                for c in comps:
                    out.setdefault(c, f"component of heterogeneous job {gid} rejected: "
                                      f"{out[bad[0]]}")
        return out

    def _group_fits_empty(self, lead: int, comps: list[int]) -> bool:
        """First-fit of all components on the empty nodes the job may use."""
        r = self.job_res[lead]
        mask = self.reservations[r].mask if r >= 0 else self.q_mask[self.queue[lead]]
        units = self.workload.units
        for order in self.placement_orders[lead]:
            free = self.platform.capacity.copy()
            if mask is not None:
                free[~mask] = 0
            for c in order:
                nodes, counts = kernels.first_fit_nodes(free, self.req[c], int(units[c]))
                if len(nodes) == 0:
                    break
                free[nodes] -= counts[:, None] * self.req[c]
            else:
                return True
        return False

    def _limit_violation(self, j: int, cfg: QueueConfig, qname: str, units: int) -> str | None:
        wl = self.workload
        if cfg.max_units is not None and units > cfg.max_units:
            return f"queue '{qname}' allows at most {cfg.max_units} units, job asks {units}"
        if cfg.max_nodes is not None:
            per_node = int(units_fitting(self.platform.capacity, self.req[j]).max())
            need = -(-units // per_node) if per_node else units
            if need > cfg.max_nodes:
                return (f"queue '{qname}' allows at most {cfg.max_nodes} nodes, job needs at "
                        f"least {need}")
        if cfg.max_walltime is not None and self.walltime[j] > cfg.max_walltime:
            return (f"queue '{qname}' allows at most {cfg.max_walltime} s of wall-time, job "
                    f"asks {self.walltime[j]} s")
        for res, limit in cfg.max_total.items():
            r = self.platform.resources.index(res)
            total = units * int(self.req[j, r])
            if total > limit:
                return f"queue '{qname}' allows at most {limit} {res} in all, job asks {total}"
        del wl
        return None

    def _placement_impossible(self, j: int, qname: str, units: int,
                              forever_busy: BoolArray) -> str | None:
        r = self.job_res[j]
        req = self.req[j]
        if r >= 0:
            res = self.reservations[r]
            fit = self._fitting(("resv", r), res.nodes, req)
            if fit < units:
                return (f"reservation '{res.name}' can host at most {fit} of its {units} "
                        f"units")
            if self.walltime[j] > res.duration:
                return (f"wall-time {self.walltime[j]} s exceeds reservation '{res.name}' "
                        f"({res.duration} s)")
            if res.last_end() - self.walltime[j] < int(self.workload.submit[j]):
                return f"reservation '{res.name}' ends before the job could finish"
            return None
        q = self.queue[j]
        mask = self.q_mask[q]
        closed = tuple(k for k, res in enumerate(self.reservations)
                       if res.period is not None and res.count is None
                       and res.period - res.duration < self.walltime[j])
        usable = self._all_nodes if mask is None else mask
        if closed:
            usable = usable.copy()
            for k in closed:
                usable &= ~self.reservations[k].mask
        fit = self._fitting(("queue", q, closed), usable, req)
        if fit >= units:
            return None
        in_queue = self._fitting(("queue", q, ()), self._all_nodes if mask is None else mask,
                                 req)
        if in_queue < units:
            if mask is None:
                return None  # the machine itself cannot host it: the engine's check says so
            return f"the nodes of queue '{qname}' can host at most {in_queue} of its {units} units"
        return (f"standing reservations leave no gap of {self.walltime[j]} s on enough "
                f"nodes (at most {fit} of its {units} units)")

    def _fitting(self, where: tuple[object, ...], nodes: IntArray | BoolArray,
                 req: IntArray) -> int:
        """Units of request ``req`` the ``nodes`` (indices or mask; ``where`` names them)
        can host when empty, remembered per place and request (jobs share few)."""
        key = (where, req.tobytes())
        fit = self._fit_memo.get(key)
        if fit is None:
            cap = self.platform.capacity[nodes]
            fit = self._fit_memo[key] = int(units_fitting(cap, req).sum()) if len(cap) else 0
        return fit

    # ---- decision time --------------------------------------------------------------

    def eligible(self, job: int, t: int) -> bool:
        """May ``job`` start at ``t`` as far as time rules go."""
        r = self.job_res[job]
        if r >= 0:
            res = self.reservations[r]
            k = res.at(t)
            return k >= 0 and t + self.walltime[job] <= res.occurrence(k)[1]
        qt = self.q_times[self.queue[job]]
        return qt is None or qt.open(t)

    def next_eligible(self, job: int, t: int) -> int:
        """Earliest ``t' ≥ t`` at which ``job`` may start by time rules (huge if never)."""
        r = self.job_res[job]
        if r >= 0:
            res = self.reservations[r]
            w = self.walltime[job]
            k = res.first_ending_after(t)
            while k >= 0 and res._k_range(k):
                s, e = res.occurrence(k)
                start = max(s, t)
                if start + w <= e:
                    return start
                k += 1
                if res.period is None:
                    break
            return _FAR
        qt = self.q_times[self.queue[job]]
        return t if qt is None else qt.next_open(t)

    def allowed_nodes(self, job: int, t: int) -> BoolArray | None:
        """Nodes ``job`` may use if it starts at ``t`` (``None`` = every node)."""
        mask = self.q_mask[self.queue[job]]
        r = self.job_res[job]
        if r >= 0:
            own = self.reservations[r].mask
            return own if mask is None else own & mask
        w = self.walltime[job]
        for res in self.reservations:
            if res.overlaps(t, t + w):
                mask = ~res.mask if mask is None else mask & ~res.mask
        return mask

    def violation(self, job: int, t: int, nodes: IntArray) -> str | None:
        """Why starting ``job`` at ``t`` on ``nodes`` breaks a rule (``None`` if it does not)."""
        qname = self.workload.queues[self.queue[job]].name
        if not self.eligible(job, t):
            r = self.job_res[job]
            if r >= 0:
                return (f"reservation '{self.reservations[r].name}' is not running at {t} with "
                        f"{self.walltime[job]} s left")
            return f"queue '{qname}' may not start jobs at t={t} ({self.clock.local(t):%a %H:%M})"
        mask = self.allowed_nodes(job, t)
        if mask is not None:
            bad = [int(n) for n in nodes if not mask[n]]
            if bad:
                node = self.platform.node_names[bad[0]]
                why = self._why_node(job, t, bad[0])
                return f"node {node} is not available to it at t={t} ({why})"
        return None

    def _why_node(self, job: int, t: int, node: int) -> str:
        r = self.job_res[job]
        if r >= 0 and not self.reservations[r].mask[node]:
            return f"outside reservation '{self.reservations[r].name}'"
        qm = self.q_mask[self.queue[job]]
        if qm is not None and not qm[node]:
            return "not a node of its queue"
        for res in self.reservations:
            if res.mask[node] and res.overlaps(t, t + self.walltime[job]):
                return (f"its wall-time would run into reservation '{res.name}'")
        return "restricted"

    def next_change(self, t: int) -> int:
        """The first time after ``t`` at which something opens (huge when nothing will)."""
        best = _FAR
        for qt in self.q_times:
            if qt is not None:
                best = min(best, qt.next_opening(t))
        for res in self.reservations:
            best = min(best, res.next_boundary(t))
        return best

    def hopeless(self, job: int, t: int) -> str | None:
        """Why queued ``job`` can no longer start (its reservation is over), else None."""
        r = self.job_res[job]
        if r < 0 or self.next_eligible(job, t) < _FAR:
            return None
        return (f"reservation '{self.reservations[r].name}' ended before the job could "
                "start")

    def describe(self) -> dict[str, object]:
        """What the run enforced (for the results' configuration)."""
        return {
            "time_origin": "assumed" if self.clock.assumed else "workload",
            "timezone": str(self.clock.tz),
            "reservations": [
                {"name": r.name, "queue": r.queue, "nodes": len(r.nodes), "start": r.start,
                 "duration": r.duration, "period": r.period, "count": r.count}
                for r in self.reservations],
            "heterogeneous_jobs": len(self.components),
        }


def build_constraints(workload: Workload, platform: Platform, req: IntArray
                      ) -> Constraints | None:
    """The run's constraints, or ``None`` when nothing applies."""
    if not engine_rules_apply(workload, platform):
        return None
    return Constraints(workload, platform, req)


__all__ = ["BoundReservation", "Constraints", "build_constraints", "engine_rules_apply"]
