"""What the live cycle needs from a batch system: one read, one start, one hold.

:class:`~dispatchlab.live.adapter.LiveAdapter` is the one cycle (read, convert, decide,
apply); a backend turns a system's state into a :class:`~dispatchlab.live.slurm_state.Snapshot`
and a dispatcher's start into the system's command: Slurm
(:class:`~dispatchlab.live.slurm_client.SlurmClient`: pin and release a held job) and OpenPBS
(:class:`~dispatchlab.live.pbs_client.PbsClient`: ``qrun -H`` with the chosen vnodes and CPUs).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from dispatchlab.errors import DispatchlabError
from dispatchlab.live.slurm_state import Snapshot


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
