"""The OpenPBS commands the adapter runs: two to read, one to act.

Reading: ``qstat -f -F json`` (every job not finished) and ``pbsnodes -av -F json`` (every
vnode). Acting: ``qrun -H "(vnodeA:ncpus=a)+(vnodeB:ncpus=b)"`` starts a queued job exactly
there. ``qrun -H`` does not check that the vnodes have those CPUs free (two jobs were run on
one 2-CPU vnode over its capacity), so :meth:`PbsClient.start` checks it first against the
last read, less what it started since: a start that would oversubscribe a vnode is refused,
never sent. The exec_vnode follows the job's select chunks (one vnode per chunk, or several
vnodes of one host in a chunk): the mom fails a job given fewer chunks than it selected.
Nothing here cancels, signals or changes a running job.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from dispatchlab.errors import ConfigError
from dispatchlab.live.backend import CommandRunner, LiveCommandError
from dispatchlab.live.pbs_state import (
    exec_vnode_text,
    free_cpus,
    job_number,
    pbs_snapshot,
    select_chunks,
)
from dispatchlab.live.slurm_state import Snapshot, no_gc


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
    chunks: dict[int, list[int]] = field(default_factory=dict)  # queued job → select chunks
    hosts: dict[str, str] = field(default_factory=dict)  # vnode → its host
    error: ClassVar[type[LiveCommandError]] = PbsCommandError

    def read(self) -> Snapshot:
        """The state now: every job not finished and every vnode."""
        now = int(time.time())
        with no_gc():
            jobs = self._json(["qstat", "-f", "-F", "json"])
            nodes = self._json(["pbsnodes", "-av", "-F", "json"])
            snap = pbs_snapshot(now, jobs, nodes, self.queue)
            self.chunks = {job_number(k): select_chunks(str(v.get("Resource_List", {})
                                                             .get("select", "")))
                           for k, v in (jobs.get("Jobs") or {}).items()
                           if v.get("job_state") == "Q"}
            self.hosts = {str(k): str(v.get("resources_available", {}).get("host", ""))
                          for k, v in (nodes.get("nodes") or {}).items()}
            del jobs, nodes
        self.last = snap
        self.free = free_cpus(snap)
        return snap

    def start(self, job: int, nodes: Sequence[str], counts: Sequence[int]) -> None:
        """``qrun -H`` queued job ``job`` with ``counts[k]`` CPUs on vnode ``nodes[k]``,
        unless a vnode lacks them (then refused, nothing sent)."""
        if self.last is None:
            raise PbsCommandError(f"job {job}: no state read yet, start refused")
        short = [f"{n} has {self.free.get(n, 0)} free CPU(s), not {c}"
                 for n, c in zip(nodes, counts, strict=True) if self.free.get(n, 0) < c]
        if short:
            raise PbsCommandError(f"job {job}: start refused: {'; '.join(short)}")
        try:
            where = exec_vnode_text(list(zip(nodes, counts, strict=True)),
                                    self.chunks.get(job) or None, self.hosts)
        except ValueError as err:
            raise PbsCommandError(f"job {job}: start refused: {err}") from None
        self._run(["qrun", "-H", where, str(job)])
        for n, c in zip(nodes, counts, strict=True):
            self.free[n] -= c

    def user_hold(self, job: int) -> None:
        """PBS jobs wait for the adapter without a hold (``scheduling`` is False)."""
        raise PbsCommandError(f"job {job}: no hold on PBS: queued jobs wait for the adapter")


#: The client commands the PBS backend runs.
PBS_PROGRAMS = ("qstat", "pbsnodes", "qrun")


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
