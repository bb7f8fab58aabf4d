"""The local Slurm cluster and the local OpenPBS the live-mode tests run against (skipped
when Slurm or the OpenPBS build is absent)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dispatchlab.live.local_cluster import LocalCluster
from dispatchlab.live.pbs_local import LocalPbs
from tests.live.pbs_jobs import start_or_skip as start_pbs_or_skip
from tests.live.slurm_jobs import start_or_skip

HERE = Path(__file__).parent
#: the session's clusters, and the modules that start clusters of their own
CLUSTER_FIXTURES = {"slurm_cluster", "pbs_cluster"}
OWN_CLUSTERS = {"test_faults.py", "test_pbs_local.py", "test_local_cluster.py"}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests against a real Slurm or OpenPBS start daemons and wait on them (3-20 s each):
    they run with the slow tests (``make test-slow``, which CI runs too), all on one test
    worker (``--dist loadgroup``), so a parallel run starts each session cluster once and
    never two clusters at the same moment."""
    for item in items:
        if item.path.parent != HERE:
            continue
        uses = CLUSTER_FIXTURES & set(getattr(item, "fixturenames", ()))
        if uses or item.path.name in OWN_CLUSTERS:
            item.add_marker(pytest.mark.slow)
            item.add_marker(pytest.mark.xdist_group("live-clusters"))


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
