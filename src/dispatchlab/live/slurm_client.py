"""The Slurm commands the adapter runs: two to read, three to act.

Reading: ``squeue --json --all`` and ``sinfo --json`` (every job and node in one call
each). Acting, on one pending job at a time: ``scontrol update JobId=J NodeList=…`` (pin
it), ``scontrol release J`` (let it start), ``scontrol uhold J`` (take it back under the
adapter's control). There is no command here that cancels, signals or changes a running
job: the adapter cannot do it.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dispatchlab.live.backend import LiveCommandError
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
class SlurmClient:
    """Runs Slurm's client commands with ``env`` (e.g. ``SLURM_CONF``); ``timeout`` per
    command in seconds. ``seconds`` accumulates the wall time spent in each command;
    ``last`` is the last state read (the next read reuses its unchanged allocations)."""

    env: Mapping[str, str] | None = None
    timeout: float = 30.0
    seconds: dict[str, float] = field(default_factory=dict)
    last: Snapshot | None = field(default=None, repr=False)  # the last read (reused parts)

    def _run(self, args: Sequence[str]) -> str:
        t0 = time.perf_counter()
        try:
            out = subprocess.run(list(args), env=dict(self.env) if self.env else None,
                                 capture_output=True, text=True, timeout=self.timeout)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise SlurmCommandError(f"{' '.join(args)}: {err}") from None
        finally:
            key = " ".join(args[:2])
            self.seconds[key] = self.seconds.get(key, 0.0) + time.perf_counter() - t0
        if out.returncode != 0:
            msg = (out.stderr or out.stdout).strip().splitlines()
            raise SlurmCommandError(f"{' '.join(args)} failed ({out.returncode}): "
                                    f"{msg[-1] if msg else 'no message'}")
        return out.stdout

    def _json(self, args: Sequence[str]) -> dict[str, Any]:
        text = self._run(args)
        try:
            with no_gc():
                doc = json.loads(text)
        except json.JSONDecodeError as err:
            raise SlurmCommandError(f"{' '.join(args)}: not JSON ({err})") from None
        if not isinstance(doc, dict):
            raise SlurmCommandError(f"{' '.join(args)}: not a JSON object")
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
