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
from dispatchlab.engine.decisions import Decision, Plan, Start, WakeAt
from dispatchlab.engine.events import Events
from dispatchlab.engine.recorder import Recorder
from dispatchlab.engine.state import Running, SystemView
from dispatchlab.errors import DispatchlabError, InfeasibleJob, InvalidDecision
from dispatchlab.platform.platform import Platform, units_fitting
from dispatchlab.workload.workload import Workload

IntArray = npt.NDArray[np.int64]

_END, _WAKE = 0, 1  # heap event kinds; ends sort before timers at one timestamp


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

    def run(self) -> Recorder:
        """Run to the end and return what happened."""
        wl, plat, disp = self.workload, self.platform, self.dispatcher
        view = SystemView(wl, plat, self.req)
        rec = Recorder(wl, plat)
        rejected = self._check_feasible(rec)
        rng = np.random.default_rng(self.seed)
        disp.reset(view, rng)

        submit = wl.submit.tolist()
        duration = np.minimum(wl.runtime, wl.walltime).tolist()
        killed_flag = (wl.runtime > wl.walltime).tolist()
        n = len(submit)
        heap: list[tuple[int, int, int, int]] = []
        seq = 0
        nxt = 0
        clock = time.process_time
        wall0 = time.perf_counter()
        progress_every = max(n // 200, 1)
        done = 0
        events = Events()

        while nxt < n or heap:
            t = submit[nxt] if nxt < n else heap[0][0]
            if heap and heap[0][0] < t:
                t = heap[0][0]
            events = Events(time=t)
            view.now = t
            # 1. completions (and kills) at t, then timers
            while heap and heap[0][0] == t:
                _, kind, _, job = heapq.heappop(heap)
                if kind == _END:
                    run = view.running.pop(job)
                    self._release(view, job, run)
                    events.finished.append(job)
                    if killed_flag[job]:
                        events.killed.append(job)
                    rec.end(job, t)
                    done += 1
                else:
                    events.woken = True
            # 2. submissions at t
            while nxt < n and submit[nxt] == t:
                if nxt not in rejected:
                    view.queue[nxt] = None
                    events.submitted.append(nxt)
                nxt += 1
            # 3. one dispatcher call
            c0 = clock()
            decisions = disp.decide(view, events)
            rec.decision_time(t, clock() - c0)
            # 4. validate and apply
            for d in decisions:
                if type(d) is Start:
                    self._start(view, d)
                    end = t + duration[d.job]
                    view.running[d.job] = Running(t, d.nodes, d.counts, end)
                    rec.start(d.job, t, d.nodes, d.counts)
                    heapq.heappush(heap, (end, _END, seq, d.job))
                    seq += 1
                elif type(d) is WakeAt:
                    if d.time <= t:
                        raise InvalidDecision(
                            f"{disp.name}: wake-up at {d.time} is not after now ({t})"
                        )
                    heapq.heappush(heap, (d.time, _WAKE, seq, -1))
                    seq += 1
                elif type(d) is Plan:
                    rec.plan(d.job, d.time)
                else:
                    raise InvalidDecision(f"{disp.name}: unknown decision {d!r}")
            rec.sample(t, view)
            if self.progress is not None and done % progress_every == 0:
                self.progress(done, n)
            if not heap and nxt >= n and view.queue:
                stuck = list(view.queue)[:5]
                raise DispatchlabError(
                    f"dispatcher '{disp.name}' left {len(view.queue)} job(s) queued on an "
                    f"idle machine with no pending event (first job ids: "
                    f"{[int(wl.job_id[j]) for j in stuck]})"
                )
        if self.progress is not None:
            self.progress(n, n)
        rec.finish(time.perf_counter() - wall0, disp.run_stats())
        return rec

    # ---- validation and application -------------------------------------------------

    def _start(self, view: SystemView, d: Start) -> None:
        job = d.job
        name = self.dispatcher.name
        if job not in view.queue:
            state = "running" if job in view.running else "not queued"
            raise InvalidDecision(f"{name}: job {self._jid(job)} cannot start: it is {state}")
        nodes, counts = d.nodes, d.counts
        if len(nodes) != len(counts) or len(nodes) == 0:
            raise InvalidDecision(f"{name}: job {self._jid(job)}: nodes and counts must be "
                                  "non-empty and of equal length")
        units = int(self.workload.units[job])
        if int(counts.sum()) != units or (counts <= 0).any():
            raise InvalidDecision(
                f"{name}: job {self._jid(job)} needs {units} units, decision places "
                f"{counts.tolist()} on nodes {nodes.tolist()}"
            )
        if nodes.min() < 0 or nodes.max() >= view.free.shape[0]:
            raise InvalidDecision(f"{name}: job {self._jid(job)}: node index out of range")
        if len(nodes) > 1 and len(np.unique(nodes)) != len(nodes):
            raise InvalidDecision(f"{name}: job {self._jid(job)}: a node is listed twice")
        need = counts[:, None] * view.req[job]
        after = view.free[nodes] - need
        if (after < 0).any():
            k, r = np.argwhere(after < 0)[0]
            raise InvalidDecision(
                f"{name}: job {self._jid(job)} needs {need[k, r]} "
                f"{self.platform.resources[r]} on node {self.platform.node_names[nodes[k]]}, "
                f"{view.free[nodes[k], r]} free"
            )
        view.free[nodes] = after
        ft = view.free_total
        for r, q in enumerate(view.req_rows[job]):
            if q:
                ft[r] -= units * q
        del view.queue[job]

    def _release(self, view: SystemView, job: int, run: Running) -> None:
        view.free[run.nodes] += run.counts[:, None] * view.req[job]
        units = int(self.workload.units[job])
        ft = view.free_total
        for r, q in enumerate(view.req_rows[job]):
            if q:
                ft[r] += units * q

    def _jid(self, job: int) -> int:
        return int(self.workload.job_id[job])

    def _check_feasible(self, rec: Recorder) -> set[int]:
        """Jobs the empty machine can never host: error, or rejected with a reason."""
        bad: set[int] = set()
        for req_row, idx in _distinct_rows(self.req):
            fit = int(units_fitting(self.platform.capacity, req_row).sum())
            units = self.workload.units[idx]
            over = idx[units > fit]
            for j in over.tolist():
                reason = (f"needs {int(self.workload.units[j])} unit(s) of "
                          f"{_fmt_req(self.platform.resources, req_row)}; the empty machine "
                          f"hosts at most {fit}")
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


def _fmt_req(resources: Sequence[str], row: IntArray) -> str:
    return "{" + ", ".join(f"{r}={int(v)}" for r, v in zip(resources, row, strict=True) if v) + "}"


def run_simulation(
    workload: Workload, platform: Platform, dispatcher: Dispatcher, **kwargs: Any
) -> Recorder:
    """Shorthand for ``Simulator(...).run()``."""
    return Simulator(workload, platform, dispatcher, **kwargs).run()


__all__ = ["Decision", "Simulator", "map_requests", "run_simulation"]
