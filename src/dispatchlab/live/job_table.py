"""The jobs of ``squeue --json`` as columns: one pass over the parsed document, no record
per job.

A live cycle on a large machine reads tens of thousands of jobs per poll; building a
Python object per job (and later the engine's arrays from those objects) was most of the
conversion's time. Here every field becomes one numpy column (numbers) or one
:class:`Labels` column (strings: a code per job into the few distinct values), and the
CPUs each running job holds per node one flat triple of columns. Records
(:class:`~dispatchlab.live.slurm_records.SlurmJob`) are built only for the rows asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import repeat
from operator import itemgetter
from typing import Any

import numpy as np

from dispatchlab.arrays import BoolArray, IntArray
from dispatchlab.live.slurm_records import (
    RUNNING_STATES,
    USER_HOLD,
    SlurmJob,
    SlurmStateError,
    number,
)
from dispatchlab.workload.slurm_numbers import NO_VAL


@dataclass(frozen=True, eq=False)
class Labels:
    """A string column: ``labels[codes[k]]`` is row ``k``'s value (compared by identity)."""

    codes: IntArray
    labels: tuple[str, ...]

    @classmethod
    def of(cls, values: list[Any], clean: Callable[[Any], str]) -> Labels:
        """The column of ``values``, each value as ``clean`` makes it."""
        try:
            raw = list(dict.fromkeys(values))
        except TypeError:  # unhashable values (a state as a list of flags): clean first
            values = [clean(v) for v in values]
            raw = list(dict.fromkeys(values))
        cleaned = [clean(v) for v in raw]
        labels = tuple(dict.fromkeys(cleaned))
        pos = {v: k for k, v in enumerate(labels)}
        if len(raw) == 1:  # one value in every row (a partition, no reason, no pinning)
            return cls(np.zeros(len(values), dtype=np.int64), labels)
        code = {r: pos[c] for r, c in zip(raw, cleaned, strict=True)}
        codes = np.fromiter(map(code.__getitem__, values), dtype=np.int64, count=len(values))
        return cls(codes, labels)

    def where(self, test: Callable[[str], bool]) -> BoolArray:
        """Rows whose value passes ``test`` (called once per distinct value)."""
        ok = np.array([bool(test(v)) for v in self.labels] or [False], dtype=bool)
        return ok[self.codes]

    def __getitem__(self, row: int) -> str:
        return self.labels[int(self.codes[row])]

    def strings(self, rows: IntArray | None = None) -> list[str]:
        """The values of ``rows`` (every row by default)."""
        codes = self.codes if rows is None else self.codes[rows]
        return list(map(self.labels.__getitem__, codes.tolist()))


@dataclass(frozen=True, eq=False)
class JobTable:
    """Every job of one ``squeue --json``: one entry per job in each column, in Slurm's
    order (times in Unix s; ``time_limit`` in s, -1 when unlimited). ``alloc_*``: one row
    per (running job, node) — the job's row, the node's name, the CPUs it holds there —
    grouped by job in row order."""

    job_id: IntArray
    state: Labels
    partition: Labels
    user: Labels
    submit: IntArray
    time_limit: IntArray
    cpus: IntArray
    start: IntArray
    end: IntArray
    reason: Labels
    priority: IntArray
    required_nodes: Labels
    alloc_job: IntArray
    alloc_node: tuple[str, ...]
    alloc_cpus: IntArray

    def __len__(self) -> int:
        return len(self.job_id)

    # ---- masks ---------------------------------------------------------------------------

    @property
    def pending(self) -> BoolArray:
        return self.state.where(lambda s: s == "PENDING")

    @property
    def running(self) -> BoolArray:
        return self.state.where(lambda s: s in RUNNING_STATES)

    @property
    def user_held(self) -> BoolArray:
        """Pending and held by their user (the adapter's jobs)."""
        return self.pending & self.reason.where(lambda r: r == USER_HOLD)

    def in_partition(self, partition: str) -> BoolArray:
        return self.partition.where(lambda p: p == partition)

    # ---- records -------------------------------------------------------------------------

    def record(self, row: int) -> SlurmJob:
        """Row ``row`` as a record."""
        lo, hi = np.searchsorted(self.alloc_job, [row, row + 1]).tolist()
        alloc = tuple(zip(self.alloc_node[lo:hi], self.alloc_cpus[lo:hi].tolist(),
                          strict=True))
        return SlurmJob(int(self.job_id[row]), self.state[row], self.partition[row],
                        self.user[row], int(self.submit[row]), int(self.time_limit[row]),
                        int(self.cpus[row]), int(self.start[row]), int(self.end[row]), alloc,
                        self.reason[row], int(self.priority[row]), self.required_nodes[row])

    def select(self, mask: BoolArray) -> list[SlurmJob]:
        """The records of the rows of ``mask``."""
        return [self.record(k) for k in np.flatnonzero(mask).tolist()]

    def __iter__(self) -> Iterator[SlurmJob]:
        return (self.record(k) for k in range(len(self)))

    @cached_property
    def allocations(self) -> dict[tuple[int, int, int], tuple[tuple[str, ...], list[int]]]:
        """(job id, start, CPUs) → (node names, CPUs on each) of every job with an
        allocation (what the next poll may reuse)."""
        rows = self.alloc_job
        if not len(rows):
            return {}
        first = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
        bounds = np.r_[first, len(rows)].tolist()
        counts = self.alloc_cpus.tolist()
        job = rows[first]
        keys = zip(self.job_id[job].tolist(), self.start[job].tolist(),
                   self.cpus[job].tolist(), strict=True)
        return {key: (self.alloc_node[a:b], counts[a:b])
                for key, a, b in zip(keys, bounds[:-1], bounds[1:], strict=True)}


def _clean_state(value: Any) -> str:
    if type(value) is str:
        return value
    return str(value[0]) if isinstance(value, list) else str(value)


def _text(value: Any) -> str:
    return value or ""


def _ints(values: list[Any], what: str, unset: int = 0) -> IntArray:
    """A number column: plain integers at C speed, anything else through :func:`number`
    (``unset`` for values Slurm marks not set)."""
    try:
        out = np.array(values, dtype=np.int64)
        if out.ndim == 1:
            return out
    except (TypeError, ValueError, OverflowError):
        pass
    return np.array([number(v, what, unset) for v in values], dtype=np.int64)


#: A running job's identity for reusing its allocation: (id, start time, CPUs).
_Key = tuple[int, int, int]


def _allocations(resources: Sequence[Any], keys: Sequence[_Key],
                 known: Mapping[_Key, tuple[tuple[str, ...], list[int]]]
                 ) -> tuple[IntArray, tuple[str, ...], IntArray]:
    """CPUs per node of each job with ``job_resources.allocated_nodes``. A job ``known``
    from the previous poll under the same key and on the same nodes keeps its counts
    (counting a 22.05 allocation's cores per socket is most of the parsing time, and a
    running job's allocation does not change)."""
    rows: list[int] = []
    names: list[str] = []
    cpus: list[int] = []
    cores = itemgetter("cores")
    for k, res in enumerate(resources):
        if not res:
            continue
        entries = res.get("allocated_nodes") or ()
        if known:
            old = known.get(keys[k])
            if old is not None:
                here = tuple(str(entry.get("nodename")) for entry in entries)
                if here == old[0]:
                    rows += [k] * len(here)
                    names += here
                    cpus += old[1]
                    continue
        for entry in entries:
            if "sockets" in entry:  # 22.05: sockets → cores → state
                c = sum(map(len, map(cores, entry["sockets"].values())))
            else:  # 23.02+: a cpus count per node
                c = number(entry.get("cpus", 0), "allocated_nodes.cpus")
            rows.append(k)
            names.append(str(entry.get("nodename")))
            cpus.append(int(c))
    return (np.array(rows, dtype=np.int64), tuple(names), np.array(cpus, dtype=np.int64))


def parse_jobs(doc: Mapping[str, Any], previous: JobTable | None = None) -> JobTable:
    """The jobs of ``squeue --json`` as a :class:`JobTable`; ``previous``: the table of
    the previous poll, whose running jobs' allocations are reused when unchanged."""
    jobs = doc.get("jobs")
    if not isinstance(jobs, list):
        raise SlurmStateError("squeue --json: no 'jobs' list")
    try:
        job_id = list(map(itemgetter("job_id"), jobs))
        state = list(map(itemgetter("job_state"), jobs))

        def col(key: str) -> list[Any]:
            try:  # every job has the field: the quicker lookup
                return list(map(itemgetter(key), jobs))
            except KeyError:
                return list(map(dict.get, jobs, repeat(key)))

        fields = {key: col(key) for key in (
            "partition", "user_name", "submit_time", "time_limit", "cpus", "start_time",
            "end_time", "job_resources", "state_reason", "priority", "required_nodes")}
    except KeyError as err:
        raise SlurmStateError(f"squeue --json: a job has no field {err}") from None
    except TypeError:
        raise SlurmStateError("squeue --json: a job is not a JSON object") from None
    ids, cpus = _ints(job_id, "job_id"), _ints(fields["cpus"], "cpus")
    start = _ints(fields["start_time"], "start_time")
    # Slurm's unlimited (INFINITE) and not set (NO_VAL: the partition's) are both -1
    limit = _ints(fields["time_limit"], "time_limit", unset=-1)
    limit = np.where((limit < 0) | (limit >= NO_VAL), -1, limit * 60)
    known = previous.allocations if previous is not None else {}
    keys: Sequence[_Key] = (list(zip(ids.tolist(), start.tolist(), cpus.tolist(),
                                     strict=True)) if known else ())
    alloc_job, alloc_node, alloc_cpus = _allocations(fields["job_resources"], keys, known)
    return JobTable(
        job_id=ids, state=Labels.of(state, _clean_state),
        partition=Labels.of(fields["partition"], _text),
        user=Labels.of(fields["user_name"], _text),
        submit=_ints(fields["submit_time"], "submit_time"), time_limit=limit, cpus=cpus,
        start=start, end=_ints(fields["end_time"], "end_time"),
        reason=Labels.of(fields["state_reason"], _text),
        priority=_ints(fields["priority"], "priority"),
        required_nodes=Labels.of(fields["required_nodes"], _text),
        alloc_job=alloc_job, alloc_node=alloc_node, alloc_cpus=alloc_cpus)
