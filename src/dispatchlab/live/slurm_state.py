"""Slurm's state as plain records, read from ``squeue --json`` and ``sinfo --json``.

Why these two commands: they are Slurm's own client interfaces, present wherever the
client package is, need no extra daemon (``slurmrestd`` does) and give, in one call each,
every job with its allocation per node and every node with its state; ``scontrol`` is
used only to act. Field names are those of Slurm 22.05's ``data_parser`` (Debian 12);
later versions wrap numbers as ``{"set": …, "number": …}`` and states as lists, which
:func:`_number` and :func:`_states` accept too.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple

from dispatchlab.errors import DispatchlabError

#: Node states (base or flag) in which a node takes no new job.
UNUSABLE = frozenset({"DOWN", "DRAIN", "DRAINED", "DRAINING", "FAIL", "FAILING",
                      "MAINTENANCE", "NOT_RESPONDING", "POWERED_DOWN", "POWERING_DOWN",
                      "REBOOT_REQUESTED", "FUTURE", "UNKNOWN", "RESERVED", "INVALID_REG",
                      "POWER_DOWN", "POWERING_UP", "REBOOT_ISSUED", "PLANNED"})
#: The hold reasons of a job held by its user (``sbatch --hold``, ``scontrol uhold``).
USER_HOLD = "JobHeldUser"


class SlurmStateError(DispatchlabError):
    """Slurm's JSON did not have the expected shape (names the command and field)."""


class SlurmNode(NamedTuple):
    """A node: its CPUs and whether it takes new jobs (``usable``)."""

    name: str
    cpus: int
    states: frozenset[str]
    partitions: tuple[str, ...]

    @property
    def usable(self) -> bool:
        return not (self.states & UNUSABLE)


class SlurmJob(NamedTuple):
    """A job as the scheduler sees it (times in Unix seconds, ``time_limit`` in s, -1 when
    unlimited; ``alloc``: CPUs per node of a running job)."""

    job_id: int
    state: str
    partition: str
    user: str
    submit: int
    time_limit: int
    cpus: int
    start: int
    end: int
    alloc: tuple[tuple[str, int], ...]
    reason: str
    priority: int
    required_nodes: str

    @property
    def pending(self) -> bool:
        return self.state == "PENDING"

    @property
    def running(self) -> bool:
        return self.state in ("RUNNING", "COMPLETING", "SUSPENDED")

    @property
    def user_held(self) -> bool:
        """Held by its user (the adapter's jobs: ``sbatch --hold`` or ``scontrol uhold``)."""
        return self.pending and self.reason == USER_HOLD


@dataclass(frozen=True)
class Snapshot:
    """What one poll read: the time, every node and every job Slurm reported."""

    now: int
    nodes: tuple[SlurmNode, ...]
    jobs: tuple[SlurmJob, ...]

    def fingerprint(self, partition: str) -> tuple[Any, ...]:
        """What a scheduling cycle depends on: node states and the partition's jobs
        (a change = an event: submission, start, end, node state change)."""
        return (tuple((n.name, n.states) for n in self.nodes),
                tuple((j.job_id, j.state, j.reason, j.required_nodes) for j in self.jobs
                      if j.partition == partition or j.running))


def _number(value: Any, what: str) -> int:
    """An integer field: plain (22.05) or ``{"set", "infinite", "number"}`` (23.02+)."""
    if isinstance(value, Mapping):
        if value.get("infinite"):
            return -1
        if not value.get("set", True):
            return 0
        value = value.get("number", 0)
    if value is None:
        return 0
    try:
        return int(value)
    except (TypeError, ValueError):
        raise SlurmStateError(f"field '{what}': not a number: {value!r}") from None


def _states(value: Any) -> frozenset[str]:
    """A state as one string (``"idle"``) or a list of flags (``["IDLE", "DRAIN"]``)."""
    if isinstance(value, str):
        return frozenset(v.upper() for v in value.replace("+", " ").split())
    return frozenset(str(v).upper() for v in value or ())


_RANGE = re.compile(r"^([^\[\],]*)\[([^\]]+)\](.*)$")


def expand_hostlist(text: str) -> list[str]:
    """``n[1-3,7],m2`` → ``['n1', 'n2', 'n3', 'n7', 'm2']`` (zero padding kept)."""
    out: list[str] = []
    for part in _split_top(text):
        m = _RANGE.match(part)
        if not m:
            if part:
                out.append(part)
            continue
        prefix, body, rest = m.groups()
        for item in body.split(","):
            lo, _, hi = item.partition("-")
            width = len(lo) if lo.startswith("0") else 0
            for k in range(int(lo), int(hi or lo) + 1):
                for tail in expand_hostlist(rest) if rest else [""]:
                    out.append(f"{prefix}{k:0{width}d}{tail}")
    return out


def _split_top(text: str) -> list[str]:
    """Split at commas outside brackets."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text.strip():
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        depth += (ch == "[") - (ch == "]")
        cur.append(ch)
    parts.append("".join(cur))
    return [p for p in parts if p]


def parse_sinfo(doc: Mapping[str, Any]) -> list[SlurmNode]:
    """The nodes of ``sinfo --json``."""
    nodes = doc.get("nodes")
    if not isinstance(nodes, list):
        raise SlurmStateError("sinfo --json: no 'nodes' list")
    out = []
    for k, n in enumerate(nodes):
        try:
            states = _states(n.get("state")) | _states(n.get("state_flags"))
            out.append(SlurmNode(str(n["name"]), _number(n.get("cpus"), "cpus"), states,
                                 tuple(n.get("partitions") or ())))
        except KeyError as err:
            raise SlurmStateError(f"sinfo --json: node {k} has no field {err}") from None
    return out


def _alloc(res: Mapping[str, Any]) -> tuple[tuple[str, int], ...]:
    """CPUs per node of a running job, from its ``job_resources.allocated_nodes``."""
    out = []
    for entry in res.get("allocated_nodes") or ():
        name = entry.get("nodename")
        if "sockets" in entry:  # 22.05: sockets → cores → state
            cpus = sum(map(len, [s["cores"] for s in entry["sockets"].values()]))
        else:  # 23.02+: a cpus count per node
            cpus = _number(entry.get("cpus", 0), "allocated_nodes.cpus")
        out.append((str(name), int(cpus)))
    return tuple(out)


def parse_squeue(doc: Mapping[str, Any]) -> list[SlurmJob]:
    """The jobs of ``squeue --json``."""
    jobs = doc.get("jobs")
    if not isinstance(jobs, list):
        raise SlurmStateError("squeue --json: no 'jobs' list")
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
                jid, limit, cpus = (_number(jid, "job_id"), _number(limit, "time_limit"),
                                    _number(cpus, "cpus"))
                sub, start, end = (_number(sub, "submit_time"), _number(start, "start_time"),
                                   _number(end, "end_time"))
                prio = _number(prio, "priority")
            res = get("job_resources")
            out.append(make(
                jid, state, get("partition") or "", get("user_name") or "", sub,
                -1 if limit < 0 or limit >= 0xFFFFFFFE else limit * 60, cpus, start, end,
                _alloc(res) if res else (), get("state_reason") or "", prio,
                get("required_nodes") or ""))
        except KeyError as err:
            raise SlurmStateError(f"squeue --json: a job has no field {err}") from None
    return out


@contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector: building tens of thousands of small objects
    next to a large parsed JSON document otherwise triggers full collections that scan
    the whole document again and again (most of the parsing time on 20,000 jobs)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def snapshot(now: int, squeue: Mapping[str, Any], sinfo: Mapping[str, Any]) -> Snapshot:
    """One poll's state from the two JSON documents."""
    with no_gc():
        return Snapshot(now, tuple(parse_sinfo(sinfo)), tuple(parse_squeue(squeue)))


def partition_nodes(nodes: Iterable[SlurmNode], partition: str) -> list[SlurmNode]:
    """The partition's nodes in Slurm's natural order (``n2`` before ``n10``)."""
    mine = [n for n in nodes if partition in n.partitions]
    split = _DIGITS.split
    return sorted(mine, key=lambda n: [int(t) if t.isdigit() else t for t in split(n.name)])


_DIGITS = re.compile(r"(\d+)")
