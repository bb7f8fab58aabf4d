"""Small helpers for tests against the local Slurm: submit, look, wait, clean up."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable

import pytest

from dispatchlab.live.local_cluster import LocalCluster, missing_programs
from dispatchlab.live.slurm_state import SlurmJob, expand_hostlist, parse_squeue


def start_or_skip(**settings: object) -> LocalCluster:
    """A started local cluster; the test is skipped when Slurm is absent or not root."""
    missing = missing_programs()
    if missing:
        pytest.skip(f"Slurm not installed ({', '.join(missing)} missing; "
                    ".ci/setup-slurm.sh installs slurmctld slurmd slurm-client munge)")
    if os.geteuid() != 0:
        pytest.skip("the local Slurm cluster runs its daemons as root")
    # installed but not starting is a failure, not a skip
    return LocalCluster(**settings).start()  # type: ignore[arg-type]


def submit(cluster: LocalCluster, cpus: int, seconds: float, *, hold: bool = True,
           minutes: int = 1) -> int:
    """A ``sleep seconds`` job of ``cpus`` CPUs in partition main; its Slurm id."""
    args = ["sbatch", "--parsable", "-p", "main", "-n", str(cpus), "-t", str(minutes),
            "-o", "/dev/null", "-J", "t"]
    if hold:
        args.append("--hold")
    out = subprocess.run([*args, "--wrap", f"sleep {seconds}"], env=cluster.env(),
                         capture_output=True, text=True, check=True)
    return int(out.stdout.strip().split(";")[0])


def jobs(cluster: LocalCluster) -> dict[int, SlurmJob]:
    out = subprocess.run(["squeue", "--json", "--all"], env=cluster.env(),
                         capture_output=True, text=True, check=True)
    return {j.job_id: j for j in parse_squeue(json.loads(out.stdout))}


def nodes_of(job: SlurmJob) -> list[str]:
    return [name for name, _ in job.alloc]


def scontrol(cluster: LocalCluster, *args: str) -> None:
    subprocess.run(["scontrol", *args], env=cluster.env(), capture_output=True, text=True,
                   check=True)


def wait_for(what: Callable[[], bool], timeout: float = 20.0, step: float = 0.1) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if what():
            return
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout} s")


def clean(cluster: LocalCluster) -> None:
    """Cancel every job, resume every node, wait until the cluster is idle."""
    subprocess.run(["scancel", "--full", "-p", "main"], env=cluster.env(), check=False)
    subprocess.run(["scontrol", "update", f"NodeName=n[1-{cluster.nodes}]", "State=RESUME"],
                   env=cluster.env(), capture_output=True, check=False)
    wait_for(lambda: not any(j.pending or j.running for j in jobs(cluster).values()), 60)
    cluster.wait_idle()


__all__ = ["clean", "expand_hostlist", "jobs", "nodes_of", "scontrol", "start_or_skip",
           "submit", "wait_for"]
