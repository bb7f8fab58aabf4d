"""The live cycle against a real OpenPBS (tools/pbs-local's cluster: 4 vnodes of 2 CPUs,
scheduling off): queued jobs started with qrun -H where easy or hcp3 says, never over a
vnode's CPUs, each once; an adapter killed and restarted; an offline vnode; and the
server's accounting log read back and simulated again."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dispatchlab.live.adapter import JsonLog, LiveAdapter
from dispatchlab.live.pbs_client import PbsClient
from dispatchlab.live.pbs_events import HOOK, PbsEvents
from dispatchlab.live.pbs_local import LocalPbs
from dispatchlab.live.predict import ShadowPredictor
from dispatchlab.platform.platform import Platform
from dispatchlab.simulation import simulate
from dispatchlab.workload.pbs_accounting import load_pbs
from tests.live.pbs_jobs import (
    accounting_files,
    all_finished,
    logged_starts,
    qstat,
    starts_and_peak,
    submit,
    wait_for,
)

SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.fixture
def cluster(pbs_cluster: LocalPbs) -> Iterator[LocalPbs]:
    """The session's PBS with no job left queued or running, every vnode online."""
    _drain(pbs_cluster)
    yield pbs_cluster
    _drain(pbs_cluster)


def _drain(cluster: LocalPbs) -> None:
    live = [j for j, s in qstat(cluster).items() if s not in ("F", "X")]
    if live:
        subprocess.run(cluster.wrap(["qdel", "-W", "force", *map(str, live)]),
                       capture_output=True)
        wait_for(lambda: all_finished(cluster, live), 30, "jobs deleted")
    for name in cluster.vnode_names():
        _node_state(cluster, name, "free")


def _node_state(cluster: LocalPbs, vnode: str, state: str) -> None:
    """Take a vnode offline or back (qmgr: pbsnodes -o names hosts, not vnodes)."""
    cluster.qmgr(f"set node {vnode} state = {state}")


def _client(cluster: LocalPbs) -> PbsClient:
    return PbsClient(queue="workq", prefix=cluster.prefix())


def _adapter(cluster: LocalPbs, spec: str) -> tuple[LiveAdapter, io.StringIO]:
    log = io.StringIO()
    return LiveAdapter(_client(cluster), "workq", spec, log=JsonLog(log)), log


def _mine(starts: dict[int, int], jobs: list[int]) -> dict[int, int]:
    return {j: starts.get(j, 0) for j in jobs}


@pytest.mark.parametrize("spec", ["easy", "hcp3"])
def test_jobs_start_where_the_dispatcher_says_once_never_oversubscribed(
        cluster: LocalPbs, spec: str) -> None:
    jobs = [submit(cluster, cpus, secs) for cpus, secs in
            ((2, 3), (3, 2), (1, 4), (4, 2), (2, 2), (1, 1), (5, 2))]
    adapter, log = _adapter(cluster, spec)
    adapter.run(poll=0.3, duration=90, stop=lambda: all_finished(cluster, jobs))
    assert all_finished(cluster, jobs), log.getvalue()[-2000:]
    starts, peak = starts_and_peak(cluster)
    assert _mine(starts, jobs) == {j: 1 for j in jobs}
    assert max(peak.values()) <= 2, peak  # 2 CPUs per vnode
    started = {int(k): v for c in adapter.cycles for k, v in c.started.items()}
    assert sorted(started) == sorted(jobs)
    assert not [c.refused for c in adapter.cycles if c.refused]


def test_a_start_on_a_busy_vnode_is_refused_not_sent(cluster: LocalPbs) -> None:
    first, second = submit(cluster, 2, 5), submit(cluster, 1, 5)
    client = _client(cluster)
    client.read()
    client.start(first, ["vnode1"], [2])
    with pytest.raises(Exception, match="start refused: vnode1 has 0 free CPU"):
        client.start(second, ["vnode1"], [1])  # qrun -H itself would run it there
    client.read()  # the server's own view agrees: vnode1 full
    assert qstat(cluster)[second] == "Q"
    assert client.free["vnode1"] == 0


def test_adapter_killed_and_restarted_loses_and_duplicates_nothing(cluster: LocalPbs) -> None:
    jobs = [submit(cluster, cpus, 3) for cpus in (2, 2, 2, 2, 1, 1, 2, 2, 1, 1)]
    cmd = cluster.wrap([sys.executable, "-m", "dispatchlab.cli.main", "live", "pbs",
                        "--partition", "workq", "--dispatcher", "easy", "--poll", "0.3"])
    env = {**os.environ, "PYTHONPATH": SRC}
    first = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: any(s != "Q" for j, s in qstat(cluster).items() if j in jobs), 60,
                 "a first start")
    finally:
        first.kill()  # SIGKILL: no clean-up at all
        first.wait()
    assert any(s == "Q" for j, s in qstat(cluster).items() if j in jobs)  # left to do
    second = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: all_finished(cluster, jobs), 90, "every job finished")
    finally:
        second.send_signal(signal.SIGINT)
        _, err = second.communicate(timeout=30)
    err = first.stderr.read() + err if first.stderr is not None else err
    starts, peak = starts_and_peak(cluster)
    assert _mine(starts, jobs) == {j: 1 for j in jobs}
    assert max(peak.values()) <= 2, peak
    # no job started by both adapters (one qrun'ed just before the SIGKILL may lack its
    # log line: PBS's run_count above is the truth)
    assert set(_mine(logged_starts(err), jobs).values()) <= {0, 1}


def test_offline_vnode_gets_no_new_job_and_its_running_job_ends(cluster: LocalPbs) -> None:
    adapter, _ = _adapter(cluster, "easy")
    busy = submit(cluster, 2, 4)
    adapter.cycle()
    (where,) = adapter.cycles[-1].started[busy]
    _node_state(cluster, where, "offline")
    jobs = [submit(cluster, 2, 2) for _ in range(4)]
    cyc = adapter.cycle()
    assert len(cyc.started) == 3 and where not in {n for v in cyc.started.values() for n in v}
    assert cyc.waiting == 4 and [qstat(cluster)[j] for j in jobs].count("Q") == 1
    wait_for(lambda: all_finished(cluster, [busy]), 60, "the offline vnode's job")
    _node_state(cluster, where, "free")
    adapter.run(poll=0.3, duration=60, stop=lambda: all_finished(cluster, jobs))
    starts, peak = starts_and_peak(cluster)
    assert _mine(starts, [busy, *jobs]) == {j: 1 for j in [busy, *jobs]}
    assert max(peak.values()) <= 2


def test_the_servers_accounting_log_is_read_back_and_simulated(cluster: LocalPbs) -> None:
    jobs = [submit(cluster, cpus, 2) for cpus in (2, 3, 1, 2)]
    adapter, _ = _adapter(cluster, "easy")
    adapter.run(poll=0.3, duration=60, stop=lambda: all_finished(cluster, jobs))
    time.sleep(0.5)
    (log,) = accounting_files(cluster)[-1:]
    wl = load_pbs(log)
    assert set(jobs) <= set(wl.job_id.tolist())
    mine = [k for k, j in enumerate(wl.job_id.tolist()) if j in jobs]
    assert sorted(wl.units[mine].tolist()) == [1, 2, 2, 3]
    res = simulate(wl, Platform.homogeneous(4, {"cores": 2}), "easy")
    assert res.summary["jobs"] == wl.n_jobs
    assert json.dumps(res.summary)  # a plain, complete summary


def test_the_server_hook_wakes_the_adapter_and_is_removed(cluster: LocalPbs) -> None:
    events = PbsEvents(cluster.prefix())
    try:
        assert events.install() is None
        t0 = time.monotonic()
        job = submit(cluster, 1, 3)  # its end comes after the runjob event is read
        assert events.wait(10), "no event from the queuejob hook"
        client = _client(cluster)
        client.read()
        client.start(job, ["vnode2"], [1])
        assert events.wait(10)  # runjob, then jobobit
        wait_for(lambda: all_finished(cluster, [job]), 30, "the job's end")
        assert events.wait(10) and time.monotonic() - t0 < 30
    finally:
        events.close()
    hooks = subprocess.run(cluster.wrap(["qmgr", "-c", "list hook"]), capture_output=True,
                           text=True).stdout
    assert HOOK not in hooks


def test_dry_run_and_predictions_change_nothing(cluster: LocalPbs, tmp_path: Path) -> None:
    jobs = [submit(cluster, 4, 5), submit(cluster, 6, 5)]  # 10 CPUs of 8: one must wait
    adapter = LiveAdapter(_client(cluster), "workq", "hcp3", dry_run=True,
                          log=JsonLog(io.StringIO()))
    cyc = adapter.cycle()
    assert len(cyc.started) == 1 and set(cyc.started) <= set(jobs) and cyc.dry_run
    out = tmp_path / "pred.csv"
    ShadowPredictor(_client(cluster), "workq", "easy", estimate="walltime", out=out,
                    log=JsonLog(io.StringIO())).run(poll=0.3, duration=2)
    rows = list(csv.DictReader(out.open()))
    assert {int(r["job_id"]) for r in rows} == set(jobs)
    first = {int(r["job_id"]): float(r["predicted_start"]) for r in rows}
    assert first[jobs[1]] >= first[jobs[0]] + 60  # after the first one's walltime
    assert [qstat(cluster)[j] for j in jobs] == ["Q", "Q"]


def test_a_server_restart_mid_run_is_survived(cluster: LocalPbs) -> None:
    jobs = [submit(cluster, 2, 3) for _ in range(8)]
    cmd = cluster.wrap([sys.executable, "-m", "dispatchlab.cli.main", "live", "pbs",
                        "--partition", "workq", "--dispatcher", "easy", "--poll", "0.3"])
    adapter = subprocess.Popen(cmd, env={**os.environ, "PYTHONPATH": SRC},
                               stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: any(s != "Q" for j, s in qstat(cluster).items() if j in jobs), 60,
                 "a first start")
        cluster.stop_server()
        time.sleep(2)  # polls fail meanwhile
        cluster.start_server()
        wait_for(lambda: all_finished(cluster, jobs), 120, "every job finished")
    finally:
        adapter.send_signal(signal.SIGINT)
        _, err = adapter.communicate(timeout=30)
    starts, peak = starts_and_peak(cluster)
    assert _mine(starts, jobs) == {j: 1 for j in jobs}
    assert max(peak.values()) <= 2, peak
    # a qrun whose answer the stopping server never sent is logged as refused, though the
    # job ran (once, as run_count says): never a second start
    assert set(_mine(logged_starts(err), jobs).values()) <= {0, 1}
    unanswered = [j for j, n in _mine(logged_starts(err), jobs).items() if n == 0]
    assert all(f'"job": {j}, ' in err and "qrun" in err for j in unanswered), err[-3000:]
    assert '"event": "read_failed"' in err
