"""A Slurm snapshot as the engine's state: the twin every live cycle decides on.

The partition's nodes become a platform (``cores`` = each node's CPUs, in Slurm's node
order); every job becomes a workload row of one-core units (``cpus`` of them), requested
time = its time limit, submitted at its Slurm submit time (times relative to the earliest
one, ``origin``). Running jobs (of any partition, on the partition's nodes) are placed
where Slurm says, since their real start; jobs the adapter released but Slurm has not
started yet (pending, not held, pinned to nodes) are placed there now; jobs held by
their user wait in the queue (the adapter's jobs). Down or drained nodes are out;
a draining one (jobs still on it) takes no new job: a blocker row (negative id) holds its
free CPUs. Other pending jobs (Slurm's own) are left out and listed in
``skipped``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from dispatchlab.dispatchers.base import Dispatcher
from dispatchlab.engine.decisions import Decision
from dispatchlab.engine.simulator import Simulator
from dispatchlab.engine.warm_start import Placed, warm_start
from dispatchlab.errors import DispatchlabError
from dispatchlab.live.slurm_state import (
    USER_HOLD,
    SlurmJob,
    Snapshot,
    expand_hostlist,
    partition_nodes,
)
from dispatchlab.platform.platform import CORES, Platform
from dispatchlab.workload.workload import Queue, Workload

#: Requested time given to a job without a time limit in the twin (a year).
UNLIMITED_S = 365 * 86400


@dataclass
class Twin:
    """The engine-side picture of one snapshot (times relative to ``origin``)."""

    workload: Workload
    platform: Platform
    origin: int
    now: int
    placed: list[Placed]
    down: list[int]
    closed: list[int]  # draining nodes (held whole by blocker rows, negative ids)
    waiting: list[int]  # engine indices of the adapter's (user-held) jobs
    index: dict[int, int]  # Slurm job id → engine index
    skipped: dict[int, str] = field(default_factory=dict)  # Slurm job id → why not in twin

    def slurm_id(self, job: int) -> int:
        return int(self.workload.job_id[job])

    def node_names(self, nodes: Sequence[int] | npt.NDArray[np.int64]) -> list[str]:
        """Slurm's names of engine node indices."""
        names = self.platform.node_names
        return [names[int(k)] for k in nodes]

    def simulator(self, dispatcher: Dispatcher, seed: int = 0) -> Simulator:
        """A simulator of this state (jobs the machine cannot host are rejected, not
        errors)."""
        return Simulator(self.workload, self.platform, dispatcher, seed=seed,
                         on_infeasible="reject")

    def decide(self, dispatcher: Dispatcher, seed: int = 0) -> tuple[Simulator,
                                                                     Sequence[Decision]]:
        """One decision point on this state: the simulator (warm-started) and the
        decisions it applied."""
        sim = self.simulator(dispatcher, seed)
        return sim, warm_start(sim, self.now, self.placed, self.down)


def build_twin(snap: Snapshot, partition: str, *, every_pending: bool = False) -> Twin:
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
