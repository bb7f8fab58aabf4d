"""The event loop: submissions, completions, kills, one dispatcher call per decision point.

Read it top to bottom in :meth:`Simulator.run`: pop every event of the next timestamp
(completions before submissions), call the dispatcher once, validate and apply its
decisions, schedule their consequences.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from dispatchlab.dispatchers.base import Dispatcher
from dispatchlab.engine.constraints import Constraints, build_constraints
from dispatchlab.engine.decisions import Decision, Plan, Start, WakeAt
from dispatchlab.engine.events import Events
from dispatchlab.engine.kernels import OK, check_and_take, release, warm_up
from dispatchlab.engine.recorder import Recorder
from dispatchlab.engine.state import Running, SystemView
from dispatchlab.errors import DispatchlabError, InfeasibleJob, InvalidDecision
from dispatchlab.platform.platform import Platform, units_fitting
from dispatchlab.workload.workload import Workload

IntArray = npt.NDArray[np.int64]

_END, _WAKE, _RULE = 0, 1, 2  # heap event kinds; ends sort before timers at one timestamp
_IDLE_LIMIT = 400 * 86400  # idle machine, queued jobs, only rule timers: a stuck dispatcher

class Simulator:
    """Simulates ``workload`` on ``platform`` under ``dispatcher``.

    ``on_infeasible``: ``"error"`` (default) stops on a job the empty machine cannot host;
    ``"reject"`` records it as rejected with a reason and goes on.
    """

    def __init__(
        self,
        workload: Workload,
        platform: Platform,
        dispatcher: Dispatcher,
        *,
        seed: int = 0,
        on_infeasible: str = "error",
        progress: Callable[[int, int], None] | None = None,
    ):
        if on_infeasible not in ("error", "reject"):
            raise ValueError("on_infeasible must be 'error' or 'reject'")
        self.workload = workload
        self.platform = platform
        self.dispatcher = dispatcher
        self.seed = seed
        self.on_infeasible = on_infeasible
        self.progress = progress
        self.req = map_requests(workload, platform)
        self.rules: Constraints | None = None

    def run(self) -> Recorder:
        """Run to the end and return what happened."""
        wl, plat, disp = self.workload, self.platform, self.dispatcher
        view = SystemView(wl, plat, self.req)
        rec = Recorder(wl, plat, self.req)
        self._units: list[int] = wl.units.tolist()
        self._n_nodes = plat.n_nodes
        rejected = self._check_feasible(rec)
        rules = self.rules = view.rules = build_constraints(wl, plat, self.req)
        if rules is not None:
            rec.rules_info = rules.describe()
            for j, reason in rules.rejections().items():
                if j not in rejected:
                    rec.reject(j, reason)
                    rejected.add(j)
        rng = np.random.default_rng(self.seed)
        warm_up()
        disp.reset(view, rng)

        submit = wl.submit.tolist()
        duration = np.minimum(wl.runtime, wl.walltime).tolist()
        killed_flag = (wl.runtime > wl.walltime).tolist()
        n = len(submit)
        heap: list[tuple[int, int, int, int]] = []
        heappush, heappop = heapq.heappush, heapq.heappop
        queue, running = view.queue, view.running
        decide = disp.decide
        start_job, release = self._start, self._release
        rec_start, rec_end = rec.start, rec.end
        sample = rec.samples.extend
        free_total = view.free_total
        dec_at, dec_time = rec.decision_at.append, rec.decision_cpu.append
        seq = 0
        nxt = 0
        clock = time.perf_counter
        wall0 = clock()
        progress = self.progress
        progress_every = max(n // 200, 1)
        done = 0
        if rules is not None:
            heappush(heap, (rules.next_change(-1), _RULE, -1, -1))

        idle_since = -1  # rules: when the machine fell idle with jobs still queued
        while nxt < n or heap:
            if rules is not None and nxt >= n and not running:
                if not queue:
                    break  # only rule timers are left
                if idle_since < 0:
                    idle_since = heap[0][0]
                elif heap[0][0] - idle_since > _IDLE_LIMIT:
                    stuck = list(queue)[:5]
                    raise DispatchlabError(
                        f"dispatcher '{disp.name}' left {len(queue)} job(s) queued on an idle "
                        f"machine for over {_IDLE_LIMIT // 86400} days of rule changes (first "
                        f"job ids: {[int(wl.job_id[j]) for j in stuck]})")
            elif idle_since >= 0:
                idle_since = -1
            t = submit[nxt] if nxt < n else heap[0][0]
            if heap and heap[0][0] < t:
                t = heap[0][0]
            events = Events(t)
            view.now = t
            # 1. completions (and kills) at t, then timers
            while heap and heap[0][0] == t:
                _, kind, _, job = heappop(heap)
                if kind == _END:
                    release(view, job, running.pop(job))
                    events.finished.append(job)
                    if killed_flag[job]:
                        events.killed.append(job)
                    rec_end(job, t)
                    done += 1
                elif kind == _RULE:
                    assert rules is not None
                    events.woken = True
                    heappush(heap, (rules.next_change(t), _RULE, -1, -1))
                    if rules.reservations:
                        self._withdraw(view, rec, events)
                else:
                    events.woken = True
            # 2. submissions at t
            while nxt < n and submit[nxt] == t:
                if nxt not in rejected:
                    queue[nxt] = None
                    events.submitted.append(nxt)
                nxt += 1
            # 3. one dispatcher call, timed
            c0 = clock()
            decisions = decide(view, events)
            dec_time(clock() - c0)
            dec_at(t)
            # 4. validate and apply
            for d in decisions:
                if type(d) is Start:
                    start_job(view, d)
                    job = d.job
                    end = t + duration[job]
                    running[job] = Running(t, d.nodes, d.counts, end)
                    rec_start(job, t, d.nodes, d.counts)
                    heappush(heap, (end, _END, seq, job))
                    seq += 1
                elif type(d) is WakeAt:
                    if d.time <= t:
                        raise InvalidDecision(
                            f"{disp.name}: wake-up at {d.time} is not after now ({t})"
                        )
                    heappush(heap, (d.time, _WAKE, seq, -1))
                    seq += 1
                elif type(d) is Plan:
                    rec.plan(d.job, d.time)
                else:
                    raise InvalidDecision(f"{disp.name}: unknown decision {d!r}")
            if rules is not None and rules.components:
                self._check_costart(view, decisions, t)
            sample((t, len(queue), len(running), *free_total))
            if progress is not None and done % progress_every == 0:
                progress(done, n)
            if not heap and nxt >= n and queue:
                stuck = list(queue)[:5]
                raise DispatchlabError(
                    f"dispatcher '{disp.name}' left {len(queue)} job(s) queued on an "
                    f"idle machine with no pending event (first job ids: "
                    f"{[int(wl.job_id[j]) for j in stuck]})"
                )
        if self.progress is not None:
            self.progress(n, n)
        rec.finish(time.perf_counter() - wall0, disp.run_stats())
        return rec

    # ---- validation and application -------------------------------------------------

    def _start(self, view: SystemView, d: Start) -> None:
        """Validate a start and take its resources (InvalidDecision when it is wrong)."""
        job = d.job
        if job not in view.queue:
            state = "running" if job in view.running else "not queued"
            raise InvalidDecision(
                f"{self.dispatcher.name}: job {self._jid(job)} cannot start: it is {state}")
        nodes, counts = d.nodes, d.counts
        units = self._units[job]
        rules = self.rules
        if rules is not None and len(nodes):
            why = rules.violation(job, view.now, np.asarray(nodes))
            if why is not None:
                raise InvalidDecision(f"{self.dispatcher.name}: job {self._jid(job)} cannot "
                                      f"start: {why}")
        if check_and_take(view.free, nodes, counts, view.req[job], units) != OK:
            raise self._explain(view, d)
        ft = view.free_total
        for r, amount in view.demand_nz[job]:
            ft[r] -= amount
        del view.queue[job]

    def _explain(self, view: SystemView, d: Start) -> InvalidDecision:
        """The precise reason a start was refused."""
        name, jid = self.dispatcher.name, self._jid(d.job)
        nodes = np.asarray(d.nodes)
        counts = np.asarray(d.counts)
        units = self._units[d.job]
        where = f"nodes {nodes.tolist()} counts {counts.tolist()}"
        if len(nodes) == 0 or len(nodes) != len(counts):
            return InvalidDecision(f"{name}: job {jid}: nodes and counts must be non-empty and "
                                   f"of equal length ({where})")
        if int(counts.sum()) != units or counts.min() <= 0:
            return InvalidDecision(f"{name}: job {jid} needs {units} units, decision places "
                                   f"{where}")
        if nodes.min() < 0 or nodes.max() >= self._n_nodes:
            return InvalidDecision(f"{name}: job {jid}: node index out of range ({where})")
        if len(nodes) > 1 and not (nodes[1:] > nodes[:-1]).all():
            return InvalidDecision(f"{name}: job {jid}: nodes must be listed in strictly "
                                   f"increasing order ({where})")
        need = counts[:, None] * view.req[d.job]
        after = view.free[nodes] - need
        k, r = np.argwhere(after < 0)[0]
        return InvalidDecision(
            f"{name}: job {jid} needs {need[k, r]} {self.platform.resources[r]} on node "
            f"{self.platform.node_names[nodes[k]]}, {view.free[nodes[k], r]} free"
        )

    def _withdraw(self, view: SystemView, rec: Recorder, events: Events) -> None:
        """Reject queued reservation jobs whose reservation is over."""
        rules = self.rules
        assert rules is not None
        for job in [j for j in view.queue if rules.job_res[j] >= 0]:
            why = rules.hopeless(job, view.now)
            if why is not None:
                del view.queue[job]
                rec.reject(job, why)
                events.withdrawn.append(job)

    def _check_costart(self, view: SystemView, decisions: Sequence[Decision], t: int) -> None:
        """Every component of a heterogeneous job starts in the same decision."""
        rules = self.rules
        assert rules is not None
        for d in decisions:
            if type(d) is Start and d.job in rules.group_of:
                comps = rules.components[rules.group_of[d.job]]
                missing = [c for c in comps if c not in view.running
                           or view.running[c].start != t]
                if missing:
                    gid = int(self.workload.hetjob[d.job])
                    raise InvalidDecision(
                        f"{self.dispatcher.name}: heterogeneous job {gid}: component job "
                        f"{self._jid(d.job)} started at {t} without component job(s) "
                        f"{[self._jid(c) for c in missing]}: all components start together")

    def _release(self, view: SystemView, job: int, run: Running) -> None:
        release(view.free, run.nodes, run.counts, view.req[job])
        ft = view.free_total
        for r, amount in view.demand_nz[job]:
            ft[r] += amount

    def _jid(self, job: int) -> int | str:
        """The trace's id of engine index ``job`` (or a marker for an unknown index)."""
        if not 0 <= job < self.workload.n_jobs:
            return f"<unknown index {job}>"
        return int(self.workload.job_id[job])

    def _check_feasible(self, rec: Recorder) -> set[int]:
        """Jobs the empty machine can never host: error, or rejected with a reason."""
        bad: set[int] = set()
        for req_row, idx in _distinct_rows(self.req):
            fit = int(units_fitting(self.platform.capacity, req_row).sum())
            units = self.workload.units[idx]
            over = idx[units > fit]
            why = _why_unhostable(self.platform, req_row) if fit == 0 else ""
            for j in over.tolist():
                reason = (f"needs {int(self.workload.units[j])} unit(s) of "
                          f"{_fmt_req(self.platform.resources, req_row)}; the empty machine "
                          f"hosts at most {fit}{why}")
                if self.on_infeasible == "error":
                    raise InfeasibleJob(f"{self.workload.source}: job {self._jid(j)} {reason}")
                rec.reject(j, reason)
                bad.add(j)
        return bad


def map_requests(workload: Workload, platform: Platform) -> IntArray:
    """The workload's per-unit requests over the platform's resource columns."""
    req = np.zeros((workload.n_jobs, len(platform.resources)), dtype=np.int64)
    for k, name in enumerate(workload.resources):
        col = workload.req[:, k]
        if name not in platform.resources:
            if (col > 0).any():
                j = int(np.flatnonzero(col > 0)[0])
                raise InfeasibleJob(
                    f"{workload.source}: job {int(workload.job_id[j])} requests '{name}', which "
                    f"platform '{platform.name}' does not have ({', '.join(platform.resources)})"
                )
            continue
        req[:, platform.resources.index(name)] = col
    return req


def _distinct_rows(req: IntArray) -> Sequence[tuple[IntArray, IntArray]]:
    rows, inverse = np.unique(req, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(rows) + 1))
    return [(rows[k], order[bounds[k]:bounds[k + 1]]) for k in range(len(rows))]


def _why_unhostable(platform: Platform, req: IntArray) -> str:
    """Why no node can host one unit: a resource no node has enough of, or no combination."""
    cap = platform.capacity
    short = [r for r in range(len(req)) if req[r] > 0 and cap[:, r].max() < req[r]]
    if short:
        parts = [f"{platform.resources[r]}={int(req[r])} (largest node has "
                 f"{int(cap[:, r].max())})" for r in short]
        return ": no node has " + ", ".join(parts)
    asked = [platform.resources[r] for r in range(len(req)) if req[r] > 0]
    return f": no node has {' and '.join(asked)} together in these amounts"


def _fmt_req(resources: Sequence[str], row: IntArray) -> str:
    return "{" + ", ".join(f"{r}={int(v)}" for r, v in zip(resources, row, strict=True) if v) + "}"


def run_simulation(
    workload: Workload, platform: Platform, dispatcher: Dispatcher, **kwargs: Any
) -> Recorder:
    """Shorthand for ``Simulator(...).run()``."""
    return Simulator(workload, platform, dispatcher, **kwargs).run()


__all__ = ["Decision", "Simulator", "map_requests", "run_simulation"]
