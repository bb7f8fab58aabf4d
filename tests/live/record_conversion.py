"""The record-based conversion the live mode used before the columnar one (a record per
job, then the engine's arrays from the records), kept here as the reference the columnar
conversion is compared with: same parsing rules, same twin (the number and state
readers, unchanged, are shared)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dispatchlab.engine.warm_start import Placed
from dispatchlab.errors import DispatchlabError
from dispatchlab.live.slurm_records import USER_HOLD, SlurmJob, SlurmNode, node_states, number
from dispatchlab.live.slurm_state import expand_hostlist
from dispatchlab.live.twin import UNLIMITED_S, Twin
from dispatchlab.platform.platform import CORES, Platform
from dispatchlab.workload.workload import Queue, Workload


@dataclass(frozen=True)
class RecordSnapshot:
    """One poll as records."""

    now: int
    nodes: tuple[SlurmNode, ...]
    jobs: tuple[SlurmJob, ...]


def record_snapshot(now: int, squeue: Mapping[str, Any], sinfo: Mapping[str, Any]
                    ) -> RecordSnapshot:
    return RecordSnapshot(now, tuple(parse_sinfo(sinfo)), tuple(parse_squeue(squeue)))


def parse_sinfo(doc: Mapping[str, Any]) -> list[SlurmNode]:
    """The nodes of ``sinfo --json``."""
    nodes = doc.get("nodes")
    if not isinstance(nodes, list):
        raise AssertionError("sinfo --json: no 'nodes' list")
    out = []
    for k, n in enumerate(nodes):
        try:
            states = node_states(n.get("state")) | node_states(n.get("state_flags"))
            out.append(SlurmNode(str(n["name"]), number(n.get("cpus"), "cpus"), states,
                                 tuple(n.get("partitions") or ())))
        except KeyError as err:
            raise AssertionError(f"sinfo --json: node {k} has no field {err}") from None
    return out


def _alloc(res: Mapping[str, Any]) -> tuple[tuple[str, int], ...]:
    """CPUs per node of a running job, from its ``job_resources.allocated_nodes``."""
    out = []
    for entry in res.get("allocated_nodes") or ():
        name = entry.get("nodename")
        if "sockets" in entry:  # 22.05: sockets → cores → state
            cpus = sum(map(len, [s["cores"] for s in entry["sockets"].values()]))
        else:  # 23.02+: a cpus count per node
            cpus = number(entry.get("cpus", 0), "allocated_nodes.cpus")
        out.append((str(name), int(cpus)))
    return tuple(out)


def parse_squeue(doc: Mapping[str, Any]) -> list[SlurmJob]:
    """The jobs of ``squeue --json``."""
    jobs = doc.get("jobs")
    if not isinstance(jobs, list):
        raise AssertionError("squeue --json: no 'jobs' list")
    out = []
    make = SlurmJob
    for j in jobs:  # hot: tens of thousands of jobs per poll on a large machine
        try:
            get = j.get
            state = j["job_state"]
            if type(state) is not str:
                state = str(state[0]) if isinstance(state, list) else str(state)
            jid, limit, cpus = j["job_id"], get("time_limit"), get("cpus")
            sub, start, end, prio = (get("submit_time"), get("start_time"), get("end_time"),
                                     get("priority"))
            if not (type(jid) is type(limit) is type(cpus) is type(sub) is type(start)
                    is type(end) is type(prio) is int):
                jid, limit, cpus = (number(jid, "job_id"), number(limit, "time_limit"),
                                    number(cpus, "cpus"))
                sub, start, end = (number(sub, "submit_time"), number(start, "start_time"),
                                   number(end, "end_time"))
                prio = number(prio, "priority")
            res = get("job_resources")
            out.append(make(
                jid, state, get("partition") or "", get("user_name") or "", sub,
                -1 if limit < 0 or limit >= 0xFFFFFFFE else limit * 60, cpus, start, end,
                _alloc(res) if res else (), get("state_reason") or "", prio,
                get("required_nodes") or ""))
        except KeyError as err:
            raise AssertionError(f"squeue --json: a job has no field {err}") from None
    return out


def partition_nodes(nodes: Iterable[SlurmNode], partition: str) -> list[SlurmNode]:
    """The partition's nodes in Slurm's natural order (``n2`` before ``n10``)."""
    mine = [n for n in nodes if partition in n.partitions]
    split = _DIGITS.split
    return sorted(mine, key=lambda n: [int(t) if t.isdigit() else t for t in split(n.name)])


_DIGITS = re.compile(r"(\d+)")


def record_twin(snap: RecordSnapshot, partition: str, *, every_pending: bool = False
                ) -> Twin:
    """The twin of ``snap`` for ``partition`` (each job's run time = its requested time:
    what a real scheduler knows). ``every_pending``: every pending job of the partition
    waits in the twin (shadow predictions of Slurm's own scheduling), not only the
    user-held ones."""
    nodes = partition_nodes(snap.nodes, partition)
    if not nodes:
        raise DispatchlabError(f"Slurm reports no node in partition '{partition}'")
    pos = {n.name: k for k, n in enumerate(nodes)}
    cap = np.array([[n.cpus] for n in nodes], dtype=np.int64)
    platform = Platform(resources=(CORES,), capacity=cap,
                        node_names=tuple(n.name for n in nodes), name=f"slurm:{partition}")
    free = cap[:, 0].copy()
    placed_rows: list[tuple[SlurmJob, int, list[tuple[int, int]]]] = []
    released: list[SlurmJob] = []
    skipped: dict[int, str] = {}
    now = snap.now
    jobs = snap.jobs  # hot: comprehensions over every job Slurm reported
    pending = [j for j in jobs if j.state == "PENDING" and j.partition == partition]
    waiting_jobs = [j for j in pending
                    if j.reason == USER_HOLD or (every_pending and not j.required_nodes)]
    if len(waiting_jobs) < len(pending):
        chosen = {j.job_id for j in waiting_jobs}
        for j in pending:
            if j.job_id in chosen:
                continue
            if j.required_nodes:
                released.append(j)  # released by the adapter: placed below
            else:
                skipped[j.job_id] = f"pending, not held ({j.reason}): Slurm's own scheduler's"
    for j in [j for j in jobs if j.alloc and j.running]:
        here = [(pos[name], c) for name, c in j.alloc if name in pos and c > 0]
        if here:
            for k, c in here:
                free[k] -= c
            placed_rows.append((j, sum(c for _, c in here), sorted(here)))
    # released jobs Slurm has not started yet: on their pinned nodes, filled in order
    for j in released:
        left, here = j.cpus, []
        for name in expand_hostlist(j.required_nodes):
            if name in pos and left > 0 and free[pos[name]] > 0:
                c = int(min(left, free[pos[name]]))
                here.append((pos[name], c))
                free[pos[name]] -= c
                left -= c
        if left:
            skipped[j.job_id] = (f"released to {j.required_nodes} but they lack "
                                 f"{left} free CPU(s)")
            for k, c in here:
                free[k] += c
        else:
            placed_rows.append((j._replace(start=now), j.cpus, sorted(here)))
    # a draining node (jobs on it, no new job) is held whole by a blocker row: its free
    # CPUs are taken until long after now (a negative id: not a Slurm job)
    down, closed = [], []
    for n in nodes:
        k = pos[n.name]
        if n.usable:
            continue
        if free[k] == n.cpus:
            down.append(k)
            continue
        closed.append(k)
        if free[k] > 0:
            block = SlurmJob(-(k + 1), "RUNNING", partition, "-", now, UNLIMITED_S,
                             int(free[k]), now, now + UNLIMITED_S,
                             ((n.name, int(free[k])),), "draining", 0, "")
            placed_rows.append((block, int(free[k]), [(k, int(free[k]))]))
    return _assemble(platform, partition, now, placed_rows, waiting_jobs, down, closed,
                     skipped)


def _assemble(platform: Platform, partition: str, now: int,
              placed_rows: list[tuple[SlurmJob, int, list[tuple[int, int]]]],
              waiting_jobs: list[SlurmJob], down: list[int], closed: list[int],
              skipped: dict[int, str]) -> Twin:
    """The workload (rows sorted by submit time, then id) and the engine indices."""
    jobs = [r[0] for r in placed_rows] + waiting_jobs
    n, n_placed = len(jobs), len(placed_rows)
    cols = list(zip(*jobs, strict=True)) if n else [()] * len(SlurmJob._fields)
    f = SlurmJob._fields.index
    job_id = np.array(cols[f("job_id")], dtype=np.int64)
    submit = np.array(cols[f("submit")], dtype=np.int64)
    limit = np.array(cols[f("time_limit")], dtype=np.int64)
    units = np.array(cols[f("cpus")], dtype=np.int64)
    units[:n_placed] = [r[1] for r in placed_rows]
    started = np.array(cols[f("start")][:n_placed], dtype=np.int64)
    started = np.where((started > 0) & (started < now), started, now)
    origin = int(min(now, submit.min())) if n else now
    submit = np.minimum(submit, now) - origin
    walltime = np.where(limit > 0, limit, UNLIMITED_S)
    walltime[:n_placed] = np.maximum(walltime[:n_placed], now - started + 1)
    names = [u or "-" for u in cols[f("user")]]
    codes = {u: k for k, u in enumerate(dict.fromkeys(names))}
    user = np.array([codes[u] for u in names], dtype=np.int64)
    order = np.lexsort((job_id, submit))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    wl = Workload.from_columns(
        submit=submit[order], walltime=walltime[order], runtime=walltime[order],
        units=units[order], req={CORES: np.ones(n, np.int64)}, job_id=job_id[order],
        queues=[Queue(partition)], origin_unix=origin, source=f"slurm:{partition}@{now}",
        validate=False)
    wl = replace(wl, users=tuple(codes), user=user[order])
    index = dict(zip(job_id.tolist(), rank.tolist(), strict=True))
    # every placement's nodes and counts as views of two flat arrays (one allocation each)
    flat = [pair for _, _, alloc in placed_rows for pair in alloc]
    flat_nodes = np.array([k for k, _ in flat], dtype=np.int64)
    flat_counts = np.array([c for _, c in flat], dtype=np.int64)
    bounds = np.cumsum([0] + [len(alloc) for _, _, alloc in placed_rows]).tolist()
    placed = [Placed(r, t - origin, flat_nodes[a:b], flat_counts[a:b])
              for r, t, a, b in zip(rank[:n_placed].tolist(), started.tolist(), bounds[:-1],
                                    bounds[1:], strict=True)]
    waiting = sorted(rank[n_placed:].tolist())
    return Twin(wl, platform, origin, now - origin, placed, down, closed, waiting, index,
                skipped)
