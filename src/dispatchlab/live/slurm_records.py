"""The words of Slurm's JSON: node and job records, states, numbers, and their errors.

Field names are those of Slurm 22.05's ``data_parser`` (Debian 12); later versions wrap
numbers as ``{"set": …, "number": …}`` and states as lists, which :func:`number` and
:func:`node_states` accept too.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from dispatchlab.errors import DispatchlabError
from dispatchlab.workload.slurm_numbers import slurm_number

#: Node states (base or flag) in which a node takes no new job.
UNUSABLE = frozenset({"DOWN", "DRAIN", "DRAINED", "DRAINING", "FAIL", "FAILING",
                      "MAINTENANCE", "NOT_RESPONDING", "POWERED_DOWN", "POWERING_DOWN",
                      "REBOOT_REQUESTED", "FUTURE", "UNKNOWN", "RESERVED", "INVALID_REG",
                      "POWER_DOWN", "POWERING_UP", "REBOOT_ISSUED"})
# (not ``PLANNED``: Slurm 22.05's backfill flags the nodes it plans a pending job on; they
# still take jobs, and the twin of Slurm's scheduler plans them again itself)
#: The hold reasons of a job held by its user (``sbatch --hold``, ``scontrol uhold``).
USER_HOLD = "JobHeldUser"
_INF = float("inf")
#: Job states of a job holding CPUs on its nodes.
RUNNING_STATES = ("RUNNING", "COMPLETING", "SUSPENDED")


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
        return self.state in RUNNING_STATES

    @property
    def user_held(self) -> bool:
        """Held by its user (the adapter's jobs: ``sbatch --hold`` or ``scontrol uhold``)."""
        return self.pending and self.reason == USER_HOLD


def number(value: Any, what: str, unset: int = 0) -> int:
    """An integer field: plain (22.05) or ``{"set", "infinite", "number"}`` (23.02+);
    -1 when Slurm marks it unlimited (``infinite``, ``INFINITE``), ``unset`` when not set
    (null, ``set: false``, ``NO_VAL``)."""
    value = slurm_number(value)
    if type(value) is int:
        return value
    if value is None:
        return unset
    if value == _INF:
        return -1
    try:
        return int(value)
    except (TypeError, ValueError):
        raise SlurmStateError(f"field '{what}': not a number: {value!r}") from None


def node_states(value: Any) -> frozenset[str]:
    """A state as one string (``"idle"``) or a list of flags (``["IDLE", "DRAIN"]``)."""
    if isinstance(value, str):
        return frozenset(v.upper() for v in value.replace("+", " ").split())
    return frozenset(str(v).upper() for v in value or ())
