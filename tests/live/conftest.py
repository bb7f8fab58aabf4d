"""The local Slurm cluster and the local OpenPBS the live-mode tests run against (skipped
when Slurm or the OpenPBS build is absent)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dispatchlab.live.local_cluster import LocalCluster
from dispatchlab.live.pbs_local import LocalPbs
from tests.live.pbs_jobs import start_or_skip as start_pbs_or_skip
from tests.live.slurm_jobs import start_or_skip


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[LocalCluster]:
    """A 4-node, 4-CPU-per-node Slurm on localhost (sched/builtin), for the whole session."""
    cluster = start_or_skip(nodes=4, cpus=4, partition="main")
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def pbs_cluster() -> Iterator[LocalPbs]:
    """A local OpenPBS (server, comm, mom with 4 vnodes of 2 CPUs, no scheduler) in a
    network namespace, for the whole session (skipped without a build)."""
    cluster = start_pbs_or_skip(vnodes=4, cpus=2)
    yield cluster
    cluster.stop()
