"""The adapter against a real Slurm: held jobs started where the dispatcher says, restarts,
drained nodes, refused decisions, dry runs."""

from __future__ import annotations

import io
import json
import subprocess
import time
from collections.abc import Iterator

import pytest

from dispatchlab.errors import ConfigError
from dispatchlab.live.adapter import JsonLog, SlurmAdapter, live_dispatcher
from dispatchlab.live.local_cluster import LocalCluster
from dispatchlab.live.slurm_client import SlurmClient
from dispatchlab.live.slurm_state import Snapshot
from dispatchlab.live.twin import build_twin
from tests.live.slurm_jobs import clean, jobs, nodes_of, scontrol, submit, wait_for


@pytest.fixture
def cluster(slurm_cluster: LocalCluster) -> Iterator[LocalCluster]:
    clean(slurm_cluster)
    yield slurm_cluster
    clean(slurm_cluster)


def _adapter(cluster: LocalCluster, **kw: object) -> tuple[SlurmAdapter, io.StringIO]:
    log = io.StringIO()
    return SlurmAdapter(SlurmClient(cluster.env()), "main", "easy", log=JsonLog(log),
                        **kw), log  # type: ignore[arg-type]


def test_held_job_starts_on_exactly_the_chosen_nodes(cluster: LocalCluster) -> None:
    busy = submit(cluster, 3, 30, hold=False)  # Slurm's own: 3 of n1's 4 CPUs
    wait_for(lambda: jobs(cluster)[busy].running)
    mine = submit(cluster, 6, 30)
    adapter, _ = _adapter(cluster)
    snap = adapter.client.read()
    twin = build_twin(snap, "main")
    _, decisions = twin.decide(live_dispatcher("easy"))
    chosen = {twin.slurm_id(d.job): twin.node_names(d.nodes) for d in decisions}
    assert chosen == {mine: ["n1", "n2", "n3"]}  # first fit: n1's free CPU, n2, then n3
    cyc = adapter.cycle(snap)
    assert cyc.started == chosen
    wait_for(lambda: jobs(cluster)[mine].running)
    assert nodes_of(jobs(cluster)[mine]) == chosen[mine]
    assert jobs(cluster)[busy].running  # the adapter never touched Slurm's own job


def test_restart_mid_run_loses_and_duplicates_nothing(cluster: LocalCluster) -> None:
    ids = [submit(cluster, 4, 2) for _ in range(7)]  # 4 fit at once, 3 wait
    first, _ = _adapter(cluster)
    cyc = first.cycle()
    assert len(cyc.started) == 4
    del first  # the adapter dies; the 3 others stay held
    held = [j for j in ids if jobs(cluster)[j].user_held]
    assert len(held) == 3
    second, _ = _adapter(cluster)  # a new process: no state but Slurm's
    second.run(poll=0.2, stop=lambda: all(
        j not in (now := jobs(cluster)) or not (now[j].pending or now[j].running)
        for j in ids), duration=40)
    started = [set(c.started) for c in second.cycles if c.started]
    again = set(cyc.started) & set().union(*started)
    assert not again, f"started twice: {again}"
    assert set(cyc.started) | set().union(*started) == set(ids)
    wait_for(lambda: all(f"JobId={j} " in cluster.jobcomp.read_text() for j in ids))
    lines = [ln for ln in cluster.jobcomp.read_text().splitlines()
             if int(ln.split()[0].split("=")[1]) in ids]
    assert len(lines) == len(ids) and all("JobState=COMPLETED" in ln for ln in lines)


def test_node_drained_during_a_cycle(cluster: LocalCluster) -> None:
    mine = submit(cluster, 4, 30)
    adapter, log = _adapter(cluster, release_timeout=1.0)
    snap = adapter.client.read()  # n1 … n4 idle when read
    scontrol(cluster, "update", "NodeName=n1", "State=DRAIN", "Reason=test")
    cyc = adapter.cycle(snap)  # decided on the stale state: n1
    assert cyc.started == {mine: ["n1"]}
    time.sleep(1.2)
    assert jobs(cluster)[mine].pending  # Slurm cannot start it on a drained node
    back = adapter.cycle()
    assert back.taken_back == [mine]  # held again, decided afresh on the new state
    assert back.started == {mine: ["n2"]}
    wait_for(lambda: jobs(cluster)[mine].running)
    assert nodes_of(jobs(cluster)[mine]) == ["n2"]
    assert "taken_back" in log.getvalue()


def test_refused_decision_is_logged_and_the_cycle_goes_on(cluster: LocalCluster) -> None:
    gone = submit(cluster, 2, 30)
    kept = submit(cluster, 2, 30)
    adapter, log = _adapter(cluster)
    snap = adapter.client.read()
    subprocess.run(["scancel", str(gone)], env=cluster.env(), check=True)
    cyc = adapter.cycle(snap)
    assert gone in cyc.refused and kept in cyc.started
    wait_for(lambda: jobs(cluster)[kept].running)
    events = [json.loads(line) for line in log.getvalue().splitlines()]
    assert any(e["event"] == "refused" and e["job"] == gone for e in events)


def test_dry_run_changes_nothing(cluster: LocalCluster) -> None:
    mine = submit(cluster, 2, 30)
    adapter, log = _adapter(cluster, dry_run=True)
    cyc = adapter.cycle()
    assert cyc.started == {mine: ["n1"]} and cyc.dry_run
    time.sleep(1.5)
    job = jobs(cluster)[mine]
    assert job.user_held and job.required_nodes == ""
    assert "would_start" in log.getvalue()


class _CountingClient(SlurmClient):
    """The real client, counting its reads."""

    reads = 0

    def read(self) -> Snapshot:
        self.reads += 1
        return super().read()


def test_dry_run_cycles_respect_the_poll_interval(cluster: LocalCluster) -> None:
    """A would-be start changes nothing in Slurm: no immediate second look (it was a
    squeue + sinfo every few ms, ~300 cycles in 5 s at --poll 0.5)."""
    mine = submit(cluster, 2, 30)
    client = _CountingClient(cluster.env())
    adapter = SlurmAdapter(client, "main", "easy", dry_run=True, log=JsonLog(io.StringIO()))
    adapter.run(poll=0.5, duration=3)
    assert client.reads <= 3 / 0.5 + 2
    assert [c.started for c in adapter.cycles] == [{mine: ["n1"]}]


def test_a_dispatcher_that_reads_the_future_is_refused() -> None:
    with pytest.raises(ConfigError, match="reads the future"):
        live_dispatcher("select=easy,estimate=real")
