"""Workloads of the variable-capacity case study (Robert et al., SPEC §7).

- :func:`read_vc_jobs` reads the authors' job files (github.com/lucasperotin/
  variableResources, ``files/traces/``): one job a line, ``id release length cores
  state`` (``state`` is ``release``, or ``running`` for a job released before the window
  that still runs at its start). Lengths are exact (the model's rigid jobs), so the
  requested time equals the run time.
- ``gen:vc-synthetic:kind=…`` (:func:`synthetic_vc`) makes the slides' synthetic
  families, sized so that the total work is ``load`` × ``machines`` × ``cores`` ×
  ``window`` core-seconds (default: full load of 26 machines of 24 cores, the slides'
  dimensioning): ``jobs`` jobs released every ``window / jobs`` seconds, each on 1, 2, 4
  or 8 cores with probabilities 1/6, 1/3, 1/3, 1/6 (the authors' ``genSin.py``), lengths
  by ``kind`` with mean ``L`` set by the load:

  - ``uniform`` — uniform in ``[1, 2L]``;
  - ``log`` — one of four decades ``[100, 500]``, ``[500, 2500]``, ``[2500, 12500]``,
    ``[12500, 62500]`` with equal probability, uniform inside, scaled to mean ``L``;
  - ``log4`` — the same decades with probabilities 64/85, 16/85, 4/85, 1/85 (the
    authors' fourth family, mostly short jobs);
  - ``three`` — three job types of lengths ``a``, ``3a``, ``9a`` with probabilities
    9/13, 3/13, 1/13 (``a = 13L/27``), each ±5 % uniform noise.

  The authors scale their ``log`` family by a constant that gives about 61 % of the
  nominal load; here every family is scaled to the same load, as the slides state.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dispatchlab.errors import WorkloadError
from dispatchlab.input_files import read_text
from dispatchlab.keyvalue import parse_float, parse_int
from dispatchlab.workload.generators.registry import canonical_spec, register_generator
from dispatchlab.workload.input_file import input_file
from dispatchlab.workload.workload import Workload

KINDS = ("uniform", "log", "log4", "three")
CORES = np.array([1, 2, 4, 8])
CORE_P = np.array([1, 2, 2, 1]) / 6
DECADES = np.array([[100, 500], [500, 2500], [2500, 12500], [12500, 62500]], dtype=float)


def read_vc_jobs(path: str | Path, start: int = 0, window: int | None = None,
                 checkpoint: int = 0) -> Workload:
    """The jobs of an authors' job file released in ``[start, start + window)``, times
    rebased to ``start``; jobs released before ``start`` and still running then enter at
    ``start`` with what is left of their length (their earlier part is outside the
    window). ``checkpoint``: interval (s of work) between checkpoints of every job (0:
    not checkpointable)."""
    p = input_file(path)
    end = None if window is None else start + window
    ids: list[int] = []
    sub: list[int] = []
    run: list[int] = []
    cores: list[int] = []
    carried = 0
    text_lines = read_text(p, lambda why: WorkloadError(why, source=str(p)),
                           limit=None).splitlines()
    for n, line in enumerate(text_lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        f = text.split()
        if len(f) < 4:
            raise WorkloadError(f"line {n}: expected 'id release length cores [state]',"
                                f" got '{text}'", source=str(p))
        try:
            r, w, c = int(f[1]), int(f[2]), int(f[3])
        except ValueError:
            raise WorkloadError(f"line {n}: release, length and cores must be whole "
                                f"numbers, got '{text}'", source=str(p)) from None
        if w <= 0 or c <= 0 or r < 0:
            field = "length" if w <= 0 else ("cores" if c <= 0 else "release")
            raise WorkloadError(f"line {n}: job {f[0]}: {field} must be "
                                f"{'≥ 0' if field == 'release' else '> 0'}",
                                source=str(p), field=field)
        if end is not None and r >= end:
            continue
        if r < start:
            if r + w <= start:
                continue
            w, r = r + w - start, start
            carried += 1
        ids.append(int(f[0]) if f[0].isdigit() else len(ids))
        sub.append(r - start)
        run.append(w)
        cores.append(c)
    if not sub:
        raise WorkloadError(f"no job in the window [{start}, {end})", source=str(p))
    return _workload(np.array(sub), np.array(run), np.array(cores), checkpoint, str(p),
                     {"format": "variable-capacity job file", "start": start,
                      "window": window, "carried_over": carried, "ids": "from file"},
                     job_id=np.array(ids))


def _workload(submit: np.ndarray, runtime: np.ndarray, cores: np.ndarray, checkpoint: int,
              source: str, meta: dict[str, object], job_id: np.ndarray | None = None
              ) -> Workload:
    if checkpoint < 0:
        raise WorkloadError(f"checkpoint interval must be ≥ 0, got {checkpoint}",
                            source=source, field="checkpoint")
    n = len(submit)
    if job_id is not None and len(np.unique(job_id)) != n:
        job_id = None  # ids repeat in the file: number the jobs instead
    return Workload.from_columns(
        submit=submit.astype(np.int64), walltime=runtime.astype(np.int64),
        runtime=runtime.astype(np.int64), units=np.ones(n, dtype=np.int64),
        req={"cores": cores.astype(np.int64)}, job_id=job_id,
        checkpoint=np.full(n, checkpoint, dtype=np.int64), source=source, meta=meta)


def synthetic_lengths(kind: str, n: int, mean: float, rng: np.random.Generator
                      ) -> np.ndarray:
    """``n`` job lengths (whole seconds ≥ 1) of family ``kind`` with mean ``mean``."""
    if kind == "uniform":
        w = rng.integers(1, max(2, round(2 * mean)) + 1, size=n).astype(float)
    elif kind in ("log", "log4"):
        p = np.array([1, 1, 1, 1]) / 4 if kind == "log" else np.array([64, 16, 4, 1]) / 85
        d = rng.choice(4, size=n, p=p)
        raw = rng.uniform(DECADES[d, 0], DECADES[d, 1])
        w = raw * mean / float(p @ DECADES.mean(axis=1))
    elif kind == "three":
        a = 13 * mean / 27
        t = rng.choice(3, size=n, p=np.array([9, 3, 1]) / 13)
        w = a * np.array([1, 3, 9])[t] * (1 + rng.uniform(-0.05, 0.05, size=n))
    else:
        raise WorkloadError(f"unknown kind '{kind}' (known: {', '.join(KINDS)})",
                            field="kind")
    return np.maximum(1, np.rint(w)).astype(np.int64)


def synthetic_vc(kind: str = "log", jobs: int = 20000, window: int = 604800,
                 machines: int = 26, cores: int = 24, load: float = 1.0, seed: int = 0,
                 checkpoint: int = 0) -> Workload:
    """A synthetic family of the slides (see the module docstring)."""
    if jobs < 1 or window < jobs or machines < 1 or cores < 8 or load <= 0:
        raise WorkloadError("need jobs ≥ 1, window ≥ jobs, machines ≥ 1, cores ≥ 8 "
                            f"(jobs take up to 8) and load > 0; got jobs={jobs}, window="
                            f"{window}, machines={machines}, cores={cores}, load={load}",
                            field="jobs")
    rng = np.random.default_rng(seed)
    step = window // jobs
    submit = np.arange(jobs, dtype=np.int64) * step
    c = rng.choice(CORES, size=jobs, p=CORE_P)
    mean = load * machines * cores * window / (jobs * float(CORES @ CORE_P))
    w = synthetic_lengths(kind, jobs, mean, rng)
    spec = canonical_spec("vc-synthetic", {"kind": kind, "jobs": jobs, "window": window,
                                           "machines": machines, "cores": cores,
                                           "load": load, "seed": seed,
                                           "checkpoint": checkpoint})
    return _workload(submit, w, c, checkpoint, spec,
                     {"generator": "vc-synthetic", "kind": kind, "seed": seed,
                      "mean_length": mean, "work": int((w * c).sum()),
                      "capacity": machines * cores * window, "source": spec})


register_generator(
    "vc-synthetic", synthetic_vc,
    "variable-capacity case study (Robert et al.): uniform / log / log4 / three-type "
    "lengths, 1-8 cores, sized to a load of machines × cores",
    {"kind": str, "jobs": parse_int, "window": parse_int, "machines": parse_int,
     "cores": parse_int, "load": parse_float, "seed": parse_int, "checkpoint": parse_int})
