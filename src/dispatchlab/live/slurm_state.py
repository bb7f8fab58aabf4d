"""Slurm's state, read from ``squeue --json`` and ``sinfo --json``.

Why these two commands: they are Slurm's own client interfaces, present wherever the
client package is, need no extra daemon (``slurmrestd`` does) and give, in one call each,
every job with its allocation per node and every node with its state; ``scontrol`` is
used only to act. Nodes become :class:`SlurmNode` records (thousands); jobs (tens of
thousands) become the columns of a :class:`~dispatchlab.live.job_table.JobTable`.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from dispatchlab.live.job_table import JobTable, parse_jobs
from dispatchlab.live.slurm_records import UNUSABLE as UNUSABLE
from dispatchlab.live.slurm_records import USER_HOLD as USER_HOLD
from dispatchlab.live.slurm_records import SlurmJob as SlurmJob
from dispatchlab.live.slurm_records import SlurmNode as SlurmNode
from dispatchlab.live.slurm_records import SlurmStateError as SlurmStateError
from dispatchlab.live.slurm_records import node_states, number
from dispatchlab.platform.hostlist import expand_hostlist as expand_hostlist


@dataclass(frozen=True)
class Snapshot:
    """What one poll read: the time, every node and every job Slurm reported."""

    now: int
    nodes: tuple[SlurmNode, ...]
    jobs: JobTable

    def fingerprint(self, partition: str) -> tuple[Any, ...]:
        """What a scheduling cycle depends on: node states and the partition's jobs
        (a change = an event: submission, start, end, node state change)."""
        jobs = self.jobs
        rows = np.flatnonzero(jobs.in_partition(partition) | jobs.running)
        return (tuple((n.name, n.states) for n in self.nodes),
                tuple(zip(jobs.job_id[rows].tolist(), jobs.state.strings(rows),
                          jobs.reason.strings(rows), jobs.required_nodes.strings(rows),
                          strict=True)))


def _state_key(state: Any, flags: Any) -> tuple[Any, Any]:
    """A hashable key of a node's state and flags (few distinct ones per machine)."""
    return (state if isinstance(state, str) else tuple(state or ()),
            flags if isinstance(flags, str) else tuple(flags or ()))


def parse_sinfo(doc: Mapping[str, Any]) -> list[SlurmNode]:
    """The nodes of ``sinfo --json``."""
    nodes = doc.get("nodes")
    if not isinstance(nodes, list):
        raise SlurmStateError("sinfo --json: no 'nodes' list")
    out = []
    seen: dict[tuple[Any, Any], frozenset[str]] = {}
    for k, n in enumerate(nodes):  # hot: thousands of nodes per poll
        try:
            get = n.get
            state, flags, cpus = get("state"), get("state_flags"), get("cpus")
            key = ((state, tuple(flags)) if type(state) is str and type(flags) is list
                   else _state_key(state, flags))
            states = seen.get(key)
            if states is None:
                states = seen[key] = node_states(state) | node_states(flags)
            out.append(SlurmNode(str(n["name"]), cpus if type(cpus) is int
                                 else number(cpus, "cpus"), states,
                                 tuple(get("partitions") or ())))
        except KeyError as err:
            raise SlurmStateError(f"sinfo --json: node {k} has no field {err}") from None
    return out


def parse_squeue(doc: Mapping[str, Any]) -> list[SlurmJob]:
    """The jobs of ``squeue --json`` as records (for a few jobs; a poll uses
    :func:`~dispatchlab.live.job_table.parse_jobs`)."""
    return list(parse_jobs(doc))


@contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector: building objects next to a large parsed JSON
    document otherwise triggers collections that scan the whole document again and
    again. Free the document before the block ends: the first collection after it
    otherwise scans every object made while paused, the document included."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def snapshot(now: int, squeue: Mapping[str, Any], sinfo: Mapping[str, Any],
             previous: Snapshot | None = None) -> Snapshot:
    """One poll's state from the two JSON documents (``previous``: the last poll's, whose
    unchanged allocations are reused)."""
    with no_gc():
        return Snapshot(now, tuple(parse_sinfo(sinfo)),
                        parse_jobs(squeue, previous.jobs if previous is not None else None))


def partition_nodes(nodes: Iterable[SlurmNode], partition: str) -> list[SlurmNode]:
    """The partition's nodes in Slurm's natural order (``n2`` before ``n10``)."""
    mine = [n for n in nodes if partition in n.partitions]
    return [mine[k] for k in natural_order(tuple(n.name for n in mine))]


@lru_cache(maxsize=8)
def natural_order(names: tuple[str, ...]) -> list[int]:
    """Positions of ``names`` in natural order (digits compared as numbers); remembered,
    as a machine's node names rarely change between polls."""
    split = _DIGITS.split
    keys = [[int(t) if t.isdigit() else t for t in split(name)] for name in names]
    return sorted(range(len(names)), key=keys.__getitem__)


_DIGITS = re.compile(r"(\d+)")
