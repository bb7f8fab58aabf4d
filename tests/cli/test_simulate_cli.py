"""The ``dispatchlab simulate`` command: outputs, JSON summary, errors and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from dispatchlab.cli.main import app
from tests.conftest import shared_trace

runner = CliRunner()

REQUIRED_KEYS = {"jobs", "mean_wait", "max_wait", "mean_slowdown", "mean_bounded_slowdown",
                 "makespan", "utilization", "killed", "sim_seconds", "dispatch_time_mean_ms"}


def test_simulate_writes_results_and_json(tmp_path: Path) -> None:
    trace = shared_trace("KTH-SP2-1996-2.1-cln.swf.gz")
    out = tmp_path / "run"
    result = runner.invoke(app, ["simulate", "-w", str(trace), "-p", "nodes=100,cores=1",
                                 "-d", "fifo", "--limit", "500", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary.keys() >= REQUIRED_KEYS
    assert summary["jobs"] == 500
    for name in ("jobs.csv", "jobs.parquet", "timeseries.parquet", "summary.json"):
        assert (out / name).stat().st_size > 0
    doc = json.loads((out / "summary.json").read_text())
    assert doc["config"]["dispatcher"]["name"] == "fifo"
    assert doc["config"]["platform"]["nodes"] == 100
    assert "numpy" in doc["versions"]
    jobs = pd.read_parquet(out / "jobs.parquet")
    assert len(jobs) == 500
    from_csv = pd.read_csv(out / "jobs.csv")
    for col in ("job_id", "submit", "start", "end", "wait", "units"):
        assert (from_csv[col].to_numpy() == jobs[col].to_numpy()).all(), col


def test_simulate_human_summary_uses_header_platform() -> None:
    trace = shared_trace("KTH-SP2-1996-2.1-cln.swf.gz")
    result = runner.invoke(app, ["simulate", "-w", str(trace), "--limit", "300"])
    assert result.exit_code == 0, result.output
    assert "nodes=100,cores=1" in result.stdout
    assert "mean bounded slowdown" in result.stdout


def test_bad_inputs_exit_nonzero_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.swf"
    bad.write_text("1 0 0 10 1 -1 -1 1 10\n")
    cases = [
        (["simulate", "-w", str(bad), "-p", "nodes=1,cores=1"], "bad.swf:1"),
        (["simulate", "-w", str(tmp_path / "missing.swf"), "-p", "nodes=1,cores=1"],
         "file not found"),
        (["simulate", "-w", str(shared_trace("KTH-SP2-1996-2.1-cln.swf.gz")), "-p",
          "nodes=0,cores=4", "--limit", "10"], "nodes"),
        (["simulate", "-w", str(shared_trace("KTH-SP2-1996-2.1-cln.swf.gz")), "-p",
          "nodes=2,cores=x", "--limit", "10"], "cores"),
        (["simulate", "-w", str(shared_trace("KTH-SP2-1996-2.1-cln.swf.gz")), "-p",
          "nodes=2,cores=4", "--limit", "200"], "unit(s)"),
        (["simulate", "-w", str(shared_trace("KTH-SP2-1996-2.1-cln.swf.gz")), "-d",
          "no-such-dispatcher", "--limit", "10"], "unknown dispatcher"),
    ]
    for args, needle in cases:
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert needle in result.output, (args, result.output)


def test_same_seed_same_results(tmp_path: Path) -> None:
    trace = shared_trace("lublin-256-a.swf")
    outs = []
    for k in range(2):
        out = tmp_path / f"r{k}"
        result = runner.invoke(app, ["simulate", "-w", str(trace), "-p", "nodes=256,cores=1",
                                     "--limit", "2000", "--seed", "7", "--out", str(out)])
        assert result.exit_code == 0, result.output
        outs.append(pd.read_parquet(out / "jobs.parquet"))
    assert outs[0].equals(outs[1])


def test_simulate_cooling_profit(tmp_path: Path) -> None:
    trace = tmp_path / "two.csv"
    trace.write_text("job_id,submit,runtime,walltime,units,req_cores,power\n"
                     "1,0,3600,3600,1,4,100\n2,600,7200,7200,1,4,200\n")
    out = tmp_path / "run"
    args = ["simulate", "-w", str(trace), "-p", "nodes=2,cores=4", "-d", "fifo",
            "--cooling", "hybrid:scaled", "--temperature",
            "gen:temperature:season=winter,days=1", "--prices", "expensive", "--json"]
    result = runner.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    profit = json.loads(result.stdout)["profit"]
    assert profit["core_hours"] == 12.0 and profit["prices"]["core_hour"] == 0.10
    assert 1.0 < profit["mean_pue"] < 1.01  # hybrid in winter
    cooling = pd.read_parquet(out / "cooling.parquet")
    assert list(cooling.columns) == ["time", "it_power_w", "cooling_w", "temperature_c", "pue"]
    bad = runner.invoke(app, [*args[:9], "--cooling", "water"])
    assert bad.exit_code == 2 and "cooling 'water'" in bad.output


def test_skip_and_limit_slice_a_detected_csv_table(tmp_path: Path) -> None:
    """--skip/--limit apply to a CSV workload whose format is detected, not only to SWF."""
    trace = tmp_path / "four.csv"
    trace.write_text("job_id,submit,runtime,walltime,units,req_cores\n"
                     "1,0,100,100,1,1\n2,10,100,100,1,1\n3,20,100,100,1,1\n4,30,100,100,1,1\n")
    args = ["simulate", "-w", str(trace), "-p", "nodes=1,cores=1", "-d", "fifo", "--json"]
    whole = json.loads(runner.invoke(app, args).stdout)
    part = runner.invoke(app, [*args, "--skip", "1", "--limit", "2"])
    assert part.exit_code == 0, part.output
    assert (whole["jobs"], json.loads(part.stdout)["jobs"]) == (4, 2)
