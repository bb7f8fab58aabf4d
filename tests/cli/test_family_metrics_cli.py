"""Issue 29: each family's own metrics and inputs from the command line — goodput over a
metrics window, the malleable paper cost, a job file's window, variation files with
absolute times, and ``compare`` with a power cap and the other scenario options."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from dispatchlab.cli.main import app
from dispatchlab.dispatchers.malleable.cost import run_metrics
from dispatchlab.metrics.variable_capacity import vc_metrics
from dispatchlab.simulation import simulate

runner = CliRunner()
WALK = "gen:capacity-walk:mean=6,range=2,period=1200,until=700000,seed=1"
VC = ["-w", "gen:vc-synthetic:kind=log,jobs=80,machines=8,seed=1", "-p", "nodes=8,cores=24",
      "-d", "ff-aware", "--scenario", WALK]


def _run(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return result.output


def test_goodput_over_a_metrics_window_in_json_and_table() -> None:
    s = json.loads(_run(["simulate", *VC, "--metrics-window", "0,604800", "--json"]))
    res = simulate(VC[1], VC[3], "ff-aware", scenario=WALK)
    expect = vc_metrics(res.recorder, 604800, 0)
    for key in ("goodput", "max_stretch", "aborted_volume", "mean_alive_nodes"):
        assert s[key] == expect[key], key
    assert s["window"] == [0, 604800]
    table = _run(["simulate", *VC, "--metrics-window", "0,604800"])
    assert "goodput over [0, 604,800) s" in table and f"{expect['goodput']:.4f}" in table


def test_the_malleable_cost_is_printed() -> None:
    args = ["simulate", "-w", "gen:mejri:seed=1", "-p", "mejri-10", "-d", "mejri-swarm2",
            "--no-walltime-kill"]
    s = json.loads(_run([*args, "--json"]))
    res = simulate("gen:mejri:seed=1", "mejri-10", "mejri-swarm2", walltime_kill=False)
    expect = run_metrics(res.recorder)
    assert s["malleable"] == expect
    assert f"{expect['cost']:.4f}" in _run(args)


def test_job_file_window_and_variation_file_with_absolute_times(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.txt"
    jobs.write_text("1 100 5000 4\n2 86000 20000 8\n3 86500 3000 2\n4 90000 4000 1\n"
                    "5 100000 1000 8\n6 200000 1000 8\n")
    variation = tmp_path / "var.txt"
    variation.write_text("8\n86000 6\n95000 8\n")
    args = ["simulate", "-w", str(jobs), "--format", "vcjobs", "-p", "nodes=8,cores=8",
            "-d", "ff-aware", "--window-start", "86400", "--window", "86400",
            "--scenario", str(variation), "--json"]
    s = json.loads(_run(args))
    # jobs 2 (carried over), 3, 4, 5; the variation file from t = 86400: 6 alive at the
    # start (its row at 86000), 8 from 95000 (8600 s in)
    assert s["jobs"] == 4 and s["window"] == [0, 86400]
    assert (s["min_alive_nodes"], s["max_alive_nodes"]) == (6, 8)
    expect = (6 * 8600 + 8 * (86400 - 8600)) / 86400
    assert abs(s["mean_alive_nodes"] - expect) < 1e-9
    bad = runner.invoke(app, ["simulate", "-w", "gen:mejri", "-p", "mejri-10", "--window",
                              "10"])
    assert bad.exit_code == 2 and "variable-capacity job file" in bad.output


def test_compare_takes_a_power_cap_and_refuses_what_a_family_lacks(tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    _run(["compare", "-w", "gen:eurora-like:jobs=40,seed=1", "-p", "eurora", "-d",
          "easy,easy-power", "--power-cap", "9000", "-o", str(out), "--no-report",
          "--workers", "1"])
    table = pd.read_csv(out / "results.csv")
    assert (table["power_cap_mean_w"] == 9000).all()
    assert (table["power_peak_w"] <= 9000 + 1e-6).all()
    bad = runner.invoke(app, ["compare", "-w", "gen:mejri:jobs=20,seed=1", "-p", "mejri-10",
                              "-d", "mejri-fifo,fifo", "--power-cap", "1500", "-o",
                              str(tmp_path / "bad"), "--no-report"])
    assert bad.exit_code == 2
    assert "(family malleable) does not support a fixed power cap" in bad.output
    assert not (tmp_path / "bad" / "runs").exists() or not any((tmp_path / "bad" / "runs")
                                                                .iterdir())
