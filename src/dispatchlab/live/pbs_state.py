"""OpenPBS's state, read from ``qstat -f -F json`` and ``pbsnodes -av -F json``, as the same
:class:`~dispatchlab.live.slurm_state.Snapshot` the Slurm adapter decides on.

The mapping: a vnode with CPUs (``resources_available.ncpus`` > 0) is a node of the driven
queue (PBS vnodes belong to no queue by default); its state words become Slurm's (``free`` →
IDLE, ``job-busy`` → ALLOCATED, ``offline`` → DRAIN, ``down``/``state-unknown``/``stale`` →
DOWN, …), so an offline vnode with jobs still on it takes no new job and a down one is out.
A job's queue is its partition; a queued job (``Q``: with ``scheduling = False`` nothing else
runs it) is one of the adapter's, as a user-held Slurm job is; a held one (``H``) or one
waiting for its start time (``W``) is not; ``R``, ``E`` (exiting) and ``S`` hold their
``exec_vnode`` CPUs. Finished jobs (history, ``F``/``X``) are read and ignored.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np

from dispatchlab.live.job_table import JobTable, Labels
from dispatchlab.live.slurm_records import USER_HOLD, SlurmNode, SlurmStateError
from dispatchlab.live.slurm_state import Snapshot

#: PBS job states → Slurm's (the twin knows Slurm's words).
JOB_STATES = {"Q": "PENDING", "H": "PENDING", "W": "PENDING", "T": "PENDING",
              "R": "RUNNING", "E": "COMPLETING", "S": "SUSPENDED", "U": "SUSPENDED",
              "B": "RUNNING", "F": "COMPLETED", "X": "COMPLETED", "M": "COMPLETED"}
#: PBS vnode state words → Slurm's.
NODE_STATES = {"free": "IDLE", "job-busy": "ALLOCATED", "job-exclusive": "ALLOCATED",
               "resv-exclusive": "RESERVED", "offline": "DRAIN", "down": "DOWN",
               "state-unknown": "DOWN", "stale": "DOWN", "unresolvable": "DOWN",
               "provisioning": "POWERING_UP", "wait-provisioning": "POWERING_UP",
               "sleep": "POWERED_DOWN", "maintenance": "MAINTENANCE", "busy": "ALLOCATED"}


def job_number(pbs_id: str) -> int:
    """``12.pbshost`` → 12 (``12[3].host`` of an array → 12)."""
    head = str(pbs_id).split(".", 1)[0].split("[", 1)[0]
    try:
        return int(head)
    except ValueError:
        raise SlurmStateError(f"qstat: job id {pbs_id!r} is not NUMBER.SERVER") from None


_MONTHS = {m: k for k, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}


def pbs_time(value: Any, what: str) -> int:
    """A time of ``qstat -F json`` (``"Mon Dec  7 20:33:51 2026"``, local time, or Unix s)."""
    if value is None or value == "":
        return 0
    if isinstance(value, (int, float)):
        return int(value)
    try:
        _, month, day, hms, year = str(value).split()
        hour, minute, sec = hms.split(":")
        return _hour_start(int(year), _MONTHS[month], int(day), int(hour)) + int(minute) * 60 \
            + int(sec)
    except (ValueError, KeyError):
        text = str(value).strip()
        if text.isdigit():
            return int(text)
        raise SlurmStateError(f"qstat: field {what}: not a time: {value!r}") from None


@lru_cache(maxsize=4096)
def _hour_start(year: int, month: int, day: int, hour: int) -> int:
    """Unix time of a local hour (remembered: a poll's jobs share few hours; time zone
    changes fall on whole hours)."""
    return int(time.mktime((year, month, day, hour, 0, 0, 0, 0, -1)))


@lru_cache(maxsize=4096)
def duration(value: Any, what: str) -> int:
    """``HH:MM:SS`` (or ``MM:SS``, or seconds) → seconds; -1 when absent."""
    if value is None or value == "":
        return -1
    if isinstance(value, (int, float)):
        return int(value)
    secs = 0
    try:
        for part in str(value).split(":"):
            secs = secs * 60 + int(part)
    except ValueError:
        raise SlurmStateError(f"qstat: field {what}: not a duration: {value!r}") from None
    return secs


def exec_vnode(text: str) -> list[tuple[str, int]]:
    """``(vnode1:ncpus=2)+(vnode3:ncpus=1:mem=1gb+vnode4:ncpus=1)`` → ``[('vnode1', 2),
    ('vnode3', 1), ('vnode4', 1)]`` (a vnode's CPUs summed over the chunks it is in)."""
    out: dict[str, int] = {}
    for piece in (text or "").replace("(", "").replace(")", "").split("+"):
        name, *resources = piece.split(":")
        if not name:
            continue
        cpus = 0
        for res in resources:
            key, _, val = res.partition("=")
            if key == "ncpus":
                cpus = int(val)
        out[name] = out.get(name, 0) + cpus
    return list(out.items())


def select_chunks(select: str) -> list[int]:
    """The CPUs of each chunk of a ``select`` statement: ``2:ncpus=2+1:mem=1gb`` →
    ``[2, 2, 1]`` (a chunk without ncpus has one CPU, PBS's default)."""
    out: list[int] = []
    for spec in (select or "").split("+"):
        parts = spec.split(":")
        count = int(parts[0]) if parts[0].isdigit() else 1
        cpus = 1
        for res in parts[1 if parts[0].isdigit() else 0:]:
            key, _, val = res.partition("=")
            if key == "ncpus":
                cpus = int(val)
        out += [cpus] * count
    return out


def exec_vnode_text(placement: list[tuple[str, int]], chunks: list[int] | None = None,
                    host: Mapping[str, str] | None = None) -> str:
    """The ``qrun -H`` argument that gives ``[(vnode, CPUs), …]`` to a job whose select
    has chunks of ``chunks`` CPUs (one vnode per chunk without ``chunks``): the placement
    is cut into the chunks in order, a chunk spanning vnodes of one host (``host``: vnode
    → host) as ``(vnodeA:ncpus=1+vnodeB:ncpus=1)``. PBS's mom fails a job whose
    exec_vnode has fewer chunks than its select. Raises ValueError when the placement
    does not fit the chunks."""
    if chunks is None:
        return "+".join(f"({name}:ncpus={cpus})" for name, cpus in placement)
    if sum(chunks) != sum(c for _, c in placement):
        raise ValueError(f"the placement gives {sum(c for _, c in placement)} CPU(s), the "
                         f"select's chunks ask {sum(chunks)}")
    names = [name for name, cpus in placement if cpus > 0]
    left = [cpus for _, cpus in placement if cpus > 0]
    out = []
    k = 0
    for want in chunks:
        parts: list[str] = []
        first = names[k]
        while want > 0:
            name = names[k]
            if host is not None and host.get(name) != host.get(first):
                raise ValueError(f"a chunk of the select would span hosts ({first}, {name})")
            take = min(want, left[k])
            parts.append(f"{name}:ncpus={take}")
            want -= take
            left[k] -= take
            if left[k] == 0:
                k += 1
        out.append("(" + "+".join(parts) + ")")
    return "+".join(out)


def parse_pbsnodes(doc: Mapping[str, Any], queue: str) -> list[SlurmNode]:
    """The vnodes with CPUs of ``pbsnodes -av -F json``, as nodes of ``queue``."""
    nodes = doc.get("nodes")
    if not isinstance(nodes, Mapping):
        raise SlurmStateError("pbsnodes -F json: no 'nodes' object")
    out = []
    for name, node in nodes.items():
        try:
            cpus = int(node.get("resources_available", {}).get("ncpus", 0))
        except (TypeError, ValueError, AttributeError):
            raise SlurmStateError(f"pbsnodes: vnode {name}: resources_available.ncpus "
                                  "is not a number") from None
        if cpus <= 0:
            continue  # the natural node of a mom with vnodes carries no CPUs
        words = str(node.get("state", "")).replace(",", " ").split()
        states = frozenset(NODE_STATES.get(w, w.upper()) for w in words)
        out.append(SlurmNode(str(name), cpus, states, (queue,)))
    return out


def parse_qstat(doc: Mapping[str, Any]) -> JobTable:
    """The jobs of ``qstat -f -F json`` (with ``-x``, finished ones too) as a job table,
    built column by column; a malformed job is named by :func:`_check_job`."""
    jobs = doc.get("Jobs") or {}
    if not isinstance(jobs, Mapping):
        raise SlurmStateError("qstat -F json: 'Jobs' is not an object")
    try:
        return _columns(jobs)
    except (KeyError, TypeError, ValueError, AttributeError, SlurmStateError):
        for pbs_id, job in jobs.items():
            _check_job(str(pbs_id), job)
        raise


def _columns(jobs: Mapping[str, Any]) -> JobTable:
    vals = list(jobs.values())
    letters = [str(v["job_state"]) for v in vals]
    res = [v.get("Resource_List") or {} for v in vals]
    holding = [k for k, letter in enumerate(letters) if letter and letter in "RESU"]
    start = np.zeros(len(vals), dtype=np.int64)
    start[holding] = [pbs_time(vals[k].get("stime"), "stime") for k in holding]
    a_job: list[int] = []
    a_node: list[str] = []
    a_cpus: list[int] = []
    for row in holding:
        for name, cpus in exec_vnode(str(vals[row].get("exec_vnode") or "")):
            a_job.append(row)
            a_node.append(name)
            a_cpus.append(cpus)
    n = len(vals)
    hold = {letter: f"PBS state {letter}" for letter in set(letters)}
    return JobTable(
        job_id=np.array([job_number(k) for k in jobs], dtype=np.int64),
        state=Labels.of([JOB_STATES.get(x, "PENDING") for x in letters], str),
        partition=Labels.of([str(v.get("queue", "")) for v in vals], str),
        user=Labels.of([str(v.get("Job_Owner", "")).split("@", 1)[0] for v in vals], str),
        submit=np.array([pbs_time(v.get("qtime") or v.get("ctime"), "qtime") for v in vals],
                        dtype=np.int64),
        time_limit=np.array([duration(r.get("walltime"), "Resource_List.walltime")
                             for r in res], dtype=np.int64),
        cpus=np.array([int(r.get("ncpus", 1)) for r in res], dtype=np.int64),
        start=start, end=np.zeros(n, dtype=np.int64),
        reason=Labels.of([USER_HOLD if x == "Q" else hold[x] for x in letters], str),
        priority=np.array([int(v.get("Priority", 0)) for v in vals], dtype=np.int64),
        required_nodes=Labels.of([""] * n, str),
        alloc_job=np.array(a_job, dtype=np.int64), alloc_node=tuple(a_node),
        alloc_cpus=np.array(a_cpus, dtype=np.int64))


def _check_job(pbs_id: str, job: Any) -> None:
    """Raise the error that names ``pbs_id`` and its faulty field, if it has one."""
    if not isinstance(job, Mapping):
        raise SlurmStateError(f"qstat: job {pbs_id} is not a JSON object")
    if "job_state" not in job:
        raise SlurmStateError(f"qstat: job {pbs_id}: no field 'job_state'")
    try:
        job_number(pbs_id)
        res = job.get("Resource_List") or {}
        pbs_time(job.get("qtime") or job.get("ctime"), "qtime")
        pbs_time(job.get("stime"), "stime")
        duration(res.get("walltime"), "Resource_List.walltime")
        int(res.get("ncpus", 1))
        int(job.get("Priority", 0))
        exec_vnode(str(job.get("exec_vnode") or ""))
    except SlurmStateError as err:
        raise SlurmStateError(f"qstat: job {pbs_id}: {str(err).removeprefix('qstat: ')}"
                              ) from None
    except (TypeError, ValueError, AttributeError) as err:
        raise SlurmStateError(f"qstat: job {pbs_id}: {err}") from None


def pbs_snapshot(now: int, qstat: Mapping[str, Any], pbsnodes: Mapping[str, Any],
                 queue: str) -> Snapshot:
    """One poll's state (the vnodes with CPUs are ``queue``'s nodes)."""
    return Snapshot(now, tuple(parse_pbsnodes(pbsnodes, queue)), parse_qstat(qstat))


def free_cpus(snap: Snapshot) -> dict[str, int]:
    """Each usable vnode's CPUs not held by a job (what the adapter may still give out)."""
    free = {n.name: n.cpus for n in snap.nodes if n.usable}
    jobs = snap.jobs
    running = jobs.running
    for row, name, cpus in zip(jobs.alloc_job.tolist(), jobs.alloc_node,
                               jobs.alloc_cpus.tolist(), strict=True):
        if running[row] and name in free:
            free[name] -= cpus
    return free
