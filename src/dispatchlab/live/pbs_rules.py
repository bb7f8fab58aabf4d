"""OpenPBS's queues and reservations (and an operator's queue rules) as the engine's queue
rules and reservations, so a live dispatcher on PBS decides under the rules the server has.

Read from ``qmgr -c "list queue @default"`` (every queue; ``qstat -Qf -F json`` gives the
same, but ``qstat`` sleeps 200 ms when the same user ran one within the same second, as
the job read just did) and ``pbs_rstat -f`` (every reservation; neither has JSON output).
What the driven queue maps to (a :class:`QueueConfig` of the twin):

- ``started = False`` (``qstop``): a stop from now on, so no job of it starts (``enabled``
  only gates submissions and is not a start rule);
- ``resources_max.walltime`` → ``max_walltime``, ``resources_max.ncpus`` → ``max_units``
  (a unit is one CPU): a queued job over a limit (one set after it was queued) is rejected
  by the engine with the reason, which the adapter reports, and never started;
- ``max_run`` (``[o:PBS_ALL=N]``) or the older ``max_running``: the queue is stopped for the
  cycle when N of its jobs run (and :class:`~dispatchlab.live.pbs_client.PbsClient`
  refuses a start beyond N);
- ``Priority`` → ``priority``;
- an operator's rules for the same queue name (a platform file's ``[queues.NAME]``, e.g.
  ``eurora-pbs``): start windows (in the machine's time zone), node sets (the vnodes named),
  ``max_nodes``, ``max_total`` of CPUs (``cores``; the twin has no other resource) and the
  tighter of each limit.

A confirmed reservation (confirmed, running, degraded, …, with ``resv_nodes``) becomes an
engine reservation of its vnodes (whole vnodes: a reservation of part of a vnode's CPUs
withholds all of it) for its window, owning its queue (``R<n>``): no job of another queue
gets its vnodes if its wall-time would run into the window. An unconfirmed one holds
nothing. Not mapped: ``resources_min``, per-user/group run limits (``[u:…]``, ``[g:…]``),
``max_queued`` (submission limits, PBS's own), and routing queues. The adapter drives one
queue: jobs queued in a reservation's queue are left to whoever drives that queue.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from dispatchlab.live.pbs_state import duration, exec_vnode, pbs_time
from dispatchlab.live.slurm_records import SlurmStateError
from dispatchlab.live.slurm_state import Snapshot
from dispatchlab.live.twin import UNLIMITED_S, Twin
from dispatchlab.platform.queues import QueueConfig
from dispatchlab.platform.reservations import Reservation
from dispatchlab.workload.workload import Queue

#: Reservation states in which the server holds the reservation's vnodes for it.
HOLDING = frozenset({"RESV_CONFIRMED", "RESV_WAIT", "RESV_TIME_TO_RUN", "RESV_RUNNING",
                     "RESV_DEGRADED", "RESV_BEING_ALTERED", "RESV_IN_CONFLICT"})
#: The twin's queue of the jobs already running outside any reservation (placed, never
#: judged against a queue's limits again).
RUNNING_QUEUE = "(running)"


@dataclass(frozen=True)
class PbsQueue:
    """One queue of ``qstat -Qf`` (limits in s / CPUs, ``None`` when unset)."""

    name: str
    started: bool = True
    enabled: bool = True
    priority: int = 0
    max_walltime: int | None = None
    max_ncpus: int | None = None
    max_run: int | None = None


@dataclass(frozen=True)
class PbsReservation:
    """One reservation of ``pbs_rstat -f`` (Unix times; ``nodes``: vnode → CPUs)."""

    rid: str
    queue: str
    state: str
    start: int
    end: int
    nodes: tuple[tuple[str, int], ...] = ()

    @property
    def holds(self) -> bool:
        """True when the server holds its vnodes (confirmed, with vnodes)."""
        return self.state in HOLDING and bool(self.nodes)

    def covers(self, t0: int, t1: int) -> bool:
        """True when its window meets ``[t0, t1)``."""
        return self.start < t1 and t0 < self.end


@dataclass(frozen=True)
class PbsRules:
    """The server's queues and reservations, and an operator's queue rules (by name)."""

    queues: Mapping[str, PbsQueue] = field(default_factory=dict)
    reservations: tuple[PbsReservation, ...] = ()
    operator: Mapping[str, QueueConfig] = field(default_factory=dict)
    timezone: str | None = None

    def mark(self) -> tuple[Any, ...]:
        """What a cycle depends on here (a change = an event)."""
        return (tuple(sorted(self.queues.items())), self.reservations)


_RUN_LIMIT = re.compile(r"\[o:PBS_ALL=(\d+)\]")


def parse_queues(doc: Mapping[str, Any]) -> dict[str, PbsQueue]:
    """The queues of ``qstat -Qf -F json``."""
    queues = doc.get("Queue") or {}
    if not isinstance(queues, Mapping):
        raise SlurmStateError("qstat -Q -F json: 'Queue' is not an object")
    return {str(name): _queue(str(name), q) for name, q in queues.items()}


def parse_qmgr_queues(text: str) -> dict[str, PbsQueue]:
    """The queues of ``qmgr -c "list queue @default"`` (blocks opened by ``Queue NAME``,
    then ``key = value`` lines; ``resources_max.walltime`` nests as in the JSON)."""
    doc: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("Queue "):
            current = doc.setdefault(line[6:].strip(), {})
        elif " = " in line and current is not None:
            key, _, value = line.strip().partition(" = ")
            head, dot, sub = key.partition(".")
            if dot:
                current.setdefault(head, {})[sub] = value.strip()
            else:
                current[key] = value.strip()
        elif line.strip():
            raise SlurmStateError(f"qmgr list queue: line {number}: not 'Queue NAME' or "
                                  f"'key = value': {line.strip()[:60]!r}")
    return parse_queues({"Queue": doc})


def _queue(name: str, q: Any) -> PbsQueue:
    if not isinstance(q, Mapping):
        raise SlurmStateError(f"qstat -Q: queue {name} is not a JSON object")
    top = q.get("resources_max") or {}
    try:
        run = _RUN_LIMIT.search(str(q.get("max_run", "")))
        max_run = int(run.group(1)) if run else None
        if q.get("max_running") is not None:
            old = int(q["max_running"])
            max_run = old if max_run is None else min(max_run, old)
        ncpus = top.get("ncpus")
        wall = duration(top.get("walltime"), f"queue {name}: resources_max.walltime")
        return PbsQueue(name, started=_true(q.get("started", "True")),
                        enabled=_true(q.get("enabled", "True")),
                        priority=int(q.get("Priority", 0)),
                        max_walltime=wall if wall >= 0 else None,
                        max_ncpus=None if ncpus is None else int(ncpus), max_run=max_run)
    except (TypeError, ValueError, AttributeError) as err:
        raise SlurmStateError(f"qstat -Q: queue {name}: {err}") from None


def _true(value: Any) -> bool:
    return str(value).strip().lower() in ("true", "1", "t", "y", "yes")


def parse_rstat(text: str) -> tuple[PbsReservation, ...]:
    """The reservations of ``pbs_rstat -f`` (blocks opened by ``Resv ID: …``, then
    ``key = value`` lines)."""
    blocks: list[tuple[str, dict[str, str]]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("Resv ID:"):
            blocks.append((line.split(":", 1)[1].strip(), {}))
        elif " = " in line and blocks:
            key, _, value = line.partition(" = ")
            blocks[-1][1][key.strip()] = value.strip()
        elif line.strip() and not blocks:
            raise SlurmStateError(f"pbs_rstat -f: line {number}: not 'Resv ID: …' or "
                                  f"'key = value': {line.strip()[:60]!r}")
    return tuple(_reservation(rid, attrs) for rid, attrs in blocks)


def _reservation(rid: str, attrs: Mapping[str, str]) -> PbsReservation:
    try:
        start = pbs_time(attrs.get("reserve_start"), "reserve_start")
        end = pbs_time(attrs.get("reserve_end"), "reserve_end")
        nodes = tuple(exec_vnode(attrs.get("resv_nodes", "")))
    except SlurmStateError as err:
        raise SlurmStateError(f"pbs_rstat: reservation {rid}: "
                              f"{str(err).removeprefix('qstat: ')}") from None
    except ValueError as err:
        raise SlurmStateError(f"pbs_rstat: reservation {rid}: resv_nodes: {err}") from None
    return PbsReservation(rid, attrs.get("queue", rid.split(".", 1)[0]),
                          attrs.get("reserve_state", ""), start, end, nodes)


def local_zone() -> str | None:
    """This machine's time zone name (``TZ``, else /etc/localtime's zoneinfo target), for
    an operator's start windows."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz and "/" in tz and not tz.startswith("/"):
        return tz
    try:
        target = str(Path("/etc/localtime").resolve())
    except OSError:
        return None
    return target.split("zoneinfo/", 1)[1] if "zoneinfo/" in target else None


# ---- the twin under the rules ---------------------------------------------------------------


def queue_config(rules: PbsRules, partition: str, running: int, now: int
                 ) -> tuple[QueueConfig | None, str]:
    """The engine's config of the driven queue at ``now`` (twin seconds) with ``running``
    of its jobs running, and why it starts nothing now ("" when it may)."""
    q = rules.queues.get(partition)
    op = rules.operator.get(partition)
    if q is None and op is None:
        return None, ""
    q = q or PbsQueue(partition)
    why = ""
    if not q.started:
        why = f"queue {partition} is stopped (started = False)"
    elif q.max_run is not None and running >= q.max_run:
        why = f"queue {partition} runs {running} job(s), its max_run is {q.max_run}"
    stops = ((now, now + UNLIMITED_S),) if why else ()
    cfg = QueueConfig(partition, priority=q.priority, max_walltime=q.max_walltime,
                      max_units=q.max_ncpus, stopped=stops)
    if op is not None:
        cfg = replace(op, name=partition, priority=q.priority or op.priority,
                      max_walltime=_tighter(q.max_walltime, op.max_walltime),
                      max_units=_tighter(q.max_ncpus, op.max_units),
                      stopped=tuple(op.stopped) + stops)
    return cfg, why


def _tighter(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


def constrain(twin: Twin, snap: Snapshot, partition: str, rules: PbsRules) -> Twin:
    """``twin`` with the driven queue's rules and the reservations holding its vnodes
    (unchanged when nothing applies). Jobs already running keep their vnodes: where one
    runs into a reservation's window on a reservation vnode, that vnode is left out of the
    reservation (the engine would refuse the running job), as the server's own scheduler
    would never have placed it so."""
    wl = twin.workload
    jobs = snap.jobs
    pos = {name: k for k, name in enumerate(twin.platform.node_names)}
    # each placed job's PBS queue (blockers: none)
    placed_ids = [int(wl.job_id[p.job]) for p in twin.placed]
    queue_of = dict(zip(jobs.job_id.tolist(), jobs.partition.strings(), strict=True)) \
        if placed_ids else {}
    running = sum(1 for j in placed_ids if queue_of.get(j) == partition and j > 0)
    cfg, _ = queue_config(rules, partition, running, twin.now)
    if cfg is not None:  # the twin knows CPUs only, and this machine's vnodes
        known = set(twin.platform.resources)
        mine = tuple(n for n in cfg.nodes if n in pos)
        cfg = replace(cfg, max_total={k: v for k, v in cfg.max_total.items() if k in known},
                      nodes=mine or cfg.nodes)
    kept = _kept_reservations(rules, twin, pos)
    names = [partition, RUNNING_QUEUE]
    codes = np.zeros(wl.n_jobs, dtype=np.int64)
    node_names = twin.platform.node_names
    placed = [(p, {node_names[int(k)] for k in p.nodes}, queue_of.get(jid, ""))
              for p, jid in zip(twin.placed, placed_ids, strict=True)]
    changed = True
    while changed:  # until no running job needs a reservation vnode given back
        changed = False
        for p, here, queue in placed:
            t0, t1 = p.start, p.start + int(wl.walltime[p.job])
            own = next((k for k in kept if k.queue == queue), None)
            if own is not None and here <= own.nodes and own.begin <= t0 and t1 <= own.end:
                if queue not in names:
                    names.append(queue)
                codes[p.job] = names.index(queue)
                continue
            codes[p.job] = 1  # RUNNING_QUEUE: it keeps its vnodes
            for k in kept:
                if k.begin < t1 and t0 < k.end and k.nodes & here:
                    k.nodes -= here
                    changed = True
    reservations = [Reservation(k.rid, tuple(sorted(k.nodes, key=pos.__getitem__)), k.begin,
                                k.end - k.begin, queue=k.queue) for k in kept if k.nodes]
    if not reservations and not _binding(cfg):
        return twin
    platform = twin.platform.with_rules(queues={partition: cfg} if cfg else {},
                                        reservations=reservations)
    tz = rules.timezone if cfg is not None and cfg.windows else None
    wl = replace(wl, queues=tuple(Queue(n) for n in names), queue=codes, timezone=tz)
    return replace(twin, workload=wl, platform=platform)


@dataclass
class _Kept:
    """A reservation going into the twin (twin seconds; ``nodes`` shrink as running jobs
    keep theirs)."""

    rid: str
    queue: str
    begin: int
    end: int
    nodes: set[str]


def _kept_reservations(rules: PbsRules, twin: Twin, pos: Mapping[str, int]) -> list[_Kept]:
    """The reservations holding vnodes of the twin, not over; a vnode two of them share
    at once stays with the first."""
    out: list[_Kept] = []
    for r in rules.reservations:
        begin, end = max(r.start - twin.origin, 0), r.end - twin.origin
        if not r.holds or end <= twin.now:
            continue  # unconfirmed, or over (the server removes it soon)
        nodes = {n for n, _ in r.nodes if n in pos}
        nodes -= {n for k in out if k.begin < end and begin < k.end for n in k.nodes}
        out.append(_Kept(r.rid, r.queue, begin, end, nodes))
    return out


def _binding(cfg: QueueConfig | None) -> bool:
    """True when ``cfg`` restricts starts (a limit, a stop, a window, a node set)."""
    return cfg is not None and bool(
        cfg.has_time_rules or cfg.nodes or cfg.max_units is not None
        or cfg.max_nodes is not None or cfg.max_walltime is not None or cfg.max_total)


def held_vnodes(rules: PbsRules, queue: str, t0: int, t1: int) -> dict[str, str]:
    """Vnodes a job of ``queue`` running over ``[t0, t1)`` (Unix s) may not use: vnode →
    the reservation holding it."""
    return {n: r.rid for r in rules.reservations if r.holds and r.queue != queue
            and r.covers(t0, t1) for n, _ in r.nodes}

