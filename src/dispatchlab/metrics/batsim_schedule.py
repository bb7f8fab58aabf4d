"""Write a simulated schedule in Batsim's ``jobs.csv`` layout, which evalys reads.

One row per job with Batsim's columns: ``job_id``, ``workload_name``, ``profile``,
``submission_time``, ``requested_number_of_resources``, ``requested_time``, ``success``,
``final_state``, ``starting_time``, ``execution_time``, ``finish_time``, ``waiting_time``,
``turnaround_time``, ``stretch`` (turnaround ÷ execution), ``allocated_resources`` (an
interval set such as ``0-3 7``), ``consumed_energy`` (J, -1 without a power model) and
``metadata``. Times are seconds from the workload origin.

Batsim resources are numbered machine-wide. ``resource="core"`` numbers every core
(node ``k``'s cores follow node ``k-1``'s; a job holds ``units × cores per unit`` of
them, given concrete core numbers by replaying the run's starts and ends, lowest free
first); ``"node"`` numbers nodes (a job requests and holds the nodes it ran on, however
many units it had there; a job that never ran the nodes its cores fill; exact when jobs
take whole nodes); ``"auto"`` picks ``node`` when every job filled the nodes it ran on, else
``core``. Either way evalys's utilisation (resources in use over time ÷ resources) is
dispatchlab's core utilization. A job that ran in several segments (requeued, resized)
is written with its first start, its final end and its last segment's resources. A job
never started is ``REJECTED`` with times, resources and stretch -1 and no resources.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import IntArray
from dispatchlab.atomic_output import atomic_output
from dispatchlab.engine.recorder import COMPLETED, KILLED
from dispatchlab.errors import ConfigError

if TYPE_CHECKING:
    from dispatchlab.engine.recorder import Recorder
    from dispatchlab.metrics.results import Results

Granularity = Literal["auto", "core", "node"]

COLUMNS = ("job_id", "workload_name", "profile", "submission_time",
           "requested_number_of_resources", "requested_time", "success", "final_state",
           "starting_time", "execution_time", "finish_time", "waiting_time", "turnaround_time",
           "stretch", "allocated_resources", "consumed_energy", "metadata")


def interval_set(ids: npt.ArrayLike) -> str:
    """``[0, 1, 2, 3, 7]`` → ``"0-3 7"`` (sorted, runs joined)."""
    arr = np.unique(np.asarray(ids, dtype=np.int64))
    if not len(arr):
        return ""
    breaks = np.flatnonzero(np.diff(arr) != 1)
    lo = arr[np.r_[0, breaks + 1]]
    hi = arr[np.r_[breaks, len(arr) - 1]]
    return " ".join(str(a) if a == b else f"{a}-{b}" for a, b in zip(lo.tolist(), hi.tolist(),
                                                                     strict=True))


def write_batsim_jobs(results: Results, path: str | Path, *, workload_name: str | None = None,
                      resource: Granularity = "auto") -> Path:
    """Write ``results`` (a run with its record) as a Batsim ``jobs.csv``."""
    import pandas as pd

    rec = results.recorder
    if rec is None:
        raise ConfigError("these results hold no record of the run (load them from a run, "
                          "not from a summary)", field="results")
    if resource not in ("auto", "core", "node"):
        raise ConfigError(f"resource must be auto, core or node, not {resource!r}",
                          field="resource")
    wl = rec.workload
    jobs = results.jobs
    granularity = _granularity(rec) if resource == "auto" else resource
    alloc, requested = (_node_allocations(rec) if granularity == "node"
                        else _core_allocations(rec))
    start = jobs["start"].to_numpy(np.int64)
    end = jobs["end"].to_numpy(np.int64)
    ran = start >= 0
    outcome = rec.job_outcomes()
    killed = ran & (outcome == KILLED)
    success = ran & (outcome == COMPLETED)
    state = np.where(~ran, "REJECTED", np.where(success, "COMPLETED_SUCCESSFULLY", np.where(
        killed, "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED")))
    execution = np.where(ran, end - start, -1)
    turnaround = np.where(ran, end - wl.submit, -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        stretch = np.where(ran, turnaround / execution.astype(np.float64), -1.0)
    energy = (jobs["energy_j"].to_numpy(np.float64) if "energy_j" in jobs.columns
              else np.full(wl.n_jobs, -1.0))
    name = workload_name or Path(wl.source).name.split(".")[0] or "w0"
    table = pd.DataFrame({
        "job_id": wl.job_id, "workload_name": name,
        "profile": [f"delay_{int(r)}" for r in wl.runtime],
        "submission_time": wl.submit, "requested_number_of_resources": requested,
        "requested_time": wl.walltime, "success": success.astype(np.int64),
        "final_state": state, "starting_time": np.where(ran, start, -1),
        "execution_time": execution, "finish_time": np.where(ran, end, -1),
        "waiting_time": np.where(ran, start - wl.submit, -1), "turnaround_time": turnaround,
        "stretch": stretch, "allocated_resources": alloc, "consumed_energy": energy,
        "metadata": "",
    }, columns=list(COLUMNS))
    p = Path(path)
    with atomic_output(p) as tmp:
        table.to_csv(tmp, index=False)
    return p


def _cores_index(rec: Recorder) -> int:
    res = rec.platform.resources
    return res.index("cores")


def _granularity(rec: Recorder) -> str:
    """``node`` when every segment's units filled the nodes they ran on, else ``core``."""
    seg = rec.segments
    if not len(seg):
        return "core"
    c = _cores_index(rec)
    per_unit = rec.req[:, c][np.repeat(seg.job, np.diff(seg.offsets))]
    used = seg.counts.astype(np.int64) * per_unit
    whole = used == rec.platform.capacity[seg.nodes.astype(np.int64), c]
    return "node" if bool(whole.all()) else "core"


def _node_allocations(rec: Recorder) -> tuple[npt.NDArray[np.object_], IntArray]:
    """Each job's nodes (its last segment's) and their count; a job never started
    requests the nodes its cores would fill (the widest node's cores each)."""
    seg = rec.segments
    wl = rec.workload
    n = wl.n_jobs
    alloc = np.full(n, "", dtype=object)
    c = _cores_index(rec)
    widest = max(int(rec.platform.capacity[:, c].max()), 1) if rec.platform.n_nodes else 1
    cores = wl.units.astype(np.int64) * np.maximum(rec.req[:, c].astype(np.int64), 1)
    requested = np.maximum(-(-cores // widest), 1)
    last = rec.last_seg
    for j in np.flatnonzero(last >= 0).tolist():
        k = int(last[j])
        nodes = np.unique(seg.nodes[seg.offsets[k]:seg.offsets[k + 1]])
        alloc[j] = interval_set(nodes)
        requested[j] = len(nodes)
    return alloc, requested


def _core_allocations(rec: Recorder) -> tuple[npt.NDArray[np.object_], IntArray]:
    """Concrete core numbers per job, replaying starts and ends (ends first at a tie)."""
    seg = rec.segments
    plat = rec.platform
    c = _cores_index(rec)
    cap = plat.capacity[:, c].astype(np.int64)
    first_core = np.r_[0, np.cumsum(cap)[:-1]]
    free = [np.ones(int(k), bool) for k in cap]
    per_unit = rec.req[:, c].astype(np.int64)
    held: dict[int, list[tuple[int, IntArray]]] = {}
    order = np.lexsort((np.r_[np.zeros(len(seg)), np.ones(len(seg))],
                        np.r_[seg.t1, seg.t0]))
    n_seg = len(seg)
    cores_of_seg: dict[int, IntArray] = {}
    last = rec.last_seg
    wanted = set(last[last >= 0].tolist())
    for e in order.tolist():
        k = e % n_seg if n_seg else 0
        if e < n_seg:  # an end (ends sort before starts at one instant)
            for node, taken in held.pop(k, []):
                free[node][taken] = True
            continue
        need = per_unit[seg.job[k]]
        parts: list[tuple[int, IntArray]] = []
        for node, count in zip(seg.nodes[seg.offsets[k]:seg.offsets[k + 1]].tolist(),
                               seg.counts[seg.offsets[k]:seg.offsets[k + 1]].tolist(),
                               strict=True):
            take = np.flatnonzero(free[node])[: int(count * need)]
            if len(take) < count * need:
                raise ConfigError(f"job {int(rec.workload.job_id[seg.job[k]])}: node "
                                  f"{plat.node_names[node]} has {len(take)} free cores for "
                                  f"{count * need} (cores over-committed in the record)",
                                  field="allocated_resources")
            free[node][take] = False
            parts.append((node, take))
        if seg.t1[k] > seg.t0[k]:
            held[k] = parts
        else:  # a zero-length segment: its end sorted before its start
            for node, taken in parts:
                free[node][taken] = True
        if k in wanted:
            cores_of_seg[k] = np.concatenate([first_core[nd] + t for nd, t in parts]) \
                if parts else np.empty(0, np.int64)
    n = rec.workload.n_jobs
    alloc = np.full(n, "", dtype=object)
    for j in np.flatnonzero(last >= 0).tolist():
        alloc[j] = interval_set(cores_of_seg.get(int(last[j]), np.empty(0, np.int64)))
    requested = np.asarray(rec.workload.units * np.maximum(per_unit, 1), np.int64)
    return alloc, requested
