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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dispatchlab.dispatchers.base import Dispatcher
from dispatchlab.engine.decisions import Decision
from dispatchlab.engine.simulator import Simulator
from dispatchlab.engine.warm_start import Placed, warm_start
from dispatchlab.errors import DispatchlabError
from dispatchlab.live.slurm_state import SlurmJob, Snapshot, expand_hostlist, partition_nodes
from dispatchlab.platform.platform import CORES, Platform
from dispatchlab.workload.workload import Workload

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

    def node_names(self, nodes: Sequence[int]) -> list[str]:
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


def build_twin(snap: Snapshot, partition: str,
               runtime_of: Callable[[SlurmJob, int], int] | None = None, *,
               every_pending: bool = False) -> Twin:
    """The twin of ``snap`` for ``partition``. ``runtime_of(job, walltime)``: the run time
    the twin gives a job (default: its requested time — what a real scheduler knows);
    a running job's is kept past its elapsed time. ``every_pending``: every pending job
    of the partition waits in the twin (shadow predictions of Slurm's own scheduling),
    not only the user-held ones."""
    nodes = partition_nodes(snap.nodes, partition)
    if not nodes:
        raise DispatchlabError(f"Slurm reports no node in partition '{partition}'")
    pos = {n.name: k for k, n in enumerate(nodes)}
    cap = np.array([[n.cpus] for n in nodes], dtype=np.int64)
    platform = Platform(resources=(CORES,), capacity=cap,
                        node_names=tuple(n.name for n in nodes), name=f"slurm:{partition}")
    free = cap[:, 0].copy()
    rows: list[tuple[SlurmJob, int, list[tuple[int, int]] | None]] = []
    skipped: dict[int, str] = {}
    now = snap.now
    for j in snap.jobs:
        if j.running:
            here = [(pos[name], c) for name, c in j.alloc if name in pos and c > 0]
            if here:
                for k, c in here:
                    free[k] -= c
                rows.append((j, sum(c for _, c in here), sorted(here)))
            continue
        if not j.pending or j.partition != partition:
            continue
        if j.user_held or (every_pending and not j.required_nodes):
            rows.append((j, j.cpus, None))
        elif j.required_nodes:
            rows.append((j, j.cpus, []))  # released by the adapter: placed below
        else:
            skipped[j.job_id] = f"pending, not held ({j.reason}): Slurm's own scheduler's"
    # released jobs Slurm has not started yet: on their pinned nodes, filled in order
    for k, (j, cpus, alloc) in enumerate(rows):
        if alloc == []:
            left, here = cpus, []
            for name in expand_hostlist(j.required_nodes):
                if name in pos and left > 0 and free[pos[name]] > 0:
                    c = int(min(left, free[pos[name]]))
                    here.append((pos[name], c))
                    free[pos[name]] -= c
                    left -= c
            if left:
                skipped[j.job_id] = (f"released to {j.required_nodes} but they lack "
                                     f"{left} free CPU(s)")
                rows[k] = (j, cpus, [(-1, 0)])
            else:
                rows[k] = (j, cpus, sorted(here))
    rows = [r for r in rows if r[2] != [(-1, 0)]]
    # a draining node (jobs on it, no new job) is held whole by a blocker row: its free
    # CPUs are taken until long after now (a negative id: not a Slurm job)
    down, closed = [], []
    for n in nodes:
        k = pos[n.name]
        if n.usable:
            continue
        if free[k] == n.cpus:
            down.append(k)
        else:
            closed.append(k)
            if free[k] > 0:
                block = SlurmJob(-(k + 1), "RUNNING", partition, "-", now, UNLIMITED_S,
                                 int(free[k]), now, now + UNLIMITED_S,
                                 ((n.name, int(free[k])),), "draining", 0, "")
                rows.append((block, int(free[k]), [(k, int(free[k]))]))
    origin = min([now] + [j.submit for j, _, _ in rows])
    walltime, runtime = [], []
    for j, _, alloc in rows:
        w = j.time_limit if j.time_limit > 0 else UNLIMITED_S
        if alloc:
            w = max(w, now - j.start + 1)
        rt = runtime_of(j, w) if runtime_of is not None else w
        if alloc:
            rt = max(rt, now - j.start + 1)
        walltime.append(w)
        runtime.append(max(rt, 1))
    wl = Workload.from_columns(
        submit=[min(j.submit, now) - origin for j, _, _ in rows], walltime=walltime,
        runtime=runtime, units=[u for _, u, _ in rows], req={CORES: [1] * len(rows)},
        job_id=[j.job_id for j, _, _ in rows], queue=[j.partition or "-" for j, _, _ in rows],
        user=[j.user or "-" for j, _, _ in rows], origin_unix=origin,
        source=f"slurm:{partition}@{now}", validate=False)
    index = {int(jid): k for k, jid in enumerate(wl.job_id.tolist())}
    placed, waiting = [], []
    for j, _, alloc in rows:
        e = index[j.job_id]
        if alloc:
            start = min(j.start, now) if j.running and j.start > 0 else now
            placed.append(Placed(e, start - origin,
                                 np.array([k for k, _ in alloc], dtype=np.int64),
                                 np.array([c for _, c in alloc], dtype=np.int64)))
        else:
            waiting.append(e)
    return Twin(wl, platform, origin, now - origin, placed, down, closed, waiting, index,
                skipped)
