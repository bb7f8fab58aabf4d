"""Synthetic ``squeue --json`` / ``sinfo --json`` documents (Slurm 22.05 shape), and the same
state as OpenPBS's JSON, seeded: for tests and for the cost-of-a-cycle benchmark on
machines without a large cluster."""

from __future__ import annotations

import time
from typing import Any

import numpy as np


def _sockets(cpus: int) -> dict[str, Any]:
    return {str(k): {"cores": {"0": "allocated"}} for k in range(cpus)}


def synthetic_docs(nodes: int, running: int, pending: int, *, cpus: int = 32,
                   partition: str = "main", now: int = 1_800_000_000, seed: int = 0,
                   held: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(squeue, sinfo)``: ``nodes`` nodes of ``cpus`` CPUs, ``running`` jobs packed on
    them (whole nodes, one to four each), ``pending`` jobs of 1 … 4 nodes' worth of CPUs,
    user-held when ``held``."""
    rng = np.random.default_rng(seed)
    names = [f"c{k + 1}" for k in range(nodes)]
    node_docs = [{"name": n, "state": "idle", "state_flags": [], "cpus": cpus,
                  "partitions": [partition]} for n in names]
    jobs: list[dict[str, Any]] = []
    nxt = 0
    for j in range(running):
        width = int(rng.integers(1, 5))
        if nxt + width > nodes:
            break
        mine = names[nxt:nxt + width]
        nxt += width
        start = now - int(rng.integers(1, 3600))
        limit = int(rng.integers(60, 1440))
        jobs.append({"job_id": j + 1, "job_state": "RUNNING", "partition": partition,
                     "user_name": f"u{int(rng.integers(0, 200))}",
                     "submit_time": start - int(rng.integers(0, 600)), "time_limit": limit,
                     "cpus": cpus * width, "start_time": start, "end_time": start + 60 * limit,
                     "job_resources": {"allocated_nodes": [
                         {"nodename": n, "sockets": _sockets(cpus)} for n in mine]},
                     "state_reason": "None", "priority": 1000, "required_nodes": ""})
    for node in node_docs[:nxt]:
        node["state"] = "allocated"
    for j in range(pending):
        jobs.append({"job_id": running + j + 1, "job_state": "PENDING",
                     "partition": partition, "user_name": f"u{int(rng.integers(0, 200))}",
                     "submit_time": now - int(rng.integers(0, 86400)),
                     "time_limit": int(rng.integers(10, 1440)),
                     "cpus": int(rng.integers(1, 4 * cpus + 1)), "start_time": 0,
                     "end_time": 0, "job_resources": None,
                     "state_reason": "JobHeldUser" if held else "Priority",
                     "priority": 0 if held else 1000, "required_nodes": ""})
    return {"jobs": jobs}, {"nodes": node_docs}


def synthetic_pbs_docs(nodes: int, running: int, pending: int, *, cpus: int = 32,
                       queue: str = "main", now: int = 1_800_000_000, seed: int = 0
                       ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(qstat, pbsnodes)``: the state of :func:`synthetic_docs` in the shape of OpenPBS's
    ``qstat -f -F json`` and ``pbsnodes -av -F json`` (one vnode per node, queued jobs as
    the adapter's, running ones with their ``exec_vnode``)."""
    squeue, sinfo = synthetic_docs(nodes, running, pending, cpus=cpus, partition=queue,
                                   now=now, seed=seed)

    def stamp(t: int) -> str:
        return time.strftime("%a %b %e %H:%M:%S %Y", time.localtime(t))

    jobs: dict[str, Any] = {}
    for j in squeue["jobs"]:
        run = j["job_state"] == "RUNNING"
        limit = int(j["time_limit"])
        doc: dict[str, Any] = {
            "Job_Owner": f"{j['user_name']}@host", "job_state": "R" if run else "Q",
            "queue": queue, "qtime": stamp(j["submit_time"]), "Priority": 0,
            "Resource_List": {"ncpus": j["cpus"], "select": f"{j['cpus']}:ncpus=1",
                              "walltime": f"{limit // 60:02d}:{limit % 60:02d}:00"}}
        if run:
            doc["stime"] = stamp(j["start_time"])
            doc["exec_vnode"] = "+".join(f"({a['nodename']}:ncpus={cpus})"
                                         for a in j["job_resources"]["allocated_nodes"])
        jobs[f"{j['job_id']}.server"] = doc
    vnodes = {n["name"]: {"state": "job-busy" if n["state"] == "allocated" else "free",
                          "resources_available": {"ncpus": n["cpus"], "host": n["name"]}}
              for n in sinfo["nodes"]}
    return {"Jobs": jobs}, {"nodes": vnodes}
