"""Particle swarm optimisation of the greedy scheduler's parameters (Mejri et al. Alg. 2).

Vectorised over the swarm: positions ``x``, velocities ``v``, personal bests ``p`` are
particles × parameters arrays. One step::

    v ← χ (v + φ1 (p − x) + φ2 (g − x)),   x ← x + v,   reflect x at the bounds

with ``φ1, φ2 ~ U(0, 2)`` drawn per particle per step, ``χ = 0.1``, reflection
``x = hi − (x − hi)`` above, ``x = lo + (lo − x)`` below (then clipped, for a step longer than
the box). The cost of a position at epoch ``k`` is its mean cost over the ``sets`` job sets
of that epoch (the same for every particle, fresh each epoch). ``rule="paper"``: ``g`` is
the best position ever evaluated (Alg. 2); ``rule="code"``: the best of the current epoch
(the authors' ``Swarm._run_epoch``). Velocities start at 0.

:class:`Swarm` keeps its whole state (positions, bests, random generator, history) in one
JSON file written after every epoch: a run resumed from it continues exactly as an
uninterrupted one. Evaluations run on any engine of :mod:`dispatchlab.experiments.backends`
(local process pool or Dask), one task per particle per epoch; results do not depend on
the engine or the order tasks finish.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from dispatchlab.arrays import FloatArray
from dispatchlab.dispatchers.malleable.bounds import Rule, bounds_for
from dispatchlab.dispatchers.malleable.config import (
    PAPER,
    SEMANTICS,
    GreedyConfig,
    Semantics,
)
from dispatchlab.errors import ConfigError
from dispatchlab.workload.generators.mejri import JobSetParams, job_set

CHI = 0.1
PHI_MAX = 2.0


def reflect(x: FloatArray, lo: FloatArray, hi: FloatArray) -> FloatArray:
    """Reflect coordinates that left ``[lo, hi]`` back inside (then clip)."""
    x = np.where(x > hi, hi - (x - hi), x)
    x = np.where(x < lo, lo + (lo - x), x)
    return np.clip(x, lo, hi)


def pso_step(x: FloatArray, v: FloatArray, pbest: FloatArray, gbest: FloatArray,
             phi1: FloatArray, phi2: FloatArray, lo: FloatArray, hi: FloatArray,
             chi: float = CHI) -> tuple[FloatArray, FloatArray]:
    """One velocity and position update of every particle (``phi1``/``phi2``: one column,
    a factor per particle)."""
    v_new = chi * (v + phi1 * (pbest - x) + phi2 * (gbest - x))
    return reflect(x + v_new, lo, hi), v_new


# ---- evaluation (runs in worker processes) ---------------------------------------------------

@dataclass(frozen=True)
class EvalTask:
    """Mean cost of one position over the job sets ``first … first + sets − 1``."""

    particle: int
    epoch: int
    config: GreedyConfig
    sets: int
    first: int
    seed: int
    params: JobSetParams
    evaluator: str = "kernel"


def evaluate(task: EvalTask) -> tuple[int, float, list[float], float]:
    """``(particle, mean cost, cost per set, CPU seconds spent)``."""
    c0 = time.process_time()
    costs = [set_cost(task.config, task.params, task.seed, task.first + i, task.evaluator)
             for i in range(task.sets)]
    return task.particle, math.fsum(costs) / len(costs), costs, time.process_time() - c0


def set_cost(cfg: GreedyConfig, params: JobSetParams, seed: int, index: int,
             evaluator: str = "kernel") -> float:
    """Cost of ``cfg`` on job set ``index`` of family ``seed`` (random draws seeded by
    ``index``: the same for every configuration)."""
    if evaluator == "kernel":
        from dispatchlab.dispatchers.malleable.job_set_sim import run_job_set

        return run_job_set(_job_set_jobs(params, seed, index), cfg, seed=index).cost
    if evaluator == "engine":
        from dispatchlab.dispatchers.malleable.cost import malleable_platform, run_metrics
        from dispatchlab.dispatchers.malleable.greedy import MalleableGreedy
        from dispatchlab.simulation import simulate

        wl = _workload(params, seed, index)
        res = simulate(wl, malleable_platform(params.servers, cfg.semantics.power),
                       MalleableGreedy(cfg), seed=index, walltime_kill=False, tables=False,
                       check=False)
        assert res.recorder is not None
        return run_metrics(res.recorder, cfg.semantics.power)["cost"]
    raise ConfigError(f"unknown evaluator '{evaluator}' (known: kernel, engine)",
                      field="evaluator")


@lru_cache(maxsize=128)
def _workload(params: JobSetParams, seed: int, index: int) -> Any:
    return job_set(params, seed=seed, index=index).to_workload()


@lru_cache(maxsize=128)
def _job_set_jobs(params: JobSetParams, seed: int, index: int) -> Any:
    from dispatchlab.dispatchers.malleable.job_set_sim import JobSetJobs

    return JobSetJobs.from_workload(_workload(params, seed, index), params.servers)


# ---- the swarm -----------------------------------------------------------------------------

@dataclass
class SwarmSpec:
    """What a training is: condition, swarm and epoch sizes, job sets, seeds, rules."""

    condition: int
    particles: int = 30
    epochs: int = 100
    sets: int = 50
    seed: int = 0
    jobs_seed: int = 1000
    params: JobSetParams = field(default_factory=JobSetParams)
    semantics: str = "paper"
    rule: Rule = "paper"
    bounds: Rule = "paper"
    data_max: float = 500.0
    evaluator: str = "kernel"

    def to_json(self) -> dict[str, Any]:
        """JSON-ready."""
        out = dict(vars(self))
        out["params"] = dict(vars(self.params))
        return out

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> SwarmSpec:
        """Inverse of :meth:`to_json`."""
        return cls(**{**doc, "params": JobSetParams(**doc["params"])})


@dataclass
class SwarmState:
    """Everything needed to continue a training where it stopped."""

    epoch: int  # epochs evaluated so far
    x: FloatArray
    v: FloatArray
    pbest: FloatArray
    pbest_cost: FloatArray
    gbest: FloatArray
    gbest_cost: float
    rng_state: dict[str, Any]
    history: list[list[float]]  # per evaluated epoch, the cost of every particle


class Swarm:
    """A seeded, resumable PSO training (see the module docstring)."""

    def __init__(self, spec: SwarmSpec, state_file: str | Path | None = None):
        if spec.particles < 2 or spec.epochs < 1 or spec.sets < 1:
            raise ConfigError("a swarm needs ≥ 2 particles, ≥ 1 epoch and ≥ 1 set per epoch",
                              field="particles")
        self.spec = spec
        self.bounds = bounds_for(spec.condition, spec.bounds)
        self.state_file = Path(state_file) if state_file else None
        sem: Semantics = SEMANTICS.get(spec.semantics, PAPER)
        self.base = GreedyConfig(reconfigure=True, power_off=True, condition=spec.condition,
                                 decide_poweroff=True, data_max=spec.data_max,
                                 semantics=sem, t1=900.0, t2=900.0)
        self.state = self._load() or self._initial()
        self.cpu_seconds = 0.0  # evaluation CPU time spent by this object's runs

    def _initial(self) -> SwarmState:
        rng = np.random.default_rng(self.spec.seed)
        b = self.bounds
        x = rng.uniform(b.init_lo, b.init_hi, size=(self.spec.particles, len(b.names)))
        k = len(b.names)
        return SwarmState(0, x, np.zeros_like(x), x.copy(),
                          np.full(self.spec.particles, np.inf), np.zeros(k), math.inf,
                          dict(rng.bit_generator.state), [])

    def config_of(self, position: FloatArray) -> GreedyConfig:
        """The scheduler configuration at ``position``."""
        return self.base.with_params(self.bounds.names, position.tolist())

    def best(self) -> dict[str, float]:
        """The best position found (parameter → value)."""
        return dict(zip(self.bounds.names, self.state.gbest.tolist(), strict=True))

    def run(self, engine: Any = None, *, until: int | None = None,
            progress: Callable[[int, float], None] | None = None) -> SwarmState:
        """Train to ``epochs`` (or to ``until``), saving the state after each epoch.
        ``engine``: an entered engine of :mod:`dispatchlab.experiments.backends`; ``None``
        evaluates in this process."""
        stop = min(self.spec.epochs, until if until is not None else self.spec.epochs)
        while self.state.epoch < stop:
            costs = self._evaluate(engine)
            self._advance(costs)
            if progress is not None:
                progress(self.state.epoch, float(np.mean(costs)))
            self._save()
        return self.state

    def _tasks(self) -> list[EvalTask]:
        s, k = self.spec, self.state.epoch
        return [EvalTask(i, k, self.config_of(self.state.x[i]), s.sets, k * s.sets,
                         s.jobs_seed, s.params, s.evaluator) for i in range(s.particles)]

    def _evaluate(self, engine: Any) -> FloatArray:
        tasks = self._tasks()
        costs = np.full(len(tasks), np.nan)
        if engine is None:
            results = (evaluate(t) for t in tasks)
        else:
            results = (r for _, r in engine.map_unordered(
                evaluate, tasks, key=lambda t: f"pso-{self.spec.condition}-{t.epoch}-"
                f"{t.particle}-{self.spec.seed}"))
        for r in results:
            if isinstance(r, BaseException):
                raise r
            costs[r[0]] = r[1]
            self.cpu_seconds += r[3]
        return costs

    def _advance(self, costs: FloatArray) -> None:
        """Personal and global bests from this epoch's costs, then one step."""
        st, spec, b = self.state, self.spec, self.bounds
        better = costs < st.pbest_cost
        st.pbest[better] = st.x[better]
        st.pbest_cost[better] = costs[better]
        i = int(np.argmin(costs))
        if spec.rule == "code" or costs[i] < st.gbest_cost:
            st.gbest, st.gbest_cost = st.x[i].copy(), float(costs[i])
        st.history.append(costs.tolist())
        st.epoch += 1
        if st.epoch < spec.epochs:
            rng = np.random.default_rng()
            rng.bit_generator.state = st.rng_state
            phi = rng.uniform(0.0, PHI_MAX, size=(spec.particles, 2))
            st.x, st.v = pso_step(st.x, st.v, st.pbest, st.gbest, phi[:, :1], phi[:, 1:],
                                  b.lo, b.hi)
            st.rng_state = dict(rng.bit_generator.state)

    # ---- persistence -----------------------------------------------------------------------

    def _save(self) -> None:
        if self.state_file is None:
            return
        st = self.state
        doc = {"spec": self.spec.to_json(), "names": list(self.bounds.names),
               "epoch": st.epoch, "x": st.x.tolist(), "v": st.v.tolist(),
               "pbest": st.pbest.tolist(), "pbest_cost": st.pbest_cost.tolist(),
               "gbest": st.gbest.tolist(), "gbest_cost": st.gbest_cost,
               "rng_state": st.rng_state, "history": st.history}
        from dispatchlab.atomic_output import atomic_output

        with atomic_output(self.state_file) as tmp:
            tmp.write_text(json.dumps(doc))

    def _load(self) -> SwarmState | None:
        if self.state_file is None or not self.state_file.exists():
            return None
        doc = json.loads(self.state_file.read_text())
        if doc["spec"] != self.spec.to_json():
            raise ConfigError(f"{self.state_file}: a training with another specification is "
                              "stored there", field="state_file")
        arr = np.asarray
        return SwarmState(doc["epoch"], arr(doc["x"]), arr(doc["v"]), arr(doc["pbest"]),
                          arr(doc["pbest_cost"], dtype=np.float64), arr(doc["gbest"]),
                          float(doc["gbest_cost"]), doc["rng_state"], doc["history"])
