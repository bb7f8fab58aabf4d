"""Small platforms and workloads for the CP dispatcher tests."""

from __future__ import annotations

import numpy as np

from dispatchlab.platform.platform import Platform
from dispatchlab.workload.workload import Workload


def platform(cap: list[list[int]], resources: tuple[str, ...] = ("cores", "gpu", "mic", "mem")
             ) -> Platform:
    """A platform from a nodes × resources capacity table."""
    arr = np.array(cap, dtype=np.int64)
    names = tuple(f"n{i + 1}" for i in range(len(cap)))
    return Platform(resources=resources, capacity=arr, node_names=names, groups={}, name="test")


def thesis_nodes() -> Platform:
    """Thesis Table 4.1: two GPU nodes and two MIC nodes, 16 cores and 16 GB each."""
    return platform([[16, 2, 0, 16384], [16, 2, 0, 16384], [16, 0, 2, 16384], [16, 0, 2, 16384]])


def random_workload(n: int, seed: int, nodes: int = 4, overrun: float = 0.05) -> Workload:
    """Multi-unit, multi-resource jobs that keep a small machine busy."""
    rng = np.random.default_rng(seed)
    submit = np.sort(rng.integers(0, 40 * n, n))
    wall = rng.choice([60, 300, 900, 3600], n)
    run = np.maximum(1, (wall * rng.uniform(0.05, 1.0, n)).astype(int))
    over = rng.random(n) < overrun
    run[over] = wall[over] + 30
    units = rng.integers(1, nodes + 1, n)
    cores = rng.integers(1, 9, n)
    gpu = np.where(rng.random(n) < 0.3, 1, 0)
    mem = rng.integers(1, 4, n) * 1024
    users = [f"u{k}" for k in rng.integers(0, 4, n)]
    apps = [f"a{k}" for k in rng.integers(0, 3, n)]
    queue = ["debug" if w <= 300 else "parallel" for w in wall]
    return Workload.from_columns(
        submit=submit, walltime=wall, runtime=run, units=units,
        req={"cores": cores, "gpu": gpu, "mic": np.zeros(n, int), "mem": mem},
        user=users, app=apps, queue=queue, queues={"debug": 3600, "parallel": 21600})
