"""Same runs, same results, whichever engine runs them — even when a worker dies mid-run.

Engines: the local process pool (the reference), a Dask LocalCluster started by the test,
and a real ``dask scheduler`` + ``dask worker`` started as separate processes on 127.0.0.1
(the documented way to scale out). Worker deaths are simulated with SIGKILL on a worker
process that is running a task.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dispatchlab.cli.main import app
from dispatchlab.experiments import (
    DaskBackend,
    LocalBackend,
    PlannedRun,
    Progress,
    RunStore,
    parse_experiment,
    plan,
    run_campaign,
)

START_TIMEOUT = 60.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate a process group started by the test; kill it if it lingers."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``dask scheduler`` and ``dask worker`` (2 processes × 1 thread) on 127.0.0.1."""
    from distributed import Client

    logs = tmp_path_factory.mktemp("dask-logs")
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = [sys.executable, "-m", "dask"]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        with open(logs / "scheduler.log", "wb") as log:
            procs.append(
                subprocess.Popen(
                    [
                        *dask,
                        "scheduler",
                        "--host",
                        "127.0.0.1",
                        "--port",
                        str(port),
                        "--no-dashboard",
                        "--no-show",
                    ],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        with open(logs / "worker.log", "wb") as log:
            procs.append(
                subprocess.Popen(
                    [
                        *dask,
                        "worker",
                        address,
                        "--host",
                        "127.0.0.1",
                        "--nworkers",
                        "2",
                        "--nthreads",
                        "1",
                        "--no-dashboard",
                        "--death-timeout",
                        "60",
                        "--memory-limit",
                        "0",
                    ],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        with Client(address, timeout=START_TIMEOUT) as client:
            client.wait_for_workers(2, timeout=START_TIMEOUT)
        yield address
    except Exception:
        for name in ("scheduler.log", "worker.log"):
            path = logs / name
            if path.exists():
                sys.stderr.write(f"--- {name}\n{path.read_text()[-3000:]}\n")
        raise
    finally:
        for proc in reversed(procs):
            stop(proc)


def test_dask_local_cluster_gives_the_pool_results(
    tmp_path: Path,
    runs: list[PlannedRun],
    reference: Path,
    same_results: Callable[[Path, Path], int],
) -> None:
    with DaskBackend(None, workers=2) as eng:
        outcome = run_campaign(runs, RunStore(tmp_path), eng)
    assert outcome.ok and outcome.stored == len(runs)
    assert same_results(reference, tmp_path) == len(runs)
    doc = json.loads(next((tmp_path / "runs").glob("*/run.json")).read_text())
    assert doc["worker"]["backend"] == "dask-local"


@pytest.mark.slow
def test_dask_scheduler_and_workers_give_the_pool_results(
    tmp_path: Path,
    dask_cluster: str,
    grid: dict[str, Any],
    runs: list[PlannedRun],
    reference: Path,
    same_results: Callable[[Path, Path], int],
) -> None:
    exp = tmp_path / "exp.toml"
    wl = grid["workloads"][0]
    exp.write_text(
        f'name = "{grid["name"]}"\nseeds = {grid["seeds"]}\n'
        f"dispatchers = {json.dumps(grid['dispatchers'])}\n"
        f'[[workloads]]\npath = "{wl["path"]}"\nname = "{wl["name"]}"\n'
        f"limit = {wl['limit']}\nwindows = {wl['windows']}\n"
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        [
            "run-experiment",
            str(exp),
            "--out",
            str(out),
            "--backend",
            "dask",
            "--scheduler",
            dask_cluster,
        ],
    )
    assert result.exit_code == 0, result.output
    assert f"{len(runs)} run now" in " ".join(result.output.split())
    assert same_results(reference, out) == len(runs)
    assert (out / "results.parquet").stat().st_size > 0


@pytest.mark.slow
def test_dask_worker_killed_mid_run_loses_and_duplicates_nothing(
    tmp_path: Path,
    dask_cluster: str,
    grid: dict[str, Any],
    same_results: Callable[[Path, Path], int],
    leftovers: Callable[[Path], None],
) -> None:
    # four times the usual grid, and a watcher that kills the first worker it sees running a
    # task: waiting for the first stored result (as this test once did) let warm workers
    # finish everything first on a loaded machine, leaving no busy worker to kill
    runs = plan(parse_experiment({**grid, "seeds": 4 * grid["seeds"]}))
    reference = tmp_path / "reference"
    with LocalBackend(2) as pool:
        assert run_campaign(runs, RunStore(reference), pool).ok
    tmp_path = tmp_path / "dask"
    killed: list[int] = []
    with DaskBackend(dask_cluster) as eng:
        client = eng.client
        done = threading.Event()

        def kill_a_busy_worker() -> None:
            while not done.is_set():
                busy = [w for w, tasks in client.processing().items() if tasks]
                if busy:
                    pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                    return
                time.sleep(0.005)

        watcher = threading.Thread(target=kill_a_busy_worker, daemon=True)
        watcher.start()
        try:
            outcome = run_campaign(runs, RunStore(tmp_path), eng)
        finally:
            done.set()
            watcher.join(timeout=30)
    assert killed, "no worker was running a task when the first result arrived"
    assert outcome.ok, outcome.failures
    assert outcome.stored + outcome.duplicates == len(runs)
    leftovers(tmp_path)
    assert same_results(reference, tmp_path) == len(runs)


@pytest.mark.slow
def test_pool_worker_killed_mid_run_loses_and_duplicates_nothing(
    tmp_path: Path,
    runs: list[PlannedRun],
    reference: Path,
    same_results: Callable[[Path, Path], int],
    leftovers: Callable[[Path], None],
) -> None:
    killed: list[int] = []

    def kill_a_worker(p: Progress) -> None:
        if killed or p.stored < 1 or p.last is None:
            return
        # the process that produced this result is now busy with the next run
        doc = json.loads((tmp_path / "runs" / p.last.key / "run.json").read_text())
        pid = int(doc["worker"]["pid"])
        assert pid != os.getpid()
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    eng = LocalBackend(2)
    with eng:
        outcome = run_campaign(runs, RunStore(tmp_path), eng, on_progress=kill_a_worker)
    assert killed
    assert eng.resubmitted >= 1, "runs in flight on the broken pool must be run again"
    assert outcome.ok, outcome.failures
    assert outcome.stored == len(runs)
    leftovers(tmp_path)
    assert same_results(reference, tmp_path) == len(runs)
