"""What a worker process does for one run: load (cached), simulate, return plain tables.

The function takes a :class:`RunConfig` of plain values and returns a :class:`RunOutput` of
DataFrames and dicts, so it runs the same in a local process pool, a Dask LocalCluster or
on a remote Dask worker (which needs dispatchlab installed and the trace at the same path).
"""

from __future__ import annotations

import os
import socket
import time
import traceback
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dispatchlab.errors import WorkloadError
from dispatchlab.experiments.config import RunConfig, WorkloadRef, canonical_json, file_digest
from dispatchlab.metrics.schedule_files import schedule_files
from dispatchlab.platform.platform import Platform
from dispatchlab.workload.workload import Workload

#: How many loaded workloads one worker process keeps (windows of one trace share nothing).
CACHE_SIZE = 4
_CACHE: OrderedDict[str, Workload] = OrderedDict()


@dataclass
class RunOutput:
    """A finished run, ready to be stored by the process that owns the result folder."""

    key: str
    jobs: pd.DataFrame
    timeseries: pd.DataFrame
    alloc: pd.DataFrame
    breakdown: pd.DataFrame
    summary: dict[str, Any]
    sim_config: dict[str, Any]
    worker: dict[str, Any] = field(default_factory=dict)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)  # e.g. ``cooling``
    files: dict[str, bytes] = field(default_factory=dict)  # the schedule in other layouts


def load_cached(ref: WorkloadRef) -> Workload:
    """The workload ``ref`` names, loaded once per process (checked against its digest)."""
    from dispatchlab.workload.load import load_workload

    key = canonical_json(ref.identity())
    wl = _CACHE.get(key)
    if wl is not None:
        _CACHE.move_to_end(key)
        return wl
    if ref.digest is not None and file_digest(ref.path) != ref.digest:
        raise WorkloadError(
            "file differs from the one the experiment was planned with "
            "(edited, or another file at this path on this worker)",
            source=ref.path,
        )
    wl = load_workload(ref.path, **ref.load_kwargs())
    _CACHE[key] = wl
    while len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return wl


def execute_run(cfg: RunConfig) -> RunOutput:
    """Run one configuration and return its tables (nothing is written here)."""
    from dispatchlab.simulation import simulate
    from dispatchlab.stats.job_classes import breakdown

    t0 = time.perf_counter()
    wl = load_cached(cfg.workload)
    ref = cfg.workload
    cool = ref.cooling or {}
    temp = _temperature(cfg)
    settings = ref.run_settings()
    plat = _platform(cfg, wl)
    res = simulate(wl, plat, cfg.dispatcher, seed=cfg.seed,
                   on_infeasible=cfg.on_infeasible, scenario=settings.scenario(ref.scenario),
                   walltime_kill=ref.walltime_kill, power_cap=ref.power_cap,
                   cooling=cool.get("cooling"),
                   prices=cool.get("prices"), temperature=temp,
                   it_power=cool.get("it_power", "auto"),
                   **settings.simulate_kwargs(wl, plat))
    rec = res.recorder
    _add_vc_metrics(cfg, res.summary, rec)
    alloc = _alloc_table(rec) if rec is not None else pd.DataFrame()
    return RunOutput(
        key=cfg.key,
        jobs=res.jobs,
        timeseries=res.timeseries,
        alloc=alloc,
        breakdown=breakdown(res.jobs),
        summary=res.summary,
        sim_config=res.config,
        tables=res.tables,
        worker=_worker_info(time.perf_counter() - t0),
        files=schedule_files(res, cfg.schedule_formats),
    )


@dataclass
class GroupOutput:
    """The runs of one shared simulation: each priced run, and the runs whose pricing
    failed (hash → one-line reason)."""

    outputs: list[RunOutput]
    failures: dict[str, str] = field(default_factory=dict)


def execute_group(cfgs: tuple[RunConfig, ...]) -> GroupOutput:
    """Run configurations that differ only in their pricing inputs (same
    :attr:`RunConfig.simulation_key`): simulate once, then price the schedule for each.

    Each run's summary, cooling table and other tables are those :func:`execute_run` gives
    it alone (``simulate`` prices the finished run the same way). A pricing scenario that
    fails fails only its run. ``worker.seconds`` is the run's share of the simulation plus
    its own pricing; ``worker.shared_simulation`` records the simulation's time and runs.
    """
    if len(cfgs) == 1:
        return GroupOutput([execute_run(cfgs[0])])
    from dispatchlab.energy.profit import cooling_setup, run_profit
    from dispatchlab.engine.scenario_gen import resolve_scenario
    from dispatchlab.simulation import simulate
    from dispatchlab.stats.job_classes import breakdown

    first = cfgs[0]
    if len({c.simulation_key for c in cfgs}) != 1:
        raise ValueError("execute_group: the runs differ in more than their pricing")
    t0 = time.perf_counter()
    ref = first.workload
    settings = ref.run_settings()
    scen = resolve_scenario(settings.scenario(ref.scenario))
    setups: dict[str, Any] = {}
    failures: dict[str, str] = {}
    for cfg in cfgs:  # checked before simulating, as simulate() checks its one setup
        cool = cfg.workload.cooling
        try:
            if cool is None:
                raise ValueError("execute_group: a run without pricing inputs")
            setups[cfg.key] = cooling_setup(cool["cooling"], _temperature(cfg),
                                            cool.get("prices"), cool.get("it_power", "auto"),
                                            scen)
        except Exception as exc:  # that run fails, as it would alone
            failures[cfg.key] = describe_error(exc)
    if not setups:
        return GroupOutput([], failures)
    wl = load_cached(ref)
    plat = _platform(first, wl)
    res = simulate(wl, plat, first.dispatcher, seed=first.seed,
                   on_infeasible=first.on_infeasible, scenario=scen,
                   walltime_kill=ref.walltime_kill, power_cap=ref.power_cap,
                   **settings.simulate_kwargs(wl, plat))
    rec = res.recorder
    if rec is None:  # pragma: no cover - simulate() always keeps its record
        raise ValueError("execute_group: the simulation kept no record to price")
    jobs, series = res.jobs, res.timeseries
    files = schedule_files(res, first.schedule_formats)
    alloc = _alloc_table(rec)
    groups = breakdown(jobs)
    sim_s = time.perf_counter() - t0
    outputs = []
    for cfg in cfgs:
        if cfg.key not in setups:
            continue
        t1 = time.perf_counter()
        summary = dict(res.summary)
        loop = summary.pop("loop")  # the key order simulate() gives a priced run
        prof = run_profit(rec, setups[cfg.key])
        summary["profit"] = prof.summary
        summary["loop"] = loop
        _add_vc_metrics(cfg, summary, rec)
        info = _worker_info(sim_s / len(cfgs) + time.perf_counter() - t1)
        info["shared_simulation"] = {"runs": len(cfgs), "seconds": sim_s}
        outputs.append(RunOutput(key=cfg.key, jobs=jobs, timeseries=series, alloc=alloc,
                                 breakdown=groups, summary=summary, sim_config=res.config,
                                 tables={**res.tables, "cooling": prof.series}, worker=info,
                                 files=files))
    return GroupOutput(outputs, failures)


def _platform(cfg: RunConfig, wl: Workload) -> Platform:
    from dispatchlab.platform.resolve import resolve_platform
    from dispatchlab.workload.platform_for import platform_for

    return platform_for(wl)[0] if cfg.platform == "auto" else resolve_platform(cfg.platform)


def _temperature(cfg: RunConfig) -> str | None:
    """The pricing scenario's temperature source, ``{seed}`` replaced by the run's seed."""
    temp = (cfg.workload.cooling or {}).get("temperature")
    return None if temp is None else temp.replace("{seed}", str(cfg.seed))


def _add_vc_metrics(cfg: RunConfig, summary: dict[str, Any], rec: Any) -> None:
    window = cfg.workload.metrics_window
    if window is not None and rec is not None:
        from dispatchlab.metrics.variable_capacity import vc_metrics

        summary.update(vc_metrics(rec, window[1], window[0]))


def _worker_info(seconds: float) -> dict[str, Any]:
    from dispatchlab.provenance import versions

    return {"host": socket.gethostname(), "pid": os.getpid(), "seconds": seconds,
            "versions": versions()}


def describe_error(exc: BaseException) -> str:
    """One line saying why a run failed: the message of a dispatchlab error, else the
    exception's type, message and where it was raised."""
    text = str(exc).strip() or type(exc).__name__
    if not isinstance(exc, Exception) or type(exc).__module__.startswith("dispatchlab"):
        return text.splitlines()[0]
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" (at {tb[-1].filename}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {text.splitlines()[0]}{where}"


def _alloc_table(rec: Any) -> pd.DataFrame:
    """Exact placement, one row per (job, node): units and cores used there."""
    jobs: list[int] = []
    nodes: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    for j, (n, c) in enumerate(zip(rec.alloc_nodes, rec.alloc_counts, strict=True)):
        if n is None or c is None:
            continue
        jobs.append(j)
        nodes.append(n)
        counts.append(c)
    if not jobs:
        return pd.DataFrame({"job": [], "node": [], "units": [], "cores": [], "node_cores": []})
    lengths = np.array([len(n) for n in nodes])
    job_col = np.repeat(np.array(jobs, dtype=np.int64), lengths)
    node_col = np.concatenate(nodes).astype(np.int64)
    unit_col = np.concatenate(counts).astype(np.int64)
    core_idx = rec.platform.resources.index("cores")
    wl = rec.workload
    req_cores = (
        wl.req[:, wl.resources.index("cores")]
        if "cores" in wl.resources
        else np.ones(wl.n_jobs, dtype=np.int64)
    )
    return pd.DataFrame(
        {
            "job": job_col,
            "node": node_col,
            "units": unit_col,
            "cores": unit_col * req_cores[job_col],
            "node_cores": rec.platform.capacity[node_col, core_idx],
        }
    )
