"""The live mode when Slurm misbehaves: a controller that stops and comes back, one that
stays away, a configuration or a program that is missing (docs/live.md, "When Slurm
misbehaves"). The controller tests run on their own small cluster with a 2 s
``MessageTimeout``, so that a client command gives up on a stopped controller in about a
second instead of ten."""

from __future__ import annotations

import io
import json
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dispatchlab.cli.main import app
from dispatchlab.errors import DispatchlabError
from dispatchlab.live.adapter import JsonLog, SlurmAdapter
from dispatchlab.live.local_cluster import LocalCluster, missing_programs
from dispatchlab.live.outage import SlurmUnreachable
from dispatchlab.live.predict import ShadowPredictor
from dispatchlab.live.replay import scaled_workload, submit_replay
from dispatchlab.live.slurm_client import SlurmClient, SlurmCommandError
from dispatchlab.workload.workload import Workload
from tests.live.slurm_jobs import clean, jobs, start_or_skip, submit, wait_for

runner = CliRunner()


@pytest.fixture(scope="module")
def faulty() -> Iterator[LocalCluster]:
    """2 nodes × 4 CPUs whose controller the tests stop and restart."""
    cluster = start_or_skip(nodes=2, cpus=4, partition="main", message_timeout=2)
    yield cluster
    cluster.stop()


@pytest.fixture
def down(faulty: LocalCluster) -> Iterator[LocalCluster]:
    """The cluster with its controller stopped (started again afterwards)."""
    faulty.stop_controller()
    yield faulty
    faulty.start_controller()
    faulty.wait_idle()


def _events(log: io.StringIO) -> list[str]:
    return [json.loads(line)["event"] for line in log.getvalue().splitlines()]


def test_a_stopped_controller_is_a_failed_read_not_an_empty_cluster(down: LocalCluster,
                                                                     tmp_path: Path) -> None:
    """squeue and sinfo exit 0 with an ``errors`` list: the read fails; a run that never
    reads stops with "controller unreachable" after its bound, or at its end (the command:
exit code 3)."""
    with pytest.raises(SlurmCommandError, match="squeue --json --all reports"):
        SlurmClient(down.env()).read()
    log = io.StringIO()
    adapter = SlurmAdapter(SlurmClient(down.env()), "main", "easy", log=JsonLog(log),
                           outage_limit=2.0)
    adapter.outage.loud_after = 2
    t0 = time.monotonic()
    with pytest.raises(SlurmUnreachable, match="controller unreachable"):
        adapter.run(poll=0.2, duration=30)
    assert time.monotonic() - t0 < 15 and not adapter.cycles
    assert "controller_unreachable" in _events(log)
    shadow = ShadowPredictor(SlurmClient(down.env()), "main", "easy", estimate="walltime",
                             out=tmp_path / "p.csv", log=JsonLog(io.StringIO()))
    with pytest.raises(SlurmUnreachable, match="stopped while unable to read Slurm"):
        shadow.run(poll=0.2, duration=1)
    assert not (tmp_path / "p.csv").exists()
    res = runner.invoke(app, ["live", "slurm", "--partition", "main", "--dry-run",
                              "--duration", "2"], env={"SLURM_CONF": str(down.conf)})
    assert res.exit_code == 3 and "controller unreachable" in res.output


def test_controller_restart_keeps_every_job_exactly_once(faulty: LocalCluster) -> None:
    """Four held 4-CPU jobs on 8 CPUs; the controller stops once the first two run and
    comes back 5 s later: the adapter says so, starts the other two after, and every
    job runs once."""
    clean(faulty)
    ids = [submit(faulty, 4, 1) for _ in range(4)]
    log = io.StringIO()
    adapter = SlurmAdapter(SlurmClient(faulty.env()), "main", "easy", log=JsonLog(log),
                           outage_limit=60.0)
    adapter.outage.loud_after = 1  # however slowly the failed reads come under load
    done = threading.Event()
    failure: list[BaseException] = []

    def drive() -> None:
        try:
            adapter.run(poll=0.2, duration=60, stop=done.is_set)
        except BaseException as err:  # reported by the test below
            failure.append(err)

    thread = threading.Thread(target=drive)
    thread.start()
    try:
        wait_for(lambda: sum(jobs(faulty)[j].running for j in ids) == 2)
        faulty.stop_controller()
        time.sleep(5)
        faulty.start_controller()
        wait_for(lambda: all(f"JobId={j} " in faulty.jobcomp.read_text() for j in ids), 40)
    finally:
        done.set()
        thread.join(30)
    assert not failure, failure
    started = Counter(j for c in adapter.cycles for j in c.started)
    assert started == {j: 1 for j in ids}
    lines = [ln for ln in faulty.jobcomp.read_text().splitlines()
             if int(ln.split()[0].split("=")[1]) in ids]
    assert len(lines) == len(ids) and all("JobState=COMPLETED" in ln for ln in lines)
    events = _events(log)
    assert events.index("controller_unreachable") < events.index("controller_back")


def test_replay_retries_sbatch_and_names_the_jobs_it_could_not_submit(
        down: LocalCluster) -> None:
    """While the controller is away, sbatch fails: with a 1 s retry bound both jobs are
    reported (not a stop at the first); with the controller back within the bound, every
    job is submitted once."""
    wl = scaled_workload(Workload.from_columns(
        submit=[0, 0, 1], walltime=[60] * 3, runtime=[1] * 3, units=[1] * 3,
        req={"cores": [1] * 3}), 1.0)
    log = io.StringIO()
    lost = submit_replay(wl, down.env(), "main", hold=True, aligned=False, retry_for=1.0,
                         log=JsonLog(log))
    assert lost.slurm_id == {} and sorted(lost.failed) == [1, 2, 3]
    assert "replay_incomplete" in _events(log)
    with pytest.raises(DispatchlabError, match=r"3 trace job\(s\) could not be submitted"):
        lost.check_complete()
    timer = threading.Timer(2.0, down.start_controller)
    timer.start()
    log = io.StringIO()
    try:
        sub = submit_replay(wl, down.env(), "main", hold=True, aligned=False, retry_for=30,
                            log=JsonLog(log))
    finally:
        timer.join()
    assert not sub.failed and len(set(sub.slurm_id.values())) == 3
    assert "submit_retry" in _events(log)
    listed = subprocess.run(["squeue", "-h", "-p", "main", "-o", "%i %j"], env=down.env(),
                            capture_output=True, text=True, check=True).stdout.split()
    names = dict(zip(map(int, listed[::2]), listed[1::2], strict=True))
    assert names == {sub.slurm_id[k]: f"replay-{k}" for k in (1, 2, 3)}  # each once
    clean(down)


# ---- before the first read: a missing program or configuration -------------------------

def _live(env: dict[str, str | None], *more: str) -> tuple[int, str]:
    res = runner.invoke(app, ["live", "slurm", "--partition", "main", "--duration", "3",
                              *more], env=env)
    return res.exit_code, res.output


def test_slurm_not_installed_names_the_missing_program(tmp_path: Path) -> None:
    out = tmp_path / "pred.csv"
    for more in (["--dry-run"], ["--predict", "--out", str(out)]):
        code, text = _live({"PATH": str(tmp_path)}, *more)
        assert code == 2 and "'squeue' command is not installed" in text
        assert len(text.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.skipif(bool(missing_programs()), reason="Slurm's client commands not installed")
def test_missing_configuration_is_named(tmp_path: Path) -> None:
    code, text = _live({"SLURM_CONF": "/nowhere/slurm.conf"}, "--dry-run")
    assert code == 2 and "SLURM_CONF=/nowhere/slurm.conf: no such file" in text
    empty = tmp_path / "slurm.conf"
    empty.write_text("")
    t0 = time.monotonic()
    code, text = _live({"SLURM_CONF": str(empty)}, "--dry-run")
    assert code == 2 and f"Slurm's configuration cannot be read (SLURM_CONF={empty})" in text
    assert time.monotonic() - t0 < 10
    if not Path("/etc/slurm/slurm.conf").exists():  # Debian's default place, none there
        code, text = _live({"SLURM_CONF": None}, "--dry-run")
        assert code == 2 and "no Slurm configuration found (SLURM_CONF not set" in text
