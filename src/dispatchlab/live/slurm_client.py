"""The Slurm commands the adapter runs: two to read, three to act.

Reading: ``squeue --json --all`` and ``sinfo --json`` (every job and node in one call
each). Acting, on one pending job at a time: ``scontrol update JobId=J NodeList=…`` (pin
it), ``scontrol release J`` (let it start), ``scontrol uhold J`` (take it back under the
adapter's control). There is no command here that cancels, signals or changes a running
job: the adapter cannot do it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from dispatchlab.live.backend import CommandRunner, LiveCommandError
from dispatchlab.live.slurm_state import Snapshot, no_gc, snapshot


class SlurmCommandError(LiveCommandError):
    """A Slurm command failed (its command line and message)."""


def reported_errors(doc: Mapping[str, Any]) -> list[str]:
    """The ``errors`` a ``--json`` document carries. Slurm 22.05's ``squeue --json`` and
    ``sinfo --json`` exit 0 with an empty job or node list and an ``errors`` entry when
    the controller cannot be reached: such a document is a failed read, not an empty
    cluster."""
    errors = doc.get("errors")
    if not errors:
        return []
    out = []
    for e in errors if isinstance(errors, list) else [errors]:
        if isinstance(e, Mapping):
            text = ": ".join(str(e[k]) for k in ("source", "description", "error") if e.get(k))
            out.append(text or json.dumps(e))
        else:
            out.append(str(e))
    return out


@dataclass
class SlurmClient(CommandRunner):
    """Runs Slurm's client commands with ``env`` (e.g. ``SLURM_CONF``); ``timeout`` per
    command in seconds. ``seconds`` accumulates the wall time spent in each command;
    ``last`` is the last state read (the next read reuses its unchanged allocations)."""

    last: Snapshot | None = field(default=None, repr=False)  # the last read (reused parts)
    error: ClassVar[type[LiveCommandError]] = SlurmCommandError

    def _json(self, args: Sequence[str]) -> dict[str, Any]:
        doc = super()._json(args)
        errors = reported_errors(doc)
        if errors:
            raise SlurmCommandError(f"{' '.join(args)} reports {'; '.join(errors)}")
        return doc

    def read(self) -> Snapshot:
        """The state now: every job (all partitions) and every node."""
        now = int(time.time())
        with no_gc():  # the documents are freed before the collector runs again
            jobs = self._json(["squeue", "--json", "--all"])
            nodes = self._json(["sinfo", "--json"])
            snap = snapshot(now, jobs, nodes, self.last)
            del jobs, nodes
        self.last = snap
        return snap

    def pin_and_release(self, job: int, nodes: Sequence[str]) -> None:
        """Pin a held job to ``nodes`` and release it."""
        self._run(["scontrol", "update", f"JobId={job}", f"NodeList={','.join(nodes)}"])
        self._run(["scontrol", "release", str(job)])

    def start(self, job: int, nodes: Sequence[str], counts: Sequence[int]) -> None:
        """Start a held job on ``nodes`` (Slurm places its CPUs there: ``counts`` unused)."""
        self.pin_and_release(job, nodes)

    def user_hold(self, job: int) -> None:
        """Put a pending job under the adapter's control (a user hold)."""
        self._run(["scontrol", "uhold", str(job)])
