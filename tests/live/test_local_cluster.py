"""The local test cluster: daemons up, nodes idle, a job runs and is logged."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from dispatchlab.live.local_cluster import LocalCluster
from dispatchlab.workload.slurm_jobcomp import load_jobcomp


def test_cluster_has_idle_nodes_and_logs_completed_jobs(slurm_cluster: LocalCluster) -> None:
    env = slurm_cluster.env()
    out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %c"], env=env, capture_output=True,
                         text=True, check=True)
    assert sorted(out.stdout.split("\n")[:-1]) == [f"n{k} 4" for k in range(1, 5)]
    sub = subprocess.run(["sbatch", "--parsable", "-n", "1", "-t", "1", "-o", "/dev/null",
                          "-p", "main", "--wrap", "true"], env=env, capture_output=True,
                         text=True, check=True)
    job = sub.stdout.strip()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if slurm_cluster.jobcomp.exists() and f"JobId={job} " in slurm_cluster.jobcomp.read_text():
            wl = load_jobcomp(slurm_cluster.jobcomp, partition="main")
            assert int(job) in wl.job_id.tolist()
            return
        time.sleep(0.2)
    raise AssertionError(f"job {job} never reached {slurm_cluster.jobcomp}")


def test_cluster_knows_the_pids_of_its_own_daemons(slurm_cluster: LocalCluster) -> None:
    names = {key: Path(f"/proc/{pid}/comm").read_text().strip()
             for key, pid in slurm_cluster.pids.items()}
    assert names == {"munged": "munged", "slurmctld": "slurmctld",
                     **{f"slurmd-n{k}": "slurmd" for k in range(1, 5)}}
