"""The ``offline-plan`` dispatchers: replay a plan file, or plan each chunk (day) of jobs
offline with the profit-driven planner and replay it (thesis ch. 6).

- :class:`PlanFileDispatcher` (``plan=FILE``): replays a plan written by ``dispatchlab
  plan`` (jobs matched by ``job_id``).
- :class:`OfflinePlanner` (``offline-heuristic``, ``offline-multi``, ``offline-relax``,
  ``offline-delay``, or ``offline=SEARCH,...``): when a job of a chunk not yet planned is
  queued, plans the whole chunk — every job submitted in ``[k·chunk, (k+1)·chunk)`` from
  the workload's origin, future submissions included, as the thesis's offline scheduler
  knows the day — from now, around the running jobs and the jobs already planned, then
  replays it. It reads the future, so it declares ``oracle = True`` (results record it).

The profit model needs a PUE table (``cooling``: air | hybrid | CSV, ``:scaled`` to fit
the machine), prices (``cheap`` | ``expensive`` | ``K1:K2``) and the ambient temperature:
the run's announced scenario ``temperature`` rows, else ``temperature=summer|winter`` (the
seeded season profile of :mod:`dispatchlab.engine.temperature`) or a scenario file. No
temperature at all is an error at the start of the run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.dispatchers.offline_plan.replay import Planned, PlanReplay
from dispatchlab.engine.capabilities import Capabilities
from dispatchlab.engine.decisions import Decision, WakeAt
from dispatchlab.engine.decisions import Plan as PlanDecision
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError
from dispatchlab.seeds import check_seed

if TYPE_CHECKING:
    from dispatchlab.dispatchers.offline_plan.planner.plan import Plan


class PlanFileDispatcher(BaseDispatcher):
    """Replay the plan in ``path`` (module doc; rules in :mod:`.replay`)."""

    name = "offline-plan"
    capabilities = Capabilities(family="offline-plan", fixed_power_cap=False,
                                varying_power_cap=False)

    def __init__(self, path: str, compress: bool = False):
        self.path = path
        self.compress = compress

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Load the plan and map its job ids to the run's rows."""
        super().reset(view, rng)
        from dispatchlab.dispatchers.offline_plan.planner.plan import load_plan

        plan = load_plan(self.path)
        self._replay = PlanReplay(self.compress)
        # the plan's rows are the run's job indices (checked against job ids on arrival)
        self._replay.add({int(plan.rows[k]): _planned(plan, k) for k in range(len(plan))})
        self._ids = {int(plan.rows[k]): int(plan.job_ids[k]) for k in range(len(plan))}
        self._plan = plan

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        """Check newly submitted jobs against the plan, then replay."""
        out: list[Decision] = []
        for j in events.submitted:
            want = self._ids.get(int(j))
            if want is None:
                continue
            got = int(view.jobs.job_id[j])
            if got != want:
                raise ConfigError(f"{self.path}: row {int(j)} is job {want} in the plan but "
                                  f"job {got} in this workload (plan made for another "
                                  "workload?)", field="plan")
            out.append(PlanDecision(int(j), self._replay.plan[int(j)].start))
        out.extend(self._replay.decide(view))
        wake = self._replay.next_start(view)
        if wake is not None:
            out.append(WakeAt(wake))
        return out

    def run_stats(self) -> dict[str, Any]:
        """Replay statistics."""
        return {"replay": self._replay.stats(), "plan_jobs": len(self._plan)}


def _planned(plan: Plan, k: int) -> Planned:
    nodes = np.array([n for n, _ in plan.alloc[k]], dtype=np.int64)
    counts = np.array([u for _, u in plan.alloc[k]], dtype=np.int64)
    return Planned(int(plan.starts[k]), nodes, counts, int(plan.duration[k]))


#: Delay iterations per chunk when none are given (2–4 s on a 1,000-job Curie day).
DEFAULT_DELAY_RUNS = 500


class OfflinePlanner(BaseDispatcher):
    """Plan each chunk offline (``search``) and replay it (module doc)."""

    capabilities = Capabilities(
        family="offline-plan", fixed_power_cap=False, varying_power_cap=False)

    oracle = True

    #: Plans with a PUE table, prices and the ambient temperature (of the run's scenario
    #: when no ``temperature=`` is given): simulated once per pricing scenario.
    reads_pricing = True

    def __init__(self, search: str = "delay", chunk: int = 86400, duration: str = "runtime",
                 step: int = 60, cooling: str = "air", temperature: str | None = None,
                 prices: str = "cheap", runs: int | None = None, time_s: float | None = None,
                 cp_det_time: float = 2.0, delay: int = 60, compress: bool = False,
                 watts_per_core: float | None = None, seed: int = 0,
                 name: str | None = None):
        from dispatchlab.dispatchers.offline_plan.planner.instance import DURATIONS
        from dispatchlab.dispatchers.offline_plan.planner.searches import SEARCHES

        if duration not in DURATIONS:
            raise ConfigError(f"duration must be one of {', '.join(DURATIONS)}, got "
                              f"'{duration}'", field="duration")
        if search not in SEARCHES:
            raise ConfigError(f"unknown search '{search}' (known: {', '.join(SEARCHES)})",
                              field="offline")
        for key, value in (("chunk", chunk), ("step", step), ("delay", delay)):
            if value <= 0:
                raise ConfigError(f"{key}={value}: must be > 0", field=key)
        from dispatchlab.dispatchers.offline_plan.planner.objective import check_window

        check_window(chunk, "chunk")
        from dispatchlab.dispatchers.offline_plan.planner.searches import Limits

        Limits(runs=runs, time_s=time_s, cp_det_time=cp_det_time)  # validates them
        self.search = search
        self.chunk = chunk
        self.duration = duration
        self.step = step
        self.cooling = cooling
        self.temperature = temperature
        self.prices = prices
        # Delay-Search without a limit delays every job to the horizon (~24k iterations on
        # a 1,000-job day): a dispatcher bounds it by default
        self.runs = runs if runs is not None or search != "delay" else DEFAULT_DELAY_RUNS
        self.time_s = time_s
        self.cp_det_time = cp_det_time
        self.delay = delay
        self.compress = compress
        self.watts_per_core = watts_per_core
        self.seed = check_seed(seed)
        self.name = name or f"offline-{search}"

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Resolve the cooling table, prices and temperature series for the run."""
        super().reset(view, rng)
        if view.oracle is None:
            raise ConfigError("the offline planner needs the oracle (the engine fills it "
                              "for dispatchers declaring oracle = True)", field="dispatcher")
        from dispatchlab.dispatchers.offline_plan.planner.profit_inputs import resolve_profit_inputs

        wl = view.oracle.workload
        # a season profile long enough for plans reaching past the last submission
        span = int(wl.submit.max() - min(int(wl.submit.min()), 0)) if wl.n_jobs else 0
        self._inputs = resolve_profit_inputs(
            self.name, cooling=self.cooling, prices=self.prices,
            temperature=self.temperature, scenario=view.scenario, days=span // 86400 + 8,
            seed=self.seed, max_it_power=lambda: _max_it_power(wl, view))
        self._origin = int(wl.submit.min()) if wl.n_jobs else 0
        self._chunk_of = (wl.submit - self._origin) // self.chunk
        self._planned_chunks: set[int] = set()
        self._replay = PlanReplay(self.compress)
        self._chunks: list[dict[str, Any]] = []
        self._plan_time = 0.0

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        """Plan the chunks of newly queued jobs, then replay."""
        out: list[Decision] = []
        todo = sorted({int(self._chunk_of[j]) for j in view.queue
                       if int(self._chunk_of[j]) not in self._planned_chunks})
        for k in todo:
            self._plan_chunk(view, k)
        for j in events.submitted:
            p = self._replay.plan.get(int(j))
            if p is not None:
                out.append(PlanDecision(int(j), p.start))
        out.extend(self._replay.decide(view))
        wake = self._replay.next_start(view)
        if wake is not None:
            out.append(WakeAt(wake))
        return out

    def _plan_chunk(self, view: SystemView, k: int) -> None:
        from dispatchlab.dispatchers.offline_plan.planner.instance import from_workload
        from dispatchlab.dispatchers.offline_plan.planner.searches import Limits, run_search

        t0 = time.perf_counter()
        self._planned_chunks.add(k)
        wl = view.oracle.workload  # type: ignore[union-attr]
        rows = np.flatnonzero(self._chunk_of == k)
        rows = np.array([j for j in rows if j >= view.jobs.known or j in view.queue],
                        dtype=np.int64)
        if not len(rows):
            return
        now = view.now
        inst = from_workload(wl, view.platform, rows, duration=self.duration, origin=now,
                             step=self.step, busy=self._busy(view),
                             watts_per_core=self.watts_per_core)
        start = self._origin + k * self.chunk
        pm = self._inputs.model(max(start, now), start + self.chunk)
        limits = Limits(runs=self.runs, time_s=self.time_s, cp_det_time=self.cp_det_time,
                        seed=self.seed)
        options: dict[str, Any] = {"delay": self.delay} if self.search == "delay" else {}
        result = run_search(self.search, inst, pm, limits, **options)
        plan = result.plan(inst)
        self._replay.add({int(plan.rows[i]): _planned(plan, i) for i in range(len(plan))})
        elapsed = time.perf_counter() - t0
        self._plan_time += elapsed
        self._chunks.append({"chunk": k, "jobs": len(rows), "planned_at": now,
                             "profit": result.profit, "time_s": round(elapsed, 3),
                             "ordering": result.stats.get("ordering"),
                             "improvements": result.stats.get("improvements")})

    def _busy(self, view: SystemView) -> list[tuple[int, int, np.ndarray]]:
        """Running jobs until their expected end, and planned jobs not started yet."""
        out = []
        now = view.now
        runtime = view.oracle.runtime  # type: ignore[union-attr]
        cap = view.capacity
        for j, r in view.running.items():
            end = (min(r.start + int(runtime[j]), r.requested_end)
                   if self.duration == "runtime" else r.requested_end)
            usage = np.zeros_like(cap)
            usage[r.nodes] = r.counts[:, None] * view.req[j][None, :]
            out.append((now, max(int(end), now + 1), usage))
        for j in view.queue:
            p = self._replay.plan.get(int(j))
            if p is None:
                continue
            usage = np.zeros_like(cap)
            usage[p.nodes] = p.counts[:, None] * view.req[j][None, :]
            since = max(p.start, now)
            out.append((since, since + max(p.duration, 1), usage))
        return out

    def run_stats(self) -> dict[str, Any]:
        """Planning time, per-chunk results and the replay statistics."""
        return {"planning_s": round(self._plan_time, 3), "chunks": self._chunks,
                "replay": self._replay.stats()}


def _max_it_power(wl: Any, view: SystemView) -> float:
    """All cores at the hungriest job's W per core (to scale a PUE table)."""
    c = view.platform.resources.index("cores")
    req = view._req
    per_core = wl.power / np.maximum(wl.units * req[:, c], 1)
    per_core = per_core[np.isfinite(per_core)]
    if not len(per_core):
        raise ConfigError("cannot scale the PUE table: no job has a power figure",
                          field="cooling")
    return float(view.capacity[:, c].sum() * per_core.max())
