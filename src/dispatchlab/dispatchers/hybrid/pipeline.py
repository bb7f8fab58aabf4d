"""The hybrid offline/online pipeline (thesis ch. 7, Fig. 7.1) as one dispatcher.

Every 24 h, shortly before the next day ``D`` begins (``lead`` seconds: the longest boot
plus one slot, so nodes wanted on at ``D`` can boot in time):

1. **forecast** (:mod:`.forecast`): the jobs submitted in the last 24 h, replayed 24 h
   later, plus the jobs waiting now, released at ``D``;
2. **offline plan** of the forecast from ``D`` on the machine, the running jobs' nodes
   busy until their requested ends: the planner's job-based heuristic (thesis Alg. 5,
   :mod:`dispatchlab.dispatchers.offline_plan.planner.heuristic`) in arrival order
   (``planner="alg5"``), the
   profit-driven Multi-Search (``"multi"``: Alg. 5 in the 22 orderings of thesis §6.7.1,
   best profit of the day) or Delay-Search (``"delay"``: Alg. 7 from the Multi-Search's
   plan) with a deterministic per-day ``budget``
   (:class:`~dispatchlab.dispatchers.offline_plan.planner.searches.
   Limits` runs), or with ``planner="fifo"`` a rule-based FIFO simulation of the forecast
   (an ablation; ``planner`` in the daily report says which ran). The profit model of the
   searches (PUE table, prices, temperature over the day) is resolved as the
   ``offline-*`` dispatchers resolve it
   (:func:`~dispatchlab.dispatchers.offline_plan.planner.profit_inputs.resolve_profit_inputs`), and
   prices each
   job's ``power`` figure;
3. **profile extraction** (Alg. 8, :mod:`.profile_extraction`) from the previous
   plan's utilization of its day (the observed one for the first run) and the new
   plan's utilization of day ``D``. Reading observed utilization every day instead
   feeds the profile back on itself (a low profile defers jobs, which lowers the next
   day's utilization and profile): on the medium Curie workload that spiral stretched
   the makespan from 31 to 195 days;
4. **online**: DARDIS with node shutdown (:mod:`dispatchlab.dispatchers.dardis.shutdown`)
   follows that profile during day ``D``, switching off ``off_fraction`` of the nodes it
   leaves unused (``hybrid-dardis70`` / ``hybrid-dardis50``; ``hybrid-dardis100`` keeps
   every node on).

The first day has no history: no profile, every node on. Everything uses only what a
scheduler knows at that moment (submissions so far, observed run times of ended jobs,
requested wall-times); :meth:`HybridDardis.run_stats` reports the daily steps.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.dispatchers.dardis.shutdown import DardisShutdown
from dispatchlab.dispatchers.hybrid.forecast import DAY, Forecast, forecast_next_day
from dispatchlab.dispatchers.hybrid.profile_extraction import (
    HOURS,
    OFFSET_PERC,
    THRESHOLD,
    extract_profile,
    hourly,
)
from dispatchlab.dispatchers.offline_plan.planner.profit_inputs import (
    SEASONS,
    ProfitInputs,
    resolve_profit_inputs,
)
from dispatchlab.engine.decisions import Decision, Start, WakeAt
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError
from dispatchlab.params import Attributes
from dispatchlab.seeds import check_seed

if TYPE_CHECKING:
    from dispatchlab.dispatchers.offline_plan.planner.heuristic import Schedule
    from dispatchlab.dispatchers.offline_plan.planner.instance import PlanInstance
    from dispatchlab.dispatchers.offline_plan.planner.objective import ProfitModel

#: Who plans the forecast day: the job-based heuristic in arrival order, the
#: profit-driven searches around it, or a FIFO simulation (ablation).
PLANNERS = ("alg5", "multi", "delay", "fifo")
#: The planners that maximise the day's profit (they need the profit model and job power).
SEARCH_PLANNERS = ("multi", "delay")
#: Delay-Search iterations per day when no budget is given (the offline-delay default).
DEFAULT_DELAY_BUDGET = 500


class HybridDardis(DardisShutdown):
    """Forecast → offline plan → Alg. 8 profile → DARDIS with node shutdown, daily."""

    #: the pipeline's settings, also recorded as a group (``duration`` as
    #: ``forecast_duration``)
    described_attributes: ClassVar[Attributes] = {"pipeline": {
        "threshold": "threshold", "offset_perc": "offset_perc",
        "forecast_duration": "duration", "plan_step": "plan_step", "planner": "planner",
        "cooling": "cooling", "temperature": "temperature", "prices": "prices",
        "budget": "budget", "seed": "seed"}}

    def __init__(self, off_fraction: float, *, threshold: float = THRESHOLD,
                 offset_perc: float = OFFSET_PERC, duration: str = "observed",
                 plan_step: int = 300, slot: int = 300, retries: int = 3,
                 last_resort: str = "machine", planner: str = "alg5",
                 cooling: str = "air", temperature: str | None = None,
                 prices: str = "cheap", budget: int | None = None, seed: int = 0,
                 name: str | None = None) -> None:
        if planner not in PLANNERS:
            raise ConfigError(f"planner must be one of {', '.join(PLANNERS)}, got "
                              f"'{planner}'", field="planner")
        if budget is not None and planner not in SEARCH_PLANNERS:
            raise ConfigError(f"budget is for the search planners "
                              f"({', '.join(SEARCH_PLANNERS)}), not planner={planner}",
                              field="budget")
        if budget is not None and budget < 1:
            raise ConfigError(f"budget must be ≥ 1 run a day, got {budget}", field="budget")
        super().__init__(off_fraction, slot=slot, retries=retries, last_resort=last_resort,
                         name=name or f"hybrid-dardis{round(100 * (1 - off_fraction))}")
        self.threshold = threshold
        self.offset_perc = offset_perc
        self.duration = duration
        self.plan_step = plan_step
        self.planner = planner
        self.cooling = cooling
        self.temperature = temperature
        self.prices = prices
        #: per-day Limits.runs: Multi-Search's heuristic runs (at most its 22 orderings);
        #: for Delay-Search also its delay iterations (after a full Multi-Search)
        self.budget = (budget if budget is not None or planner != "delay"
                       else DEFAULT_DELAY_BUDGET)
        self.seed = check_seed(seed)

    @property
    def reads_pricing(self) -> bool:
        """The search planners plan each day for profit (PUE table, temperature, prices),
        so their schedules depend on those inputs; ``alg5`` and ``fifo`` only report their
        plan's profit (:class:`~dispatchlab.dispatchers.base.BaseDispatcher`)."""
        return self.planner in SEARCH_PLANNERS

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """No profile yet; the first pipeline run before the end of the first day."""
        super().reset(view, rng)
        boot = self._boot
        self._lead = int(boot.max(initial=0)) + 2 * self.slot
        self._day = int(view.now) + DAY
        self._next_run = self._day - self._lead
        n = view.jobs.n_jobs
        self._obs = np.full(n, -1, dtype=np.int64)
        self._start_at: dict[int, int] = {}
        self._busy_t: list[int] = []
        self._busy_d: list[float] = []
        self._total_cores = float(view.capacity[:, self._cores_k].sum())
        self._daily: list[dict[str, Any]] = []
        self._pipe_wake = -1
        self._last_planned: FloatArray | None = None
        self._skipped = 0
        # the profit model's inputs: required by the search planners (errors at the start
        # of the run), used by the others to report their plan's profit when a temperature
        # is given or announced
        self._inputs: ProfitInputs | None = None
        if self.planner in SEARCH_PLANNERS or self.temperature is not None or (
                view.scenario is not None and "temperature" in view.scenario.kinds()):
            self._inputs = self._resolve_inputs(view, self._day + DAY)

    def _resolve_inputs(self, view: SystemView, until: int) -> ProfitInputs:
        """Table, prices and temperature (a season profile covering ``until``)."""
        return resolve_profit_inputs(
            self.name, cooling=self.cooling, prices=self.prices,
            temperature=self.temperature, scenario=view.scenario, days=until // DAY + 2,
            seed=self.seed, max_it_power=self._no_scaling)

    def _no_scaling(self) -> float:
        raise ConfigError(f"{self.name}: cooling '{self.cooling}': ':scaled' needs every "
                          "job's power in advance, which the pipeline does not read; give a "
                          "table that covers the machine", field="cooling")

    def _profit_model(self, view: SystemView, day: int) -> ProfitModel | None:
        """The profit model of ``[day, day + 24 h)``, or ``None`` without inputs."""
        if self._inputs is None:
            return None
        if self.temperature in SEASONS and self._inputs.temp_times[-1] < day + DAY:
            self._inputs = self._resolve_inputs(view, day + DAY)  # same seed: extended
        return self._inputs.model(day, day + DAY)

    def decide(self, view: SystemView, events: Events) -> list[Decision]:
        """Observe ends, run the pipeline when due, then DARDIS with shutdown."""
        now = view.now
        for j in events.left_running:
            s = self._start_at.pop(j, None)
            if s is not None:
                self._obs[j] = now - s
                self._busy_t.append(now)
                self._busy_d.append(-self._cores_of(view, j))
        while now >= self._next_run:
            if self._day > now:
                self._pipeline(view)
            else:  # no decision point between the run time and the day's start
                self._day += DAY
                self._next_run += DAY
                self._skipped += 1
        out = super().decide(view, events)
        for d in out:
            if type(d) is Start:
                self._start_at[d.job] = now
                self._busy_t.append(now)
                self._busy_d.append(self._cores_of(view, d.job))
        if self._next_run != self._pipe_wake:
            self._pipe_wake = self._next_run
            out.append(WakeAt(self._next_run))
        return out

    def _cores_of(self, view: SystemView, j: int) -> float:
        return float(view.req[j][self._cores_k] * self._units[j])

    # ---- the daily pipeline -----------------------------------------------------------

    def _pipeline(self, view: SystemView) -> None:
        now, day = view.now, self._day
        t0 = time.perf_counter()
        jobs = view.jobs
        n = jobs.known
        fc = forecast_next_day(jobs.submit, jobs.walltime, jobs.units, view.req[:n], now,
                               observed=self._obs[:n], duration=self.duration,
                               power=jobs.power, lst=self._latest_starts(view))
        waiting = np.array(sorted(view.queue), dtype=np.int64)
        t1 = time.perf_counter()
        planned, info = self._plan_utilization(view, fc, waiting, day)
        t2 = time.perf_counter()
        observed = self._observed_utilization(now - DAY)
        # the previous day as planned (the extractor reads plans, thesis §7.2); the first
        # run has no plan of its day and reads what this run observed
        previous = observed if self._last_planned is None else self._last_planned
        self._last_planned = planned
        shares = extract_profile(previous, planned, threshold=self.threshold,
                                 offset_perc=self.offset_perc)
        self.add_profile(view, day + 3600 * np.arange(HOURS, dtype=np.int64), shares)
        self._daily.append({
            "day_start": day, "forecast_jobs": len(fc), "waiting_jobs": len(waiting),
            **info, "previous_utilization": float(previous.mean()),
            "observed_utilization": float(observed.mean()),
            "planned_utilization": float(planned.mean()),
            "profile_mean": float(shares.mean()), "profile_min": float(shares.min()),
            "forecast_s": t1 - t0, "plan_s": t2 - t1,
            "total_s": time.perf_counter() - t0})
        self._day += DAY
        self._next_run += DAY

    @staticmethod
    def _latest_starts(view: SystemView) -> IntArray:
        """Known jobs' latest desired starts: the workload's ``lst``, else submission plus
        the queue's expected wait (the planner's rule, ``planning.instance``)."""
        jobs = view.jobs
        return np.where(jobs.lst >= 0, jobs.lst, jobs.submit + jobs.ewt()).astype(np.int64)

    def _observed_utilization(self, start: int) -> FloatArray:
        """Hourly busy-core fraction over ``[start, start + 24 h)`` from this run's starts
        and ends."""
        if not self._busy_t:
            return np.zeros(HOURS)
        t = np.asarray(self._busy_t, dtype=np.int64)
        level = np.cumsum(np.asarray(self._busy_d)) / self._total_cores
        last = np.r_[t[1:] != t[:-1], True]
        return np.clip(hourly(t[last], level[last], start), 0.0, 1.0)

    def _plan_utilization(self, view: SystemView, fc: Forecast, waiting: IntArray,
                          day: int) -> tuple[FloatArray, dict[str, Any]]:
        """Hourly planned utilization of ``day`` and the daily report's planner fields:
        which planner ran, the profit of its plan over the day (``None`` without a
        profit model or job power) and the search's statistics."""
        n = len(fc) + len(waiting)
        if n == 0:
            return np.zeros(HOURS), {"planner": "empty", "plan_profit": None}
        wt = np.asarray(view.jobs.walltime, dtype=np.int64)
        submit = np.maximum(np.concatenate([fc.submit, np.full(len(waiting), day)]), day)
        duration = np.concatenate([fc.duration, wt[waiting]])
        units = np.concatenate([fc.units, np.asarray(self._units)[waiting]]).astype(np.int64)
        req = np.concatenate([fc.req, view.req[waiting]]).astype(np.int64)
        if self.planner == "fifo":
            return self._rule_based_utilization(view, submit, duration, units, req, day)
        from dispatchlab.dispatchers.offline_plan.planner.heuristic import heuristic
        from dispatchlab.dispatchers.offline_plan.planner.instance import PlanInstance
        from dispatchlab.dispatchers.offline_plan.planner.objective import evaluate

        pm = self._profit_model(view, day)
        power = np.concatenate([fc.power, np.asarray(view.jobs.power, np.float64)[waiting]])
        lst = np.concatenate([fc.lst, self._latest_starts(view)[waiting]])
        unknown = ~np.isfinite(power)
        if self.planner in SEARCH_PLANNERS and unknown.any():
            k = int(np.flatnonzero(unknown)[0])
            row = int(fc.rows[k]) if k < len(fc) else int(waiting[k - len(fc)])
            raise ConfigError(
                f"{self.name}: job {int(view.jobs.job_id[row])} has no power figure: "
                f"planner={self.planner} prices each job's power (the workload's 'power' "
                "column)", field="power")
        busy = []
        for j, r in view.running.items():
            if r.requested_end > day:
                usage = np.zeros_like(view.capacity)
                usage[r.nodes] += r.counts[:, None] * view.req[j][None, :]
                busy.append((day, int(r.requested_end), usage))
        inst = PlanInstance(
            rows=np.arange(n, dtype=np.int64), job_ids=np.arange(n, dtype=np.int64),
            submit=submit.astype(np.int64), duration=duration, units=units, req=req,
            power=np.where(unknown, 0.0, power), capacity=np.asarray(view.capacity,
                                                                     dtype=np.int64),
            resources=view.platform.resources, origin=day, step=self.plan_step,
            busy=tuple(busy), lst=lst)
        info: dict[str, Any]
        if self.planner in SEARCH_PLANNERS:
            sched, info = self._search(inst, pm)
        else:
            order = np.lexsort((np.arange(n), submit))  # arrival order
            found = heuristic(inst, order)
            assert found is not None  # nothing pinned: always a schedule
            sched = found
            profit = (evaluate(sched.to_plan(inst), pm)["profit"]
                      if pm is not None and not unknown.any() else None)
            info = {"planner": "heuristic-alg5", "plan_profit": profit}
        util = sched.to_plan(inst).utilization(3600, start=day, end=day + DAY)
        planned = util["utilization"].to_numpy(dtype=np.float64)[:HOURS]
        # the running jobs hold their cores as the plan assumed (to their requested ends):
        # the profile is compared with the whole machine's use, so they count too
        hours = day + 3600 * np.arange(HOURS + 1, dtype=np.int64)
        for _, end, usage in busy:
            held = np.clip(hours[1:], day, end) - np.clip(hours[:-1], day, end)
            planned = planned + held / 3600 * float(usage[:, self._cores_k].sum()) / (
                self._total_cores)
        return np.clip(planned, 0.0, 1.0), info

    def _search(self, inst: PlanInstance, pm: ProfitModel | None
                ) -> tuple[Schedule, dict[str, Any]]:
        """The day's plan by Multi- or Delay-Search within the per-day budget; the
        schedule and the report's fields (the arrival-order plan's profit beside the
        best: Multi-Search's first ordering is Alg. 5's ``est:inc``)."""
        from dispatchlab.dispatchers.offline_plan.planner.searches import Limits, run_search

        assert pm is not None  # resolved at reset for the search planners
        limits = Limits(runs=self.budget, seed=self.seed)
        options = ({"delay": max(1, 3600 // self.plan_step)} if self.planner == "delay"
                   else {})
        result = run_search(self.planner, inst, pm, limits, **options)
        st = result.stats
        multi = st.get("multi", st)  # Delay-Search nests its Multi-Search's statistics
        per_order = multi["per_ordering"]
        search = {"ordering": st["ordering"], "solutions": st["solutions"],
                  "improvements": st["improvements"], "time_s": st["time_s"],
                  "alg5_profit": per_order["est:inc"],
                  "multi_profit": max(per_order.values()),
                  "orderings_run": multi["solutions"]}
        if self.planner == "delay":
            search.update(iterations=st["iterations"], jobs_delayed=st["jobs_delayed"])
        label = {"multi": "multi-search", "delay": "delay-search"}[self.planner]
        return result.schedule, {"planner": label, "plan_profit": result.profit,
                                 "plan_search": search}

    def _rule_based_utilization(self, view: SystemView, submit: IntArray, duration: IntArray,
                                units: IntArray, req: IntArray, day: int
                                ) -> tuple[FloatArray, dict[str, Any]]:
        """FIFO simulation of the forecast on the empty machine (``planner="fifo"``)."""
        from dispatchlab.dispatchers.rule_based.presets import PolicySpec
        from dispatchlab.engine.compiled.select import run_loop
        from dispatchlab.engine.simulator import Simulator
        from dispatchlab.workload.workload import Workload

        plat = view.platform
        wl = Workload.from_columns(
            submit=submit, walltime=np.maximum(duration, 1), runtime=np.maximum(duration, 1),
            units=units, req={r: req[:, k] for k, r in enumerate(plat.resources)})
        rec, _ = run_loop(Simulator(wl, plat, PolicySpec().build("fifo"), seed=0))
        cores = (req[:, self._cores_k] * units).astype(np.float64)
        t = np.concatenate([rec.start_time, rec.end_time])
        d = np.concatenate([cores, -cores])
        order = np.argsort(t, kind="stable")
        level = np.cumsum(d[order]) / self._total_cores
        return (np.clip(hourly(t[order], level, day), 0.0, 1.0),
                {"planner": "rule-based-fifo", "plan_profit": None})

    def run_stats(self) -> dict[str, Any]:
        """DARDIS's statistics plus one row per pipeline run."""
        total = sum(d["total_s"] for d in self._daily)
        return {**super().run_stats(), "pipeline_days": self._daily,
                "pipeline_total_s": total, "pipeline_days_skipped": self._skipped}
