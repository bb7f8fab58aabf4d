"""The event loop: one decision point per :meth:`Simulator.step`, read on one screen.

At each step the engine pops every event of the next timestamp from its heap — segment
ends, node transitions, scenario changes, operator-rule changes, dispatcher timers, in
that order — and applies each with the handler of its kind; then it admits the jobs
submitted at that time, calls the dispatcher once, and applies each decision with the
validator of its type (:mod:`dispatchlab.engine.appliers`). :meth:`Simulator.run` steps
until every job has left the machine (or until a given time, SimPy-like).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Sequence
from heapq import heappop
from typing import Any, ClassVar, Unpack

import numpy as np

from dispatchlab.arrays import IntArray
from dispatchlab.engine import appliers, handlers
from dispatchlab.engine.budget import OVER_CAP_POLICIES, JobColumnPower
from dispatchlab.engine.capabilities import capabilities_of
from dispatchlab.engine.constraints import Constraints, build_constraints
from dispatchlab.engine.decisions import Decision
from dispatchlab.engine.events import END, NODE, RULE, SCENARIO, WAKE, WAKE_ON_ALL, Events
from dispatchlab.engine.kernels import warm_up
from dispatchlab.engine.power_meter import MachinePower
from dispatchlab.engine.protocol import Dispatcher
from dispatchlab.engine.recorder import Recorder
from dispatchlab.engine.scenario import Scenario
from dispatchlab.engine.settings import DEFAULTS, EngineSettings
from dispatchlab.engine.state import Budget, Oracle, SystemView
from dispatchlab.engine.stuck_cause import stuck_cause
from dispatchlab.engine.work import WorkModel
from dispatchlab.errors import ConfigError, DispatchlabError, InfeasibleJob
from dispatchlab.platform.platform import Platform, units_fitting
from dispatchlab.seeds import check_seed
from dispatchlab.workload.workload import Workload

_clock = time.perf_counter

_IDLE_LIMIT = 400 * 86400  # idle machine, queued jobs, only timers: a stuck dispatcher
ABORT_POLICIES = ("requeue", "fail")


class Simulator:
    """Simulates ``workload`` on ``platform`` under ``dispatcher``.

    The keyword settings (:class:`~dispatchlab.engine.settings.EngineSettings`, defaults
    in its ``DEFAULTS``): ``seed`` of the dispatcher's random generator; ``progress``:
    called with (jobs done, jobs) as the run goes; ``on_infeasible``: ``"error"``
    (default) stops on a job the empty machine cannot host;
    ``"reject"`` records it as rejected with a reason and goes on. ``scenario``: changes
    over time (nodes, power cap, temperature, profiles). ``walltime_kill``: kill a job at
    its requested time (default) or let every job run its actual run time. ``on_abort``:
    what happens to a job whose node leaves — ``"requeue"`` (back in the queue with its
    submit time; restarts from zero, or from its last checkpoint) or ``"fail"`` (it ends,
    outcome ``aborted``). ``power_cap``: a fixed machine-wide cap in W; ``power_model``:
    how jobs draw power (default: the workload's ``power`` column).
    """

    events: Events  # what happened since the dispatcher's last call (set per run)
    nxt: int  # the next job to be submitted (set per run, as the rest below)
    n_jobs: int
    rejected: set[int]
    _costart: bool

    def __init__(
        self,
        workload: Workload,
        platform: Platform,
        dispatcher: Dispatcher,
        **settings: Unpack[EngineSettings],
    ):
        given = DEFAULTS | settings
        on_infeasible, on_abort = given["on_infeasible"], given["on_abort"]
        power_cap, on_over_cap = given["power_cap"], given["on_over_cap"]
        if on_infeasible not in ("error", "reject"):
            raise ConfigError("on_infeasible must be 'error' or 'reject'", field="on_infeasible")
        if on_abort not in ABORT_POLICIES:
            raise ConfigError(f"on_abort must be one of {', '.join(ABORT_POLICIES)}",
                              field="on_abort")
        if power_cap is not None and not power_cap > 0:
            raise ConfigError(f"power cap must be > 0 W, got {power_cap}", field="power_cap")
        if on_over_cap not in OVER_CAP_POLICIES:
            raise ConfigError(f"on_over_cap must be one of {', '.join(OVER_CAP_POLICIES)}",
                              field="on_over_cap")
        self.workload = workload
        self.platform = platform
        self.dispatcher = dispatcher
        self.caps = capabilities_of(dispatcher)  # what the engine reads of it (oracle, …)
        self.seed = check_seed(given["seed"])
        self.on_infeasible = on_infeasible
        self.progress = given["progress"]
        self.scenario = given["scenario"] or None
        if self.scenario is not None:
            _check_targets(self.scenario, platform)
        self.walltime_kill = given["walltime_kill"]
        self.on_abort = on_abort
        self.power_cap = power_cap
        self.power_model = given["power_model"]
        self.count_idle = given["count_idle"]
        self.on_over_cap = on_over_cap
        self.power_shed = 0  # jobs stopped by the over-cap policy
        self.req = map_requests(workload, platform)
        same = len(self.req) > 0 and bool((self.req == self.req[0]).all())
        #: the per-unit request every job asks, when they all ask the same (else None)
        self.req_one: IntArray | None = self.req[0].copy() if same else None
        self.rules: Constraints | None = None
        self._started = False
        self._called = True  # (set per run by _begin: see step)
        self._wakes_on = WAKE_ON_ALL

    def features(self) -> set[str]:
        """The engine features this run uses beyond plain rigid jobs on a fixed machine
        (the compiled loop runs a run only when it supports every one of them)."""
        out = set()
        if self.scenario is not None:
            out.add("scenario")
        if self._has_budget():
            # a fixed cap with the node model or the workload's power column (the compiled
            # slot loop takes it), or any other power setting (general loop only)
            out.add("power-fixed-cap" if self._fixed_cap() else "power")
        if self.workload.is_malleable:
            out.add("malleable")
        if not self.walltime_kill:
            out.add("no-walltime-kill")
        if self.caps.oracle:
            out.add("oracle")
        return out

    # ---- the loop ----------------------------------------------------------------------

    def run(self, until: int | None = None) -> Recorder:
        """Step until every job has left the machine (then close and return the record),
        or until the next event is after ``until`` (the record so far, still open)."""
        if not self._started:
            self._begin()
        if self._points(until, -1, None):
            return self.rec
        return self._finish()

    def step(self, t: int | None = None) -> None:
        """One decision point: engine events at ``t`` (default: the next time anything
        happens), the submissions of ``t``, one dispatcher call (unless its ``wakes_on``
        flags let the engine skip it), its decisions."""
        if not self._started:
            self._begin()
        self._points(None, 1, t)

    def _points(self, until: int | None, points: int, at: int | None) -> bool:
        """The loop: decision points until every job has left the machine, ``points`` of
        them were run (-1: no limit) or the next is after ``until`` (then True). ``at``:
        the time of the first point (default: the next time anything happens).

        Each point: the engine events of its time from the heap (each applied by the
        handler of its kind), the jobs submitted then, the dispatcher's call (skipped when
        its ``wakes_on`` flags say its answer cannot change), the sample of the point.
        Everything read at every point is bound to locals once.
        """
        view, rec, heap = self.view, self.rec, self.heap
        queue, running = view.queue, view.running
        submit, n, end_seq = self.submit, self.n_jobs, self.end_seq
        on, rejected, decide = self._on, self.rejected, self.decide
        free_total, alive_total = view.free_total, view.alive_total
        sample, at_point, cpu_point = rec.samples.extend, rec.decision_at.append, \
            rec.decision_cpu.append
        budget = view.budget
        power_sample = rec.power_samples.extend
        plain = not self._costart and self.progress is None
        while self.nxt < n or queue or running:
            if points == 0:
                return False
            points -= 1
            nxt = self.nxt
            if at is not None:
                t, at = at, None
            elif nxt < n:  # (the next time, inlined: arrivals still to come)
                while heap and heap[0][1] == END and end_seq[heap[0][3]] != heap[0][2]:
                    heappop(heap)
                t = submit[nxt]
                if heap and heap[0][0] < t:
                    t = heap[0][0]
            else:
                t = self._next_time()
            if until is not None and t > until:
                return True
            events = self.events
            if self._called:  # a fresh record (a dispatcher may keep the one it was given)
                events = self.events = Events(t)
            else:  # the last call was skipped: its events wait for the next call
                events.time = t
            view.now = t
            while heap and heap[0][0] == t:
                _, kind, seq, payload = heappop(heap)
                on[kind](self, payload, seq)
            if nxt < n and submit[nxt] == t:  # admit the jobs submitted now
                first = nxt
                while nxt < n and submit[nxt] == t:
                    nxt += 1
                self.nxt = nxt
                view._advance(nxt)
                new = events.submitted
                for j in range(first, nxt):
                    if j not in rejected:
                        queue[j] = None
                        new.append(j)
            flags = self._wakes_on
            if flags == WAKE_ON_ALL or events.wakes(flags):
                decisions = decide(after=False)
            else:  # the dispatcher's answer cannot change: the point is recorded, no call
                self._called = False
                cpu_point(0.0)
                at_point(t)
                decisions = ()
            if plain:  # (the sample of the point, inlined)
                sample((t, len(queue), len(running), *free_total, *alive_total))
                if budget is not None:
                    power_sample((t, budget.used, budget.cap))
            else:
                self._after(decisions)
        return False

    def decide(self, after: bool = True) -> Sequence[Decision]:
        """The dispatcher's call at the current decision point (``self.events`` filled) and
        its decisions, validated and applied; returns them. ``after``: also the checks and
        sample of the point (the loop does them itself)."""
        t = self.view.now
        rec = self.rec
        dispatcher = self.dispatcher
        c0 = _clock()
        decisions = dispatcher.decide(self.view, self.events)
        rec.decision_cpu.append(_clock() - c0)
        rec.decision_at.append(t)
        self._called = True
        # (read after every call: a dispatcher may set its flags in reset() or decide())
        self._wakes_on = getattr(dispatcher, "wakes_on", WAKE_ON_ALL)
        if decisions:
            apply = self._apply
            for d in decisions:
                applier = apply.get(type(d))
                if applier is None:
                    raise appliers.invalid(self, f"unknown decision {d!r}")
                applier(self, d)
        if after:
            self._after(decisions)
        return decisions

    _on: ClassVar[dict[int, Callable[[Simulator, int, int], None]]] = {
        END: handlers.segment_end,
        NODE: handlers.node_transition,
        SCENARIO: handlers.scenario_change,
        RULE: handlers.rule_change,
        WAKE: handlers.wake,
    }
    _apply: ClassVar[dict[type, Callable[[Simulator, Any], None]]] = appliers.APPLIERS

    # ---- set-up and bookkeeping --------------------------------------------------------

    def _begin(self) -> None:
        """State, record, rules, scenario timers; the dispatcher's reset."""
        wl, plat, disp = self.workload, self.platform, self.dispatcher
        self._started = True
        self.view = view = SystemView(wl, plat, self.req)
        self.events = Events(0)
        self.rec = rec = Recorder(wl, plat, self.req)
        rec.walltime_kill = self.walltime_kill
        self.work = WorkModel(wl)
        n = wl.n_jobs
        self.heap: list[tuple[int, int, int, int]] = []
        self.seq = 0
        self.nxt = 0
        self.done = 0
        self.submit: list[int] = wl.submit.tolist()
        self.n_jobs = n
        self.units: list[int] = wl.units.tolist()
        # rigid jobs on their first run end exactly min(runtime, walltime) after starting
        fresh_dur = np.minimum(wl.runtime, wl.walltime) if self.walltime_kill else wl.runtime
        self.fresh_dur: list[int] = fresh_dur.tolist()
        self.fresh_killed: list[bool] = ((wl.runtime > wl.walltime) & self.walltime_kill
                                         ).tolist()
        self.left: list[float] = wl.runtime.astype(np.float64).tolist()  # reference s left
        # malleable jobs may start on another unit count: their ends go through the work model
        self.fresh: list[bool] = ((wl.min_units == wl.units) & (wl.max_units == wl.units)
                                  ).tolist()
        self.walltime: list[int] = self.work.walltime
        self.held_units: list[int] = [0] * n  # units of each job's current segment
        self.run_start: list[int] = [-1] * n
        self.work_from: list[int] = [-1] * n
        self.end_seq: list[int] = [-1] * n  # heap sequence of each job's live end entry
        self.end_killed: list[bool] = [False] * n
        self.node_seq: list[int] = [-1] * plat.n_nodes  # live transition entry per node
        self.rejected = self._check_feasible(rec)
        self.rejected |= self.reject_over_cap(rec, self.rejected)
        rules = self.rules = view.rules = build_constraints(wl, plat, self.req)
        if rules is not None:
            rec.rules_info = rules.describe()
            for j, reason in rules.rejections().items():
                if j not in self.rejected:
                    rec.reject(j, reason)
                    self.rejected.add(j)
            self.push(rules.next_change(-1), RULE, -1)
        # heterogeneous jobs: every component must start in the same decision
        self._costart = rules is not None and bool(rules.components)
        self.meter: MachinePower | None = None
        if self._has_budget():
            jobs = self.power_model
            if jobs is None and plat.power_table is None:
                jobs = JobColumnPower(wl)
            self.meter = MachinePower(view, self.req, plat.power_table, jobs, self.count_idle)
            cap = float("inf") if self.power_cap is None else self.power_cap
            view.budget = Budget("power", cap, self.meter.nodes_total)
            view.power_model = self.meter
            view.env["power_cap"] = view.budget.cap
            rec.power_mode = {"node_mode": self.meter.node_mode,
                              "idle_counted": self.meter.table is not None
                              and self.count_idle}
        self.job_power: dict[int, float] = {}
        if self.scenario is not None:
            view.scenario = self.scenario.announced()
            for k, c in enumerate(self.scenario.changes):
                self.push(c.time, SCENARIO, k)
        if self.caps.oracle:
            view.oracle = Oracle(wl)
        rec.engine_info = self.engine_info()
        self.idle_since = -1
        self._called = True  # the dispatcher saw every event so far
        self._wakes_on = WAKE_ON_ALL
        self.wall0 = time.perf_counter()
        warm_up()
        disp.reset(view, np.random.default_rng(self.seed))

    def engine_info(self) -> dict[str, Any]:
        """The engine settings of this run (recorded with the results)."""
        info: dict[str, Any] = {"walltime_kill": self.walltime_kill, "on_abort": self.on_abort,
                                "oracle": self.caps.oracle}
        if self.scenario is not None:
            info["scenario"] = self.scenario.describe()
        if self._has_budget():
            if self.power_model is not None:
                model = dict(self.power_model.describe())
            elif self.platform.power_table is not None:
                model = {"name": "node-model"}
            else:
                model = {"name": "job-column"}
            info["power"] = {"cap": self.power_cap, "model": model,
                             "idle_counted": self.count_idle
                             and self.platform.power_table is not None,
                             "on_over_cap": self.on_over_cap}
        return info

    def _fixed_cap(self) -> bool:
        """A fixed power cap, no scenario, jobs drawing through the platform's node model or
        the workload's power column."""
        return (self.power_cap is not None and self.scenario is None
                and (self.power_model is None or type(self.power_model) is JobColumnPower))

    def _has_budget(self) -> bool:
        """A power cap (fixed or scenario) or a job power source was given."""
        return self.power_cap is not None or self.power_model is not None or (
            self.scenario is not None and "power_cap" in self.scenario.kinds())

    def req_of(self, job: int) -> IntArray:
        """Job ``job``'s per-unit request over the platform's resources (one shared row when
        every job asks the same)."""
        one = self.req_one
        return one if one is not None else self.req[job]

    def push(self, t: int, kind: int, payload: int) -> int:
        """Schedule an event; returns its sequence number (to cancel it later)."""
        seq = self.seq
        heapq.heappush(self.heap, (t, kind, seq, payload))
        self.seq = seq + 1
        return seq

    def _next_time(self) -> int:
        """The time of the next decision point (stale end entries are dropped)."""
        heap, end_seq = self.heap, self.end_seq
        while heap and heap[0][1] == END and end_seq[heap[0][3]] != heap[0][2]:
            heapq.heappop(heap)
        if self.nxt < len(self.submit):
            t = self.submit[self.nxt]
            return heap[0][0] if heap and heap[0][0] < t else t
        if not heap:
            stuck = list(self.view.queue)[:5]
            raise DispatchlabError(
                f"dispatcher '{self.dispatcher.name}' left {len(self.view.queue)} job(s) "
                f"queued on an idle machine with no pending event (first job ids: "
                f"{[self.jid(j) for j in stuck]}){stuck_cause(self)}")
        t = heap[0][0]
        if not self.view.running:  # queued jobs only: a stuck dispatcher is caught
            if self.idle_since < 0:
                self.idle_since = t
            elif t - self.idle_since > _IDLE_LIMIT:
                stuck = list(self.view.queue)[:5]
                raise DispatchlabError(
                    f"dispatcher '{self.dispatcher.name}' left {len(self.view.queue)} job(s) "
                    f"queued on an idle machine for over {_IDLE_LIMIT // 86400} days of "
                    f"timers (first job ids: {[self.jid(j) for j in stuck]}){stuck_cause(self)}")
        else:
            self.idle_since = -1
        return t

    def _after(self, decisions: Sequence[Decision]) -> None:
        """Checks spanning several decisions, the sample of this decision point."""
        view = self.view
        if self._costart:
            appliers.check_costart(self, decisions)
        rec = self.rec
        rec.samples.extend((view.now, len(view.queue), len(view.running), *view.free_total,
                            *view.alive_total))
        budget = view.budget
        if budget is not None:
            rec.power_samples.extend((view.now, budget.used, budget.cap))
        if self.progress is not None and self.done % max(len(self.submit) // 200, 1) == 0:
            self.progress(self.done, len(self.submit))

    def _finish(self) -> Recorder:
        if self.progress is not None:
            self.progress(len(self.submit), len(self.submit))
        self.note_power_shed(self.rec)
        self.rec.finish(time.perf_counter() - self.wall0, self.dispatcher.run_stats())
        return self.rec

    def note_power_shed(self, rec: Recorder) -> None:
        """Record how many jobs the over-cap policy stopped (when it may stop any); the
        compiled loop calls it too, so both loops record the same engine settings."""
        if "power" in rec.engine_info and self.on_over_cap != "wait":
            rec.engine_info["power"]["jobs_stopped_over_cap"] = self.power_shed

    def jid(self, job: int) -> int | str:
        """The trace's id of engine index ``job`` (or a marker for an unknown index)."""
        if not isinstance(job, (int, np.integer)) or not 0 <= job < self.workload.n_jobs:
            return f"<unknown index {job}>"
        return int(self.workload.job_id[job])

    def _check_feasible(self, rec: Recorder) -> set[int]:
        """Jobs the empty machine can never host: error, or rejected with a reason."""
        bad: set[int] = set()
        need_units = self.workload.min_units
        for req_row, idx in _distinct_rows(self.req):
            fit = int(units_fitting(self.platform.capacity, req_row).sum())
            over = idx[need_units[idx] > fit]
            why = _why_unhostable(self.platform, req_row) if fit == 0 else ""
            for j in over.tolist():
                reason = (f"needs {int(need_units[j])} unit(s) of "
                          f"{_fmt_req(self.platform.resources, req_row)}; the empty machine "
                          f"hosts at most {fit}{why}")
                if self.on_infeasible == "error":
                    raise InfeasibleJob(f"{self.workload.source}: job {self.jid(j)} {reason}")
                rec.reject(j, reason)
                bad.add(j)
        return bad

    def reject_over_cap(self, rec: Recorder, skip: set[int]) -> set[int]:
        """Jobs a fixed power cap never lets start, even on the empty machine: error, or
        rejected with a reason (both loops call this before their first event)."""
        if self.power_cap is None or (self.scenario is not None
                                      and "power_cap" in self.scenario.kinds()):
            return set()
        from dispatchlab.engine.cap_feasibility import over_cap

        wl, plat = self.workload, self.platform
        jobs = self.power_model
        if jobs is None and plat.power_table is None:
            jobs = JobColumnPower(wl)
        meter = MachinePower(SystemView(wl, plat, self.req), self.req, plat.power_table,
                             jobs, self.count_idle)
        out: set[int] = set()
        for j, reason in over_cap(meter, self.req, wl.min_units, self.power_cap, skip):
            if self.on_infeasible == "error":
                raise InfeasibleJob(f"{wl.source}: job {self.jid(j)} {reason} "
                                    "(--reject-infeasible records such jobs as rejected)")
            rec.reject(j, reason)
            out.add(j)
        return out


def _check_targets(scenario: Scenario, platform: Platform) -> None:
    """Every node and resource a scenario names exists, and no alive count exceeds the
    platform (before the run, not when the row is reached)."""
    for c in scenario.changes:
        if c.what == "alive_nodes" and c.value > platform.n_nodes:
            raise ConfigError(f"alive_nodes {c.value:g} at t={c.time} exceeds the platform's "
                              f"{platform.n_nodes} nodes ('{platform.name}')",
                              source=scenario.source, field="value")
        if c.what == "desired_utilization" and (c.target or "cores") not in platform.resources:
            raise ConfigError(f"desired_utilization at t={c.time}: '{c.target}' is not a "
                              f"resource of platform '{platform.name}' (known: "
                              f"{', '.join(platform.resources)})",
                              source=scenario.source, field="target")
        if c.what in ("node_down", "node_up"):
            try:
                platform.node_set([c.target], "target")
            except ConfigError:
                names = platform.node_names
                raise ConfigError(
                    f"{c.what} at t={c.time}: '{c.target}' is neither a node nor a group of "
                    f"platform '{platform.name}' (nodes {names[0]} … {names[-1]})",
                    source=scenario.source, field="target") from None


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
    if len(req) == 0:
        return []
    if (req == req[0]).all():  # one request shape for every job (the usual case)
        return [(req[0].copy(), np.arange(len(req)))]
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
