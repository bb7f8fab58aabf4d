"""Malleable job sets of Mejri et al. (2020) §5.2: Google-like arrivals and masses.

Each set holds ``jobs`` jobs for a cluster of ``servers`` servers. Gaps between arrivals are
Pareto (Lomax, shape 4) with mean ``dynamism`` s; masses (run time on one server) are
log-normal with mean ``mass`` and mean/median ratio ``disparity`` (Da Costa et al. 2016, the
paper's [20]); the speed-up exponent ``α ~ U(0.5, 1)``, the data ``D ~ U(data_min,
data_max)``; the fewest servers ``ceil(α/3 · (servers − 1))`` and the most
``U{min, …, servers − 1}`` (the rule of the authors' code — the paper only says "uniform").
Parameters: Table 3 (defaults), Table 10 (resilience: dynamism 300, mass 1900, disparity
4.5, data up to 800), Table 13 (scale-up: 100 servers, 500 jobs, dynamism 50).

Two seedings: ``independent`` (default) draws set ``index`` from its own stream of
``seed``, so sets are independent samples; ``code`` reproduces the authors' generator
exactly (set ``index`` seeds job ``k`` with ``seed + index + k`` in Python's ``random`` and
NumPy's legacy generator), so consecutive sets share 49 of their 50 jobs, shifted by one.

:meth:`JobSet.to_workload` rounds a set to the engine's whole seconds: submissions up,
``units`` = the fewest servers, ``runtime`` = the time on them rounded up, requested time =
run time (the paper's scheduler knows the mass), data as drawn; the exact masses go to
``meta["mass"]`` — the stretch divides by them: the mean stretch is dominated by the few
jobs of a few seconds, whose masses whole seconds would inflate several times.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.errors import WorkloadError
from dispatchlab.keyvalue import parse_float, parse_int
from dispatchlab.workload.generators.registry import canonical_spec, register_generator
from dispatchlab.workload.workload import Workload

SEEDINGS = ("independent", "code")


@dataclass(frozen=True)
class JobSetParams:
    """Generator parameters (Table 3 defaults)."""

    jobs: int = 50
    servers: int = 10
    dynamism: float = 500.0
    mass: float = 1700.0
    disparity: float = 3.8
    data_min: float = 10.0
    data_max: float = 500.0

    def __post_init__(self) -> None:
        checks = [("jobs", self.jobs >= 1), ("servers", self.servers >= 2),
                  ("dynamism", self.dynamism > 0), ("mass", self.mass > 0),
                  ("disparity", self.disparity >= 1),
                  ("data_max", 0 <= self.data_min <= self.data_max)]
        for name, ok in checks:
            if not ok:
                raise WorkloadError(f"bad value {getattr(self, name)!r}", field=name)


#: Table 10 (resilience test) and Table 13 (scale-up test).
RESILIENCE = JobSetParams(dynamism=300.0, mass=1900.0, disparity=4.5, data_max=800.0)
SCALE_UP = JobSetParams(jobs=500, servers=100, dynamism=50.0)


@dataclass(frozen=True)
class JobSet:
    """One set of malleable jobs in continuous time (the generator's own values)."""

    submit: FloatArray
    mass: FloatArray
    alpha: FloatArray
    data: FloatArray
    min_servers: IntArray
    max_servers: IntArray
    servers: int
    label: str = ""
    #: ``code`` seeding: the state of Python's ``random`` after generation (the authors'
    #: scheduler goes on drawing from it).
    code_random_state: Any = None

    def __len__(self) -> int:
        return len(self.submit)

    def to_workload(self) -> Workload:
        """The set in the engine's whole seconds (see the module docstring)."""
        units = self.min_servers
        runtime = np.maximum(1, np.ceil(self.mass / units.astype(np.float64) ** self.alpha
                                        - 1e-9)).astype(np.int64)
        n = len(self)
        return Workload.from_columns(
            submit=np.ceil(self.submit - 1e-9).astype(np.int64), runtime=runtime,
            walltime=runtime, units=units, req={"cores": np.ones(n, np.int64)},
            min_units=units, max_units=self.max_servers, alpha=self.alpha, data=self.data,
            source=self.label or "<mejri job set>",
            meta={"servers": self.servers, "mass": self.mass.tolist()})


def job_set(params: JobSetParams = JobSetParams(), *, seed: int = 0, index: int = 0,
            seeding: str = "independent") -> JobSet:
    """Set number ``index`` of the family ``seed``."""
    label = (f"gen:mejri:index={index},seed={seed},seeding={seeding}")
    if seeding == "independent":
        return _independent(params, seed, index, label)
    if seeding == "code":
        return _code_seeded(params, seed + index, label)
    raise WorkloadError(f"unknown seeding '{seeding}' (known: {', '.join(SEEDINGS)})",
                        field="seeding")


def job_sets(count: int, params: JobSetParams = JobSetParams(), *, seed: int = 0,
             seeding: str = "independent", first: int = 0) -> list[JobSet]:
    """Sets ``first … first + count − 1`` of the family ``seed``."""
    return [job_set(params, seed=seed, index=first + i, seeding=seeding) for i in range(count)]


def _lognormal_params(p: JobSetParams) -> tuple[float, float]:
    mu = math.log(p.mass / p.disparity)
    return mu, math.sqrt(2 * (math.log(p.mass) - mu))


def _independent(p: JobSetParams, seed: int, index: int, label: str) -> JobSet:
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index,)))
    n, s = p.jobs, p.servers
    gaps = rng.pareto(4.0, n) * 3.0 * p.dynamism  # Lomax(4): mean 1/3
    mu, sigma = _lognormal_params(p)
    mass = rng.lognormal(mu, sigma, n)
    alpha = rng.uniform(0.5, 1.0, n)
    data = rng.uniform(p.data_min, p.data_max, n)
    lo = np.ceil(alpha / 3 * (s - 1)).astype(np.int64)
    hi = rng.integers(lo, s)
    return JobSet(np.cumsum(gaps), mass, alpha, data, lo, hi.astype(np.int64), s, label)


def _code_seeded(p: JobSetParams, seed: int, label: str) -> JobSet:
    """Job ``k`` exactly as ``Experiments._generate_job`` draws it with seed ``seed + k``."""
    _mu, sigma = _lognormal_params(p)
    scale = p.mass / p.disparity
    cols: dict[str, list[Any]] = {k: [] for k in ("submit", "mass", "alpha", "data", "lo",
                                                  "hi")}
    t = 0.0
    py = random.Random()
    for k in range(p.jobs):
        py.seed(seed + k)
        legacy = np.random.RandomState(seed + k)
        # scipy.stats.pareto.rvs(4, loc=-1): ppf of a uniform, then scale 1 and loc -1
        gap = (pow(1 - legacy.uniform(), -1.0 / 4) * 1.0 + -1.0) * 3 * p.dynamism
        t = t + gap
        # scipy.stats.lognorm.rvs(sigma, scale=...): exp(sigma · N(0, 1)) · scale
        cols["mass"].append(float(np.exp(sigma * legacy.standard_normal()) * scale + 0.0))
        cols["submit"].append(t)
        a = py.uniform(0.5, 1)
        cols["alpha"].append(a)
        cols["data"].append(py.uniform(p.data_min, p.data_max))
        lo = math.ceil((a / 3) * (p.servers - 1))
        cols["lo"].append(lo)
        cols["hi"].append(py.randrange(lo, p.servers))
    return JobSet(np.array(cols["submit"]), np.array(cols["mass"]), np.array(cols["alpha"]),
                  np.array(cols["data"]), np.array(cols["lo"], np.int64),
                  np.array(cols["hi"], np.int64), p.servers, label, py.getstate())


def _generate(jobs: int = 50, servers: int = 10, dynamism: float = 500.0,
              mass: float = 1700.0, disparity: float = 3.8, data_min: float = 10.0,
              data_max: float = 500.0, seed: int = 0, index: int = 0,
              seeding: str = "independent") -> Workload:
    params = JobSetParams(jobs, servers, dynamism, mass, disparity, data_min, data_max)
    wl = job_set(params, seed=seed, index=index, seeding=seeding).to_workload()
    spec = canonical_spec("mejri", {"jobs": jobs, "servers": servers, "dynamism": dynamism,
                                    "mass": mass, "disparity": disparity,
                                    "data_min": data_min, "data_max": data_max, "seed": seed,
                                    "index": index, "seeding": seeding})
    return Workload(**{**{f: getattr(wl, f) for f in wl.__dataclass_fields__},
                       "source": spec})


register_generator(
    "mejri", _generate,
    "malleable job set of Mejri et al. 2020 (Table 3): Pareto arrivals, log-normal masses",
    {"jobs": parse_int, "servers": parse_int, "dynamism": parse_float, "mass": parse_float,
     "disparity": parse_float, "data_min": parse_float, "data_max": parse_float,
     "seed": parse_int, "index": parse_int, "seeding": str})
