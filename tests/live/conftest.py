"""The local Slurm cluster the live-mode tests run against (skipped when Slurm is absent)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from dispatchlab.live.local_cluster import LocalCluster, missing_programs


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[LocalCluster]:
    """A 4-node, 4-CPU-per-node Slurm on localhost (sched/builtin), for the whole session."""
    missing = missing_programs()
    if missing:
        pytest.skip(f"Slurm not installed ({', '.join(missing)} missing; "
                    ".ci/setup-slurm.sh installs slurmctld slurmd slurm-client munge)")
    if os.geteuid() != 0:
        pytest.skip("the local Slurm cluster runs its daemons as root")
    cluster = LocalCluster(nodes=4, cpus=4, partition="main")
    cluster.start()  # installed but not starting is a failure, not a skip
    yield cluster
    cluster.stop()
