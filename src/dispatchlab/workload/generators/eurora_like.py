"""Eurora-like synthetic workloads (Bridi's thesis §4.5.2; SPEC §9).

``n`` jobs arrive over one day: a share (89 %) uniformly in daytime 08:00–18:00, the rest
uniformly in the night 18:00–08:00. Queues debug / parallel / np_longpar get 27 / 72 / 1 %
of the jobs. Each job asks ``RN ~ U{1..nmax_q}`` units (nodes; nmax 2 / 32 / 32) of
``RC ~ U{1..16}`` cores, a wall-time ``W = AVU_q / (RN × RC)`` (AVU 6465 / 147145 / 111372),
GPUs, MICs and memory per unit drawn from the thesis tables 4.11–4.12, and runs exactly
``W`` (20 % of the jobs) or ``U[0.2 W, W)`` (the other 80 %).

Where the thesis is ambiguous, the choices made here:

- *AVU units*: node·core·seconds. Eq. 4.9 multiplies mean nodes, cores per node and
  wall-time; in seconds the values match the historical Eurora batches (debug ≈ 1 node ×
  2 cores × 1800 s, parallel ≈ 1.2 × 7 × 13800 s), in minutes debug jobs would ask 100 h.
- *"A fixed ratio" / "partitioned"*: day/night, queue, GPU, MIC, memory and full-run-time
  groups have exactly the given sizes (largest-remainder rounding) and are assigned to
  random jobs (``proportions="exact"``); ``"random"`` draws each job independently.
- *GPUs and MICs*: a job never asks both (thesis §3.2), so MIC requests go to jobs of
  the queue that ask no GPU, keeping the tables' marginal shares.
- *Node minimum*: the text names ``nmin_q`` but never gives it; it is 1. The second
  ``RN_i`` of the formula is read as ``RC_i`` (cores per node).
- *Wall-time*: rounded to whole seconds (at least 1); not capped at the queue limits
  (30 min / 6 h / 24 h) unless ``cap_walltime``; run times are whole seconds ≥ 1.
- *Expected waits*: the values CINECA declares in §4.5.1 (debug 1 h, parallel 5 h,
  np_longpar 24 h), not the Eurora data set's ``system_queues`` (parallel 6 h).
- *The day*: times count from midnight of ``start`` (``origin_unix``), local time
  ``Europe/Rome``, so ``submit % 86400`` is the time of day.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np

from dispatchlab.arrays import IntArray
from dispatchlab.errors import WorkloadError
from dispatchlab.keyvalue import parse_bool, parse_float, parse_int
from dispatchlab.platform.platform import CORES
from dispatchlab.workload.generators.registry import canonical_spec, register_generator
from dispatchlab.workload.workload import Queue, Workload

Proportions = Literal["exact", "random"]

#: Queues of the generator, in order, with the waits CINECA declares (thesis §4.5.1).
QUEUES = (Queue("debug", 3600), Queue("parallel", 18000), Queue("np_longpar", 86400))
#: Share of jobs per queue (thesis §4.5.2).
QUEUE_SPLIT = (0.27, 0.72, 0.01)
#: Maximum nodes (units) per queue.
NMAX = (2, 32, 32)
#: Average Volume of Utilization per queue, node·core·seconds (thesis Table 4.10).
AVU = (6465, 147145, 111372)
#: Queue wall-time limits (s), used only with ``cap_walltime`` (thesis Table 3.1).
WALLTIME_LIMIT = (1800, 21600, 86400)
#: GPUs per node: values and share of jobs per queue (thesis Table 4.11).
GPU_VALUES = (0, 1, 2)
GPU_SHARES = ((0.96, 0.03, 0.01), (0.31, 0.04, 0.65), (0.19, 0.00, 0.81))
#: MICs per node: values and share of jobs per queue (thesis Table 4.11).
MIC_VALUES = (0, 1, 2)
MIC_SHARES = ((0.99, 0.00, 0.01), (0.99, 0.01, 0.00), (1.00, 0.00, 0.00))
#: Memory per node in GB: values and share of jobs per queue (thesis Table 4.12).
MEM_GB = (1, 4, 8, 14)
MEM_SHARES = ((0.05, 0.77, 0.03, 0.15), (0.22, 0.17, 0.55, 0.06), (0.88, 0.00, 0.04, 0.08))

DAY_START = 8 * 3600
DAY_END = 18 * 3600
DAY = 24 * 3600


def eurora_like(
    jobs: int = 100,
    *,
    seed: int = 0,
    nmax: int | Sequence[int] | Mapping[str, int] | None = None,
    split: Sequence[float] = QUEUE_SPLIT,
    day_share: float = 0.89,
    cores_per_node: int = 16,
    full_runtime_share: float = 0.2,
    cap_walltime: bool = False,
    proportions: Proportions = "exact",
    start: str = "2014-12-01",
    timezone: str = "Europe/Rome",
) -> Workload:
    """``jobs`` Eurora-like jobs over one day; the same arguments give the same workload.

    ``nmax``: one int caps every queue's node maximum (for small platforms), a sequence or
    mapping gives debug / parallel / np_longpar maxima. ``split``: queue shares (scaled to
    sum 1). ``cores_per_node``: upper bound of ``RC``. See the module docstring.
    """
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise WorkloadError(f"must be a non-negative integer, got {seed!r}", field="seed")
    args = _check(
        jobs,
        nmax,
        split,
        day_share,
        cores_per_node,
        full_runtime_share,
        proportions,
        start,
        timezone,
    )
    nmax_q, shares = args["nmax"], args["split"]
    exact = proportions == "exact"
    rng = np.random.default_rng(seed)
    n = jobs

    queue = _categorical(rng, n, np.arange(3), shares, exact)
    is_day = _categorical(rng, n, np.array([1, 0]), (day_share, 1 - day_share), exact) == 1
    day_t = rng.uniform(DAY_START, DAY_END, n)
    night_t = rng.uniform(0, DAY - (DAY_END - DAY_START), n)
    night_t = np.where(night_t < DAY_START, night_t, night_t + (DAY_END - DAY_START))
    submit = np.floor(np.where(is_day, day_t, night_t)).astype(np.int64)

    nodes = np.empty(n, np.int64)
    gpu = np.zeros(n, np.int64)
    mic = np.zeros(n, np.int64)
    mem = np.empty(n, np.int64)
    avu = np.empty(n, np.float64)
    limit = np.empty(n, np.int64)
    mic_short = 0
    for q in range(3):
        idx = np.flatnonzero(queue == q)
        k = len(idx)
        nodes[idx] = rng.integers(1, nmax_q[q] + 1, k)
        avu[idx] = AVU[q]
        limit[idx] = WALLTIME_LIMIT[q]
        gpu[idx] = _categorical(rng, k, np.array(GPU_VALUES), GPU_SHARES[q], exact)
        mic[idx], short = _mic_for(rng, idx, gpu[idx], q, exact)
        mic_short += short
        mem[idx] = _categorical(rng, k, np.array(MEM_GB), MEM_SHARES[q], exact) * 1024
    cores = rng.integers(1, cores_per_node + 1, n)
    walltime = np.maximum(np.rint(avu / (nodes * cores)), 1).astype(np.int64)
    if cap_walltime:
        walltime = np.minimum(walltime, limit)
    full = (
        _categorical(rng, n, np.array([1, 0]), (full_runtime_share, 1 - full_runtime_share), exact)
        == 1
    )
    partial = np.floor(rng.uniform(0.2 * walltime, walltime)).astype(np.int64)
    runtime = np.maximum(np.where(full, walltime, partial), 1)

    order = np.argsort(submit, kind="stable")
    params: dict[str, Any] = {
        "jobs": jobs,
        "seed": seed,
        "nmax": list(nmax_q),
        "split": list(shares),
        "day_share": day_share,
        "cores_per_node": cores_per_node,
        "full_runtime_share": full_runtime_share,
        "cap_walltime": cap_walltime,
        "proportions": proportions,
        "start": start,
        "timezone": timezone,
    }
    meta: dict[str, Any] = {
        "format": "generator",
        "generator": "eurora-like",
        "params": params,
        "mic_requests_dropped": mic_short,
    }
    return Workload.from_columns(
        job_id=np.arange(1, n + 1, dtype=np.int64),
        submit=submit[order],
        walltime=walltime[order],
        runtime=runtime[order],
        units=nodes[order],
        req={CORES: cores[order], "mem": mem[order], "gpu": gpu[order], "mic": mic[order]},
        queue=np.array([q.name for q in QUEUES], dtype=object)[queue[order]].tolist(),
        queues=QUEUES,
        origin_unix=args["origin"],
        timezone=timezone,
        source=canonical_spec("eurora-like", _given(params)),
        meta=meta,
    )


def _check(
    jobs: int,
    nmax: int | Sequence[int] | Mapping[str, int] | None,
    split: Sequence[float],
    day_share: float,
    cores_per_node: int,
    full_runtime_share: float,
    proportions: str,
    start: str,
    timezone: str,
) -> dict[str, Any]:
    """Validate the arguments; a WorkloadError naming the parameter otherwise."""
    if isinstance(jobs, bool) or not isinstance(jobs, int | np.integer) or jobs < 1:
        raise WorkloadError(f"must be a positive integer, got {jobs!r}", field="jobs")
    nmax_q: tuple[int, ...]
    if nmax is None:
        nmax_q = NMAX
    elif isinstance(nmax, int | np.integer):
        if nmax < 1:
            raise WorkloadError(f"must be at least 1, got {nmax}", field="nmax")
        nmax_q = tuple(min(int(nmax), d) for d in NMAX)
    else:
        if isinstance(nmax, Mapping):
            unknown = set(nmax) - {q.name for q in QUEUES}
            if unknown:
                raise WorkloadError(f"unknown queue {sorted(unknown)[0]!r}", field="nmax")
            nmax_q = tuple(int(nmax.get(q.name, d)) for q, d in zip(QUEUES, NMAX, strict=True))
        else:
            nmax_q = tuple(int(v) for v in nmax)
        if len(nmax_q) != 3 or min(nmax_q) < 1:
            raise WorkloadError(
                "needs three positive maxima (debug/parallel/np_longpar)", field="nmax"
            )
    shares = tuple(float(s) for s in split)
    if len(shares) != 3 or min(shares) < 0 or sum(shares) <= 0:
        raise WorkloadError(
            "needs three non-negative shares (debug/parallel/np_longpar)", field="split"
        )
    total = sum(shares)
    shares = tuple(s / total for s in shares)
    for name, value in (("day_share", day_share), ("full_runtime_share", full_runtime_share)):
        if not 0.0 <= float(value) <= 1.0:
            raise WorkloadError(f"must be between 0 and 1, got {value!r}", field=name)
    if isinstance(cores_per_node, bool) or int(cores_per_node) < 1:
        raise WorkloadError(
            f"must be a positive integer, got {cores_per_node!r}", field="cores_per_node"
        )
    if proportions not in ("exact", "random"):
        raise WorkloadError(f"must be exact or random, not {proportions!r}", field="proportions")
    try:
        tz = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise WorkloadError(f"unknown time zone {timezone!r}", field="timezone") from None
    try:
        day = date.fromisoformat(start)
    except (TypeError, ValueError):
        raise WorkloadError(f"expected a date YYYY-MM-DD, got {start!r}", field="start") from None
    origin = int(datetime(day.year, day.month, day.day, tzinfo=tz).timestamp())
    return {"nmax": nmax_q, "split": shares, "origin": origin}


def _given(params: Mapping[str, Any]) -> dict[str, Any]:
    """``jobs``, ``seed`` and every parameter that differs from its default."""
    defaults: dict[str, Any] = {
        "nmax": list(NMAX),
        "split": list(QUEUE_SPLIT),
        "day_share": 0.89,
        "cores_per_node": 16,
        "full_runtime_share": 0.2,
        "cap_walltime": False,
        "proportions": "exact",
        "start": "2014-12-01",
        "timezone": "Europe/Rome",
    }
    out = {"jobs": params["jobs"], "seed": params["seed"]}
    for key, default in defaults.items():
        value = params[key]
        same = np.allclose(value, default) if key == "split" else value == default
        if not same:
            out[key] = value
    return out


def _exact_counts(n: int, shares: Sequence[float]) -> IntArray:
    """``n`` split by ``shares`` into integers (largest remainder, ties to the first)."""
    p = np.asarray(shares, dtype=np.float64)
    p = p / p.sum() if p.sum() > 0 else p
    raw = p * n
    counts = np.floor(raw).astype(np.int64)
    rest = n - int(counts.sum())
    if rest > 0:
        order = np.argsort(-(raw - counts), kind="stable")
        counts[order[:rest]] += 1
    return counts


def _categorical(
    rng: np.random.Generator, n: int, values: IntArray, shares: Sequence[float], exact: bool
) -> IntArray:
    """``n`` values with the given shares: exact group sizes shuffled, or i.i.d. draws."""
    if n == 0:
        return np.zeros(0, np.int64)
    if exact:
        return np.asarray(
            rng.permutation(np.repeat(values, _exact_counts(n, shares))), dtype=np.int64
        )
    p = np.asarray(shares, dtype=np.float64)
    return np.asarray(rng.choice(values, size=n, p=p / p.sum()), dtype=np.int64)


def _mic_for(
    rng: np.random.Generator, idx: IntArray, gpu: IntArray, q: int, exact: bool
) -> tuple[IntArray, int]:
    """MICs per unit for the jobs ``idx`` of queue ``q``, only where no GPU is asked.

    Returns the values and how many MIC requests found no GPU-free job (0 with the
    thesis tables).
    """
    k = len(idx)
    out = np.zeros(k, np.int64)
    free = np.flatnonzero(gpu == 0)
    shares = MIC_SHARES[q]
    if exact:
        counts = _exact_counts(k, shares)[1:]
        want = int(counts.sum())
        take = min(want, len(free))
        values = np.repeat(np.array(MIC_VALUES[1:]), counts)[:take]
        out[rng.permutation(free)[:take]] = rng.permutation(values)
        return out, want - take
    p_free = GPU_SHARES[q][0]
    if p_free <= 0 or not len(free):
        return out, 0
    cond = np.asarray(shares[1:], dtype=np.float64) / p_free
    if cond.sum() > 1.0:
        cond = cond / cond.sum()
    probs = np.concatenate([[max(0.0, 1.0 - float(cond.sum()))], cond])
    out[free] = rng.choice(np.array(MIC_VALUES), size=len(free), p=probs / probs.sum())
    return out, 0


def _parse_nmax(text: str) -> int | tuple[int, ...]:
    """``8`` (cap every queue) or ``2/32/32`` (debug/parallel/np_longpar)."""
    parts = text.split("/")
    if len(parts) == 1:
        return parse_int(parts[0])
    if len(parts) != 3:
        raise ValueError("give one number or three separated by '/' (debug/parallel/np_longpar)")
    return tuple(parse_int(p) for p in parts)


def _parse_split(text: str) -> tuple[float, ...]:
    """``27/72/1`` (percent or fractions, scaled to sum 1)."""
    parts = text.split("/")
    if len(parts) != 3:
        raise ValueError("give three shares separated by '/' (debug/parallel/np_longpar)")
    return tuple(parse_float(p) for p in parts)


def _parse_proportions(text: str) -> str:
    if text not in ("exact", "random"):
        raise ValueError("expected exact or random")
    return text


register_generator(
    "eurora-like",
    eurora_like,
    "Eurora-like day of jobs (thesis §4.5.2): 89 % daytime arrivals, debug/parallel/"
    "np_longpar 27/72/1 %, AVU-based wall-times, GPU/MIC/memory from the Eurora tables",
    {
        "jobs": parse_int,
        "seed": parse_int,
        "nmax": _parse_nmax,
        "split": _parse_split,
        "day_share": parse_float,
        "cores_per_node": parse_int,
        "full_runtime_share": parse_float,
        "cap_walltime": parse_bool,
        "proportions": _parse_proportions,
        "start": str,
        "timezone": str,
    },
)
