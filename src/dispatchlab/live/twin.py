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

Built from the snapshot's job columns with array operations: no Python object per job
but the running jobs' placements (and a loop over the few released or skipped jobs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import repeat

import numpy as np
import numpy.typing as npt

from dispatchlab.dispatchers.base import Dispatcher
from dispatchlab.engine.decisions import Decision
from dispatchlab.engine.simulator import Simulator
from dispatchlab.engine.warm_start import Placed, warm_start
from dispatchlab.errors import DispatchlabError
from dispatchlab.live.job_table import IntArray, JobTable
from dispatchlab.live.slurm_state import (
    USER_HOLD,
    SlurmNode,
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
    jobs, now = snap.jobs, snap.now
    pending = jobs.pending & jobs.in_partition(partition)
    pinned = jobs.required_nodes.where(bool)
    held = jobs.reason.where(lambda r: r == USER_HOLD)
    chosen = held | ~pinned if every_pending else held
    skipped = {int(jobs.job_id[r]): (f"pending, not held ({jobs.reason[r]}): Slurm's own "
                                     "scheduler's")
               for r in np.flatnonzero(pending & ~chosen & ~pinned).tolist()}
    running = _running(jobs, pos, free)
    released = _released(jobs, np.flatnonzero(pending & ~chosen & pinned), pos, free,
                         skipped)
    blockers = _blockers(nodes, pos, free)
    return _assemble(platform, partition, now, jobs, running, released, blockers,
                     np.flatnonzero(pending & chosen), skipped)


@dataclass
class _Placements:
    """Placed rows of one kind: table rows (or node indices for blockers), CPUs each, and
    their (node, CPUs) entries as flat arrays with each row's entry count."""

    rows: IntArray
    units: IntArray
    nodes: IntArray
    counts: IntArray
    sizes: IntArray


def _ints(values: Sequence[int]) -> IntArray:
    return np.array(values, dtype=np.int64).reshape(-1)


def _running(jobs: JobTable, pos: dict[str, int], free: IntArray) -> _Placements:
    """Running jobs (any partition) on the partition's nodes, where Slurm says; takes
    their CPUs from ``free``."""
    a_job, a_cpus = jobs.alloc_job, jobs.alloc_cpus
    a_pos = np.fromiter(map(pos.get, jobs.alloc_node, repeat(-1)), dtype=np.int64,
                        count=len(a_job))
    keep = np.flatnonzero(jobs.running[a_job] & (a_pos >= 0) & (a_cpus > 0))
    keep = keep[np.lexsort((a_cpus[keep], a_pos[keep], a_job[keep]))]  # by job, then node
    rows, nodes, counts = a_job[keep], a_pos[keep], a_cpus[keep]
    np.subtract.at(free, nodes, counts)
    if not len(rows):
        return _Placements(rows, counts, nodes, counts, rows)
    first = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    return _Placements(rows[first], np.add.reduceat(counts, first), nodes, counts,
                       np.diff(np.r_[first, len(rows)]))


def _released(jobs: JobTable, rows: IntArray, pos: dict[str, int], free: IntArray,
              skipped: dict[int, str]) -> _Placements:
    """Jobs the adapter released that Slurm has not started yet: on their pinned nodes,
    filled in order (those the nodes cannot hold now go to ``skipped``)."""
    out_rows: list[int] = []
    units: list[int] = []
    pairs: list[tuple[int, int]] = []
    sizes: list[int] = []
    for r in rows.tolist():
        need = jobs.required_nodes[r]
        left, here = int(jobs.cpus[r]), []
        for name in expand_hostlist(need):
            k = pos.get(name)
            if k is not None and left > 0 and free[k] > 0:
                c = int(min(left, free[k]))
                here.append((k, c))
                free[k] -= c
                left -= c
        if left:
            skipped[int(jobs.job_id[r])] = (f"released to {need} but they lack {left} "
                                            "free CPU(s)")
            for k, c in here:
                free[k] += c
        else:
            out_rows.append(r)
            units.append(int(jobs.cpus[r]))
            pairs += sorted(here)
            sizes.append(len(here))
    return _Placements(_ints(out_rows), _ints(units), _ints([k for k, _ in pairs]),
                       _ints([c for _, c in pairs]), _ints(sizes))


def _blockers(nodes: Sequence[SlurmNode], pos: dict[str, int], free: IntArray
              ) -> tuple[list[int], list[int], _Placements]:
    """Down nodes (no job on them), draining ones (jobs still on them, no new job: a
    blocker row holds their free CPUs until long after now), and the blockers."""
    down, closed, held = [], [], []
    for n in nodes:
        if n.usable:
            continue
        k = pos[n.name]
        if free[k] == n.cpus:
            down.append(k)
            continue
        closed.append(k)
        if free[k] > 0:
            held.append(k)
    at = _ints(held)
    return down, closed, _Placements(at, free[at], at, free[at], np.ones(len(at), np.int64))


def _assemble(platform: Platform, partition: str, now: int, jobs: JobTable,
              running: _Placements, released: _Placements,
              blockers: tuple[list[int], list[int], _Placements], waiting_rows: IntArray,
              skipped: dict[int, str]) -> Twin:
    """The workload (placed rows first: running, released, blockers; then the waiting
    ones; sorted by submit time, then id) and the engine indices."""
    down, closed, block = blockers
    taken = np.concatenate([running.rows, released.rows])
    nb = len(block.rows)
    job_id = np.concatenate([jobs.job_id[taken], -(block.rows + 1), jobs.job_id[waiting_rows]])
    submit = np.concatenate([jobs.submit[taken], np.full(nb, now), jobs.submit[waiting_rows]])
    limit = np.concatenate([jobs.time_limit[taken], np.full(nb, UNLIMITED_S),
                            jobs.time_limit[waiting_rows]])
    units = np.concatenate([running.units, released.units, block.units,
                            jobs.cpus[waiting_rows]])
    n, n_placed = len(job_id), len(taken) + nb
    started = np.concatenate([jobs.start[running.rows],
                              np.full(len(released.rows) + nb, now, np.int64)])
    started = np.where((started > 0) & (started < now), started, now)
    origin = int(min(now, submit.min())) if n else now
    submit = np.minimum(submit, now) - origin
    walltime = np.where(limit > 0, limit, UNLIMITED_S)
    walltime[:n_placed] = np.maximum(walltime[:n_placed], now - started + 1)
    users, user = _users(jobs, taken, nb, waiting_rows)
    order = np.lexsort((job_id, submit))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    wl = Workload.from_columns(
        submit=submit[order], walltime=walltime[order], runtime=walltime[order],
        units=units[order], req={CORES: np.ones(n, np.int64)}, job_id=job_id[order],
        queues=[Queue(partition)], origin_unix=origin, source=f"slurm:{partition}@{now}",
        validate=False)
    wl = replace(wl, users=users, user=user[order])
    index = dict(zip(job_id.tolist(), rank.tolist(), strict=True))
    # every placement's nodes and counts as views of two flat arrays (one allocation each)
    flat_nodes = np.concatenate([running.nodes, released.nodes, block.nodes])
    flat_counts = np.concatenate([running.counts, released.counts, block.counts])
    sizes = np.concatenate([running.sizes, released.sizes, block.sizes])
    bounds = np.r_[0, np.cumsum(sizes)].tolist()
    placed = [Placed(r, t - origin, flat_nodes[a:b], flat_counts[a:b])
              for r, t, a, b in zip(rank[:n_placed].tolist(), started.tolist(), bounds[:-1],
                                    bounds[1:], strict=True)]
    waiting = np.sort(rank[n_placed:]).tolist()
    return Twin(wl, platform, origin, now - origin, placed, down, closed, waiting, index,
                skipped)


def _users(jobs: JobTable, taken: IntArray, blockers: int, waiting_rows: IntArray
           ) -> tuple[tuple[str, ...], IntArray]:
    """User names (a missing one is "-", as the blockers') in order of first appearance
    along the rows, and each row's code."""
    names = [u or "-" for u in jobs.user.labels] + ["-"]
    canon = {u: k for k, u in enumerate(dict.fromkeys(names))}
    to_canon = np.array([canon[u] for u in names], dtype=np.int64)
    seq = np.concatenate([to_canon[jobs.user.codes[taken]],
                          np.full(blockers, to_canon[-1], np.int64),
                          to_canon[jobs.user.codes[waiting_rows]]])
    if not len(seq):
        return (), seq
    seen, first = np.unique(seq, return_index=True)
    appear = seen[np.argsort(first)]
    recode = np.zeros(len(canon), dtype=np.int64)
    recode[appear] = np.arange(len(appear))
    labels = list(canon)
    return tuple(labels[c] for c in appear.tolist()), recode[seq]
