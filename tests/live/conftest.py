"""The local Slurm cluster the live-mode tests run against (skipped when Slurm is absent)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dispatchlab.live.local_cluster import LocalCluster
from tests.live.slurm_jobs import start_or_skip


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[LocalCluster]:
    """A 4-node, 4-CPU-per-node Slurm on localhost (sched/builtin), for the whole session."""
    cluster = start_or_skip(nodes=4, cpus=4, partition="main")
    yield cluster
    cluster.stop()
