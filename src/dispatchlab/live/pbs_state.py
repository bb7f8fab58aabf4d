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

import contextlib
import re
import time
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import IntArray
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
    return list(_exec_vnode(text or ""))


@lru_cache(maxsize=65536)
def _exec_vnode(text: str) -> tuple[tuple[str, int], ...]:
    """:func:`exec_vnode`, remembered (a running job's exec_vnode is read at every poll)."""
    out: dict[str, int] = {}
    for piece in text.replace("(", "").replace(")", "").split("+"):
        name, _, rest = piece.partition(":")
        if not name:
            continue
        if rest.startswith("ncpus=") and ":" not in rest:  # the usual (vnode:ncpus=N)
            cpus = int(rest[6:])
        else:
            cpus = 0
            for res in rest.split(":"):
                key, _, val = res.partition("=")
                if key == "ncpus":
                    cpus = int(val)
        out[name] = out.get(name, 0) + cpus
    return tuple(out.items())


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
    part = (queue,)
    states: dict[Any, frozenset[str]] = {}
    for name, node in nodes.items():  # hot: thousands of vnodes per poll
        try:
            cpus = node["resources_available"]["ncpus"]
            if type(cpus) is not int:
                cpus = int(cpus)
        except (KeyError, TypeError, ValueError):
            cpus = _vnode_cpus(name, node)
        if cpus <= 0:
            continue  # the natural node of a mom with vnodes carries no CPUs
        word = node.get("state", "")
        if type(word) is not str:
            word = str(word)
        mapped = states.get(word)
        if mapped is None:
            mapped = states[word] = node_states_of(word)
        out.append(SlurmNode(str(name), cpus, mapped, part))
    return out


def _vnode_cpus(name: str, node: Any) -> int:
    """A vnode's ``resources_available.ncpus`` (0 when absent), or the error naming it."""
    try:
        return int(node.get("resources_available", {}).get("ncpus", 0))
    except (TypeError, ValueError, AttributeError):
        raise SlurmStateError(f"pbsnodes: vnode {name}: resources_available.ncpus "
                              "is not a number") from None


@lru_cache(maxsize=256)
def node_states_of(state: str) -> frozenset[str]:
    """A vnode's ``state`` (``"job-busy"``, ``"offline,job-busy"``) as Slurm's words."""
    words = str(state).replace(",", " ").split()
    return frozenset(NODE_STATES.get(w, w.upper()) for w in words)


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
    n = len(vals)
    letters = [v["job_state"] for v in vals]
    res = [v.get("Resource_List") or {} for v in vals]
    state = Labels.of(letters, str)
    holding = np.flatnonzero(state.where(lambda x: bool(x) and x in "RESU")).tolist()
    start = np.zeros(n, dtype=np.int64)
    start[holding] = pbs_times([vals[k].get("stime") for k in holding], "stime")
    a_job: list[int] = []
    a_node: list[str] = []
    a_cpus: list[int] = []
    for row in holding:
        for name, cpus in _exec_vnode(str(vals[row].get("exec_vnode") or "")):
            a_job.append(row)
            a_node.append(name)
            a_cpus.append(cpus)
    walltime = _durations([r.get("walltime") for r in res])
    return JobTable(
        job_id=job_numbers(list(jobs)),
        state=_relabel(state, lambda x: JOB_STATES.get(x, "PENDING")),
        partition=Labels.of([v.get("queue", "") for v in vals], str),
        user=Labels.of([v.get("Job_Owner", "") for v in vals],
                       lambda o: str(o).split("@", 1)[0]),
        submit=pbs_times([v.get("qtime") or v.get("ctime") for v in vals], "qtime"),
        time_limit=walltime,
        cpus=np.array([r.get("ncpus", 1) for r in res], dtype=np.int64).reshape(n),
        start=start, end=np.zeros(n, dtype=np.int64),
        reason=_relabel(state, lambda x: USER_HOLD if x == "Q" else f"PBS state {x}"),
        priority=np.array([v.get("Priority", 0) for v in vals], dtype=np.int64).reshape(n),
        required_nodes=Labels(np.zeros(n, dtype=np.int64), ("",)),
        alloc_job=np.array(a_job, dtype=np.int64), alloc_node=tuple(a_node),
        alloc_cpus=np.array(a_cpus, dtype=np.int64))


def _relabel(column: Labels, change: Callable[[str], str]) -> Labels:
    """``column`` with each distinct value changed (values that become equal merge)."""
    new = [change(x) for x in column.labels]
    labels = tuple(dict.fromkeys(new))
    to = np.array([labels.index(x) for x in new] or [0], dtype=np.int64)
    return Labels(to[column.codes], labels)


def job_numbers(ids: list[str]) -> IntArray:
    """:func:`job_number` of every id, as an array (read in one pass when every id is
    ``NUMBER.SERVER``)."""
    joined = " ".join(ids)
    server = ids[0][ids[0].find("."):] if ids and "." in ids[0] else ""
    for text in (joined.replace(server, "") if server else joined,
                 _SERVER_PART.sub("", joined)):
        digits = text.replace(" ", "")
        if digits.isascii() and digits.isdigit():
            out = np.fromstring(text, dtype=np.int64, sep=" ")  # digits and spaces only
            if len(out) == len(ids):
                return out
    return np.array([job_number(k) for k in ids], dtype=np.int64).reshape(len(ids))


_SERVER_PART = re.compile(r"\.[^ ]*")


def _durations(values: list[Any]) -> IntArray:
    """:func:`duration` of every ``Resource_List.walltime`` (-1 when absent): ``HH:MM:SS``
    column-wise when all are, else each distinct value converted once."""
    n = len(values)
    if n and set(map(type, values)) == {str} and set(map(len, values)) == {8}:
        with contextlib.suppress(UnicodeEncodeError):
            b = np.frombuffer("".join(values).encode("ascii"), dtype=np.uint8).reshape(n, 8)
            d = b[:, (0, 1, 3, 4, 6, 7)].astype(np.int64) - 48
            if ((d >= 0) & (d <= 9)).all() and (b[:, 2] == 58).all() and (b[:, 5] == 58).all():
                return (d[:, 0] * 10 + d[:, 1]) * 3600 + (d[:, 2] * 10 + d[:, 3]) * 60 \
                    + d[:, 4] * 10 + d[:, 5]
    try:
        seen = {v: duration(v, "Resource_List.walltime") for v in dict.fromkeys(values)}
    except TypeError:  # an unhashable value: one by one (names it)
        return np.array([duration(v, "Resource_List.walltime") for v in values],
                        dtype=np.int64).reshape(n)
    return np.fromiter(map(seen.__getitem__, values), dtype=np.int64, count=n)


#: ``%a %b %e %H:%M:%S %Y`` (``"Mon Dec  7 20:33:51 2026"``): where each part sits.
_DIGIT_AT = (9, 11, 12, 14, 15, 17, 18, 20, 21, 22, 23)
_PUNCT_AT = {3: 32, 7: 32, 10: 32, 13: 58, 16: 58, 19: 32}
_MONTH_KEYS = np.array(sorted(m.encode()[0] << 16 | m.encode()[1] << 8 | m.encode()[2]
                              for m in _MONTHS), dtype=np.int64)
_MONTH_OF_KEY = np.array([_MONTHS[bytes([k >> 16, (k >> 8) & 255, k & 255]).decode()]
                          for k in _MONTH_KEYS.tolist()], dtype=np.int64)


def pbs_times(values: list[Any], what: str) -> IntArray:
    """:func:`pbs_time` of every value, as an array: the fixed-width time stamps ``qstat``
    writes are cut up column-wise (local hours converted once each); anything else goes
    through :func:`pbs_time` one by one."""
    n = len(values)
    if n and set(map(type, values)) == {str} and set(map(len, values)) == {24}:
        try:
            return _stamps(np.frombuffer("".join(values).encode("ascii"), dtype=np.uint8
                                         ).reshape(n, 24))
        except (UnicodeEncodeError, ValueError):
            pass  # not the usual shape: one by one, which names a faulty value
    return np.array([pbs_time(v, what) for v in values], dtype=np.int64).reshape(n)


def _stamps(b: npt.NDArray[np.uint8]) -> IntArray:
    """Unix times of ``n`` × 24 ASCII ``%a %b %e %H:%M:%S %Y`` stamps (ValueError when one
    is not)."""
    d = b[:, :_DIGIT_AT[-1] + 1].astype(np.int32) - 48
    digits = d[:, _DIGIT_AT]
    tens_day = np.where(b[:, 8] == 32, 0, d[:, 8])
    if not (((digits >= 0) & (digits <= 9)).all() and ((tens_day >= 0) & (tens_day <= 3)).all()
            and all((b[:, k] == c).all() for k, c in _PUNCT_AT.items())):
        raise ValueError("not a qstat time stamp")
    key = (b[:, 4].astype(np.int64) << 16) | (b[:, 5].astype(np.int64) << 8) | b[:, 6]
    at = np.searchsorted(_MONTH_KEYS, key).clip(0, len(_MONTH_KEYS) - 1)
    if not (_MONTH_KEYS[at] == key).all():
        raise ValueError("not a month")
    year = ((d[:, 20] * 10 + d[:, 21]) * 10 + d[:, 22]) * 10 + d[:, 23]
    hour_key = (((year.astype(np.int64) * 16 + _MONTH_OF_KEY[at]) * 32
                 + tens_day * 10 + d[:, 9]) * 32 + d[:, 11] * 10 + d[:, 12])
    hours, inverse = np.unique(hour_key, return_inverse=True)
    base = np.array([_hour_start(h >> 14, (h >> 10) & 15, (h >> 5) & 31, h & 31)
                     for h in hours.tolist()], dtype=np.int64)
    return base[inverse.reshape(-1)] + ((d[:, 14] * 10 + d[:, 15]) * 60 + d[:, 17] * 10
                                        + d[:, 18])


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
