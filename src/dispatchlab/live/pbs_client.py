"""The OpenPBS commands the adapter runs: four to read, one to act.

Reading: ``qstat -f -F json`` (every job not finished), ``pbsnodes -av -F json`` (every
vnode), ``qmgr -c "list queue @default"`` (every queue) and ``pbs_rstat -f`` (every
reservation): the queues' limits and the reservations become the twin's rules
(:mod:`dispatchlab.live.pbs_rules`). ``qstat`` sleeps 200 ms when the same user ran a
``qstat`` earlier in the same wall-clock second (OpenPBS's ``delay_query``), so it runs
once per read. Acting: ``qrun -H "(vnodeA:ncpus=a)+(vnodeB:ncpus=b)"`` starts a queued job
exactly there. ``qrun -H`` does not check that the vnodes have those CPUs free (two jobs
were run on one 2-CPU vnode over its capacity), so :meth:`PbsClient.start` checks it
first against the last read, less what it started since: a start that would oversubscribe
a vnode, use a vnode a confirmed reservation holds during the job's wall-time, start a job
of a stopped queue or exceed the queue's ``max_run`` is refused, never sent. The
exec_vnode follows the job's select chunks (one vnode per chunk, or several vnodes of one
host in a chunk): the mom fails a job given fewer chunks than it selected. Nothing here
cancels, signals or changes a running job.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np

from dispatchlab.errors import ConfigError
from dispatchlab.live.backend import CommandRunner, LiveCommandError
from dispatchlab.live.pbs_rules import (
    PbsRules,
    constrain,
    held_vnodes,
    parse_qmgr_queues,
    parse_rstat,
    queue_config,
)
from dispatchlab.live.pbs_state import (
    exec_vnode_text,
    free_cpus,
    job_number,
    pbs_snapshot,
    select_chunks,
)
from dispatchlab.live.slurm_state import Snapshot, no_gc
from dispatchlab.live.twin import UNLIMITED_S, Twin
from dispatchlab.platform.queues import QueueConfig


class PbsCommandError(LiveCommandError):
    """A PBS command failed, or a start was refused before it was sent."""


@dataclass
class PbsClient(CommandRunner):
    """Runs PBS's client commands for queue ``queue`` (with ``env`` and after ``prefix``,
    e.g. ``ip netns exec NS env …`` to reach a server in a namespace; ``timeout`` per
    command in seconds; ``seconds``: the time of each command)."""

    queue: str = "workq"
    last: Snapshot | None = field(default=None, repr=False)
    free: dict[str, int] = field(default_factory=dict)  # CPUs still free since the last read
    selects: dict[int, str] = field(default_factory=dict)  # queued job → its select
    hosts: dict[str, str] = field(default_factory=dict)  # vnode → its host
    operator: Mapping[str, QueueConfig] = field(default_factory=dict)  # an operator's rules
    timezone: str | None = None  # of the operator's start windows
    rules: PbsRules = field(default_factory=PbsRules)  # the last read's queues, reservations
    started: int = 0  # jobs of the queue started since the last read
    clock: Callable[[], float] = time.time  # the time now (Unix s)
    error: ClassVar[type[LiveCommandError]] = PbsCommandError

    def read(self) -> Snapshot:
        """The state now: every job not finished, every vnode, queue and reservation."""
        now = int(self.clock())
        with no_gc():
            jobs = self._json(["qstat", "-f", "-F", "json"])
            nodes = self._json(["pbsnodes", "-av", "-F", "json"])
            queues = self._run(["qmgr", "-c", "list queue @default"])
            resv = self._run(["pbs_rstat", "-f"])
            snap = pbs_snapshot(now, jobs, nodes, self.queue)
            self.rules = PbsRules(parse_qmgr_queues(queues), parse_rstat(resv),
                                  self.operator, self.timezone)
            self.selects = {job_number(k): str(v.get("Resource_List", {}).get("select", ""))
                            for k, v in (jobs.get("Jobs") or {}).items()
                            if v.get("job_state") == "Q"}
            self.hosts = {str(k): str(v.get("resources_available", {}).get("host", ""))
                          for k, v in (nodes.get("nodes") or {}).items()}
            del jobs, nodes
        self.last = snap
        self.free = free_cpus(snap)
        self.started = 0
        return snap

    def constrain(self, twin: Twin, snap: Snapshot) -> Twin:
        """``twin`` under the last read's queue rules and reservations."""
        return constrain(twin, snap, self.queue, self.rules)

    def mark(self) -> tuple[object, ...]:
        """The queues and reservations of the last read (a change wakes a cycle)."""
        return self.rules.mark()

    def start(self, job: int, nodes: Sequence[str], counts: Sequence[int]) -> None:
        """``qrun -H`` queued job ``job`` with ``counts[k]`` CPUs on vnode ``nodes[k]``,
        unless a vnode lacks them, a reservation holds one, or the queue may not start it
        (then refused, nothing sent)."""
        if self.last is None:
            raise PbsCommandError(f"job {job}: no state read yet, start refused")
        short = [f"{n} has {self.free.get(n, 0)} free CPU(s), not {c}"
                 for n, c in zip(nodes, counts, strict=True) if self.free.get(n, 0) < c]
        if short:
            raise PbsCommandError(f"job {job}: start refused: {'; '.join(short)}")
        why = self._queue_refusal(job, nodes)
        if why:
            raise PbsCommandError(f"job {job}: start refused: {why}")
        chunks = select_chunks(self.selects[job]) if self.selects.get(job) else None
        try:
            where = exec_vnode_text(list(zip(nodes, counts, strict=True)), chunks,
                                    self.hosts)
        except ValueError as err:
            raise PbsCommandError(f"job {job}: start refused: {err}") from None
        self._run(["qrun", "-H", where, str(job)])
        self.started += 1
        for n, c in zip(nodes, counts, strict=True):
            self.free[n] -= c

    def _queue_refusal(self, job: int, nodes: Sequence[str]) -> str:
        """Why the queue's rules or a reservation forbid this start now ("" if none)."""
        snap = self.last
        assert snap is not None
        jobs = snap.jobs
        running = int((jobs.running & jobs.in_partition(self.queue)).sum()) + self.started
        _, why = queue_config(self.rules, self.queue, running, 0)
        if why:
            return why
        row = np.flatnonzero(jobs.job_id == job)
        limit = int(jobs.time_limit[row[0]]) if len(row) else -1
        now = int(self.clock())
        held = held_vnodes(self.rules, self.queue, now,
                           now + (limit if limit > 0 else UNLIMITED_S))
        taken = [f"{n} is held by reservation {held[n]}" for n in nodes if n in held]
        return "; ".join(taken)

    def user_hold(self, job: int) -> None:
        """PBS jobs wait for the adapter without a hold (``scheduling`` is False)."""
        raise PbsCommandError(f"job {job}: no hold on PBS: queued jobs wait for the adapter")


#: The client commands the PBS backend runs.
PBS_PROGRAMS = ("qstat", "pbsnodes", "qmgr", "pbs_rstat", "qrun")


def check_pbs_setup(env: Mapping[str, str] | None = None) -> None:
    """Raise :class:`ConfigError` naming what is missing: a PBS command on ``PATH``, or the
    configuration (``PBS_CONF_FILE``, else /etc/pbs.conf)."""
    env = dict(os.environ if env is None else env)
    for prog in PBS_PROGRAMS:
        if shutil.which(prog, path=env.get("PATH", "")) is None:
            raise ConfigError(f"the PBS command '{prog}' is not on PATH (OpenPBS's bin folder; "
                              "tools/pbs-local start -- … runs a command with it)", field="system")
    conf = Path(env.get("PBS_CONF_FILE") or "/etc/pbs.conf")
    if not conf.is_file():
        raise ConfigError(f"PBS configuration {conf} not found (set PBS_CONF_FILE)",
                          field="system")
