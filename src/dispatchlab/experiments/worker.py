"""What a worker process does for one run: load (cached), simulate, return plain tables.

The function takes a :class:`RunConfig` of plain values and returns a :class:`RunOutput` of
DataFrames and dicts, so it runs the same in a local process pool, a Dask LocalCluster or
on a remote Dask worker (which needs dispatchlab installed and the trace at the same path).
"""

from __future__ import annotations

import os
import socket
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dispatchlab.errors import WorkloadError
from dispatchlab.experiments.config import RunConfig, WorkloadRef, canonical_json, file_digest
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
    from dispatchlab.platform.from_workload import platform_for
    from dispatchlab.provenance import versions
    from dispatchlab.simulation import simulate
    from dispatchlab.stats.breakdown import breakdown

    t0 = time.perf_counter()
    wl = load_cached(cfg.workload)
    plat = platform_for(wl)[0] if cfg.platform == "auto" else cfg.platform
    ref = cfg.workload
    cool = ref.cooling or {}
    temp = cool.get("temperature")
    res = simulate(wl, plat, cfg.dispatcher, seed=cfg.seed, on_infeasible=cfg.on_infeasible,
                   scenario=ref.scenario, walltime_kill=ref.walltime_kill,
                   cooling=cool.get("cooling"), prices=cool.get("prices"),
                   temperature=None if temp is None else temp.replace("{seed}", str(cfg.seed)),
                   it_power=cool.get("it_power", "auto"))
    rec = res.recorder
    if ref.metrics_window is not None and rec is not None:
        from dispatchlab.metrics.variable_capacity import vc_metrics

        res.summary.update(vc_metrics(rec, ref.metrics_window[1], ref.metrics_window[0]))
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
        worker={
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "seconds": time.perf_counter() - t0,
            "versions": versions(),
        },
    )


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
