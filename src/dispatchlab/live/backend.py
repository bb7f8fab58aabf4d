"""What the live cycle needs from a batch system: one read, one start, one hold.

:class:`~dispatchlab.live.adapter.LiveAdapter` is the one cycle (read, convert, decide,
apply); a backend turns a system's state into a :class:`~dispatchlab.live.slurm_state.Snapshot`
and a dispatcher's start into the system's command: Slurm
(:class:`~dispatchlab.live.slurm_client.SlurmClient`: pin and release a held job) and OpenPBS
(:class:`~dispatchlab.live.pbs_client.PbsClient`: ``qrun -H`` with the chosen vnodes and CPUs).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from dispatchlab.errors import DispatchlabError
from dispatchlab.live.slurm_state import Snapshot, no_gc


class LiveCommandError(DispatchlabError):
    """A command of the batch system failed (its command line and message)."""


class LiveClient(Protocol):
    """A batch system the live cycle drives (``seconds``: wall time spent per command)."""

    seconds: dict[str, float]

    def read(self) -> Snapshot:
        """The state now (every job and node)."""

    def start(self, job: int, nodes: Sequence[str], counts: Sequence[int]) -> None:
        """Start waiting job ``job`` with ``counts[k]`` CPUs on node ``nodes[k]``."""

    def user_hold(self, job: int) -> None:
        """Take a waiting job (back) under the adapter's control."""


@dataclass
class CommandRunner:
    """Runs a system's client commands with ``env`` (e.g. ``SLURM_CONF``, ``PBS_CONF_FILE``),
    after ``prefix`` (e.g. ``ip netns exec NS env …``), ``timeout`` s each; ``seconds``
    accumulates the wall time of each command (by its first two words). A failure raises
    :attr:`error` with the command line and its last message line."""

    env: Mapping[str, str] | None = None
    timeout: float = 30.0
    seconds: dict[str, float] = field(default_factory=dict)
    prefix: Sequence[str] = ()
    error: ClassVar[type[LiveCommandError]] = LiveCommandError

    def _run(self, args: Sequence[str]) -> str:
        t0 = time.perf_counter()
        try:
            out = subprocess.run([*self.prefix, *args], env=dict(self.env) if self.env else None,
                                 capture_output=True, text=True, timeout=self.timeout)
        except (OSError, subprocess.TimeoutExpired) as err:
            raise self.error(f"{' '.join(args)}: {err}") from None
        finally:
            key = " ".join(args[:2])
            self.seconds[key] = self.seconds.get(key, 0.0) + time.perf_counter() - t0
        if out.returncode != 0:
            msg = (out.stderr or out.stdout).strip().splitlines()
            raise self.error(f"{' '.join(args)} failed ({out.returncode}): "
                             f"{msg[-1] if msg else 'no message'}")
        return out.stdout

    def _json(self, args: Sequence[str]) -> dict[str, Any]:
        """The JSON object a command prints."""
        text = self._run(args)
        try:
            with no_gc():
                doc = json.loads(text)
        except json.JSONDecodeError as err:
            raise self.error(f"{' '.join(args)}: not JSON ({err})") from None
        if not isinstance(doc, dict):
            raise self.error(f"{' '.join(args)}: not a JSON object")
        return doc
