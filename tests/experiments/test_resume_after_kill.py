"""An experiment killed mid-way resumes and ends with exactly the results of an
uninterrupted one, re-running only what was not stored."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dispatchlab.experiments import PlannedRun

TIMEOUT = 120.0


def toml_for(grid: dict[str, Any]) -> str:
    wl = grid["workloads"][0]
    return (
        f'name = "{grid["name"]}"\nseeds = {grid["seeds"]}\n'
        f"dispatchers = {json.dumps(grid['dispatchers'])}\n"
        f'[[workloads]]\npath = "{wl["path"]}"\nname = "{wl["name"]}"\n'
        f"limit = {wl['limit']}\nwindows = {wl['windows']}\n"
    )


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "dispatchlab.cli.main", *args]


@pytest.mark.slow
def test_killed_campaign_resumes_to_identical_results(
    tmp_path: Path,
    grid: dict[str, Any],
    runs: list[PlannedRun],
    reference: Path,
    same_results: Callable[[Path, Path], int],
    keys_in: Callable[[Path], set[str]],
    leftovers: Callable[[Path], None],
) -> None:
    exp = tmp_path / "exp.toml"
    exp.write_text(toml_for(grid))
    out = tmp_path / "interrupted"

    # 1. start the campaign as a user would, kill it (and its workers) once a run is stored
    proc = subprocess.Popen(
        cli("run-experiment", str(exp), "--out", str(out), "--workers", "2"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + TIMEOUT
        while not keys_in(out):
            assert proc.poll() is None, proc.communicate()[0].decode()
            assert time.monotonic() < deadline, "no run finished in time"
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    done_before = keys_in(out)
    assert 0 < len(done_before) < len(runs), "the kill must land mid-campaign"

    # 2. run the same command again: it skips what is stored and finishes the rest
    result = subprocess.run(
        cli("run-experiment", str(exp), "--out", str(out), "--workers", "2", "--json"),
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()
    report = json.loads(result.stdout)
    assert report["skipped"] == len(done_before)
    assert report["stored"] == len(runs) - len(done_before)
    assert report["runs"] == len(runs) and not report["failed"]
    leftovers(out)
    for key in done_before:  # finished runs were not rewritten
        assert json.loads((out / "runs" / key / "run.json").read_text())["hash"] == key

    # 3. an uninterrupted campaign gave exactly the same results
    assert same_results(reference, out) == len(runs)
    assert (out / "results.csv").is_file() and (out / "stats_means.csv").is_file()
