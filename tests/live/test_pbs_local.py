"""The local OpenPBS of tools/pbs-local: daemons in their own network namespace, vnodes
free, only namespace addresses, a second cluster started and stopped by pid."""

from __future__ import annotations

import contextlib
import json
import subprocess
from pathlib import Path

from dispatchlab.live.pbs_local import ADDRESS, LocalPbs
from tests.live.pbs_jobs import start_or_skip


def _comms(pids: list[int]) -> set[str]:
    out = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            out.add(Path(f"/proc/{pid}/comm").read_text().strip())
    return out


def test_daemons_run_in_the_namespace_with_free_vnodes(pbs_cluster: LocalPbs) -> None:
    names = _comms(pbs_cluster.pids())
    assert {"pbs_server.bin", "pbs_comm", "pbs_mom", "postgres"} <= names, names
    out = subprocess.run(pbs_cluster.wrap(["pbsnodes", "-av", "-F", "json"]),
                         capture_output=True, text=True, check=True)
    nodes = json.loads(out.stdout)["nodes"]
    assert {n: v["resources_available"]["ncpus"] for n, v in nodes.items()
            if n.startswith("vnode")} == {f"vnode{k}": 2 for k in range(1, 5)}
    addrs = subprocess.run(["ip", "netns", "exec", pbs_cluster.netns, "ip", "-o", "addr"],
                           capture_output=True, text=True, check=True).stdout
    assert f"{ADDRESS}/32" in addrs and "127.0.0.1/8" in addrs
    assert len([line for line in addrs.splitlines() if " inet " in line]) == 2


def test_a_second_cluster_starts_beside_and_stops_by_pid(pbs_cluster: LocalPbs) -> None:
    other = start_or_skip(vnodes=2, cpus=1, netns=f"{pbs_cluster.netns}b")
    pids = other.pids()
    assert pids and not set(pids) & set(pbs_cluster.pids())
    other.stop()
    assert not _comms(pids) & {"pbs_server.bin", "pbs_comm", "pbs_mom"}
    assert other.netns not in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                             text=True).stdout.split()
    assert pbs_cluster.pids()  # the session's cluster is untouched
