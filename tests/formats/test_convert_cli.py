"""``dispatchlab convert``, ``trace-info`` on every new format, ``simulate --schedule-format``."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from dispatchlab.cli.main import app
from dispatchlab.workload.load import load_workload

DATA = Path(__file__).parent / "data"
KTH = (Path(__file__).parents[2] / "src" / "dispatchlab" / "data" / "traces"
       / "KTH-SP2-1996-2.1-cln.slice.swf.gz")
runner = CliRunner()


@pytest.mark.parametrize(("source", "fmt", "jobs"), [
    ("sacct_parsable2.txt", "sacct", 8), ("sacct.json", "sacct-json", 3),
    ("pbs_accounting.log", "pbs", 5)])
def test_convert_accounting_logs_to_batsim_and_swf(tmp_path: Path, source: str, fmt: str,
                                                   jobs: int) -> None:
    out = tmp_path / "w.json"
    result = runner.invoke(app, ["convert", str(DATA / source), str(out)])
    assert result.exit_code == 0, result.output
    assert f"{jobs} jobs ({fmt}) written" in result.output
    assert "cleaning: " in result.output and "dropped_cancelled_before_start=1" in result.output
    batsim = load_workload(out)
    swf = tmp_path / "w.swf"
    assert runner.invoke(app, ["convert", str(out), str(swf)]).exit_code == 0
    again = load_workload(swf)
    assert batsim.job_id.tolist() == again.job_id.tolist()
    assert batsim.runtime.tolist() == again.runtime.tolist()


def test_convert_options_and_errors(tmp_path: Path) -> None:
    out = tmp_path / "w.parquet"
    ok = runner.invoke(app, ["convert", str(DATA / "sacct_parsable2.txt"), str(out),
                             "--timezone", "Europe/Rome", "--units", "nodes"])
    assert ok.exit_code == 0, ok.output
    wl = load_workload(out)
    assert wl.timezone == "Europe/Rome" and wl.units.tolist()[:2] == [1, 2]
    unknown = runner.invoke(app, ["convert", str(KTH), str(tmp_path / "w.txt")])
    assert unknown.exit_code == 2 and "cannot tell the output format" in unknown.output
    wrong = runner.invoke(app, ["convert", str(KTH), str(tmp_path / "w.json"),
                                "--timezone", "UTC"])
    assert wrong.exit_code == 2 and "unknown swf option" in wrong.output
    bad = tmp_path / "bad.txt"
    bad.write_text((DATA / "sacct_parsable2.txt").read_text().replace("TIMEOUT", "EXPLODED"))
    err = runner.invoke(app, ["convert", str(bad), str(tmp_path / "x.json"), "--from", "sacct"])
    assert err.exit_code == 2
    assert f"{bad}:6, job 1002, field 'State': unknown job state 'EXPLODED'" in err.output
    nodes = runner.invoke(app, ["convert", str(KTH), str(tmp_path / "k.json"), "--nb-res", "2"])
    assert nodes.exit_code == 2 and "nb_res 2 is below" in nodes.output


@pytest.mark.parametrize("source", ["sacct_parsable2.txt", "sacct.json", "pbs_accounting.log",
                                    "batsim_workload.json"])
def test_trace_info_knows_every_format(source: str) -> None:
    args = ["trace-info", str(DATA / source), "--json"]
    if source.startswith("batsim"):
        args += ["--format", "batsim"]
    result = runner.invoke(app, args)
    if source.startswith("batsim"):  # parallel_homogeneous without a speed: an error, exit 2
        assert result.exit_code == 2, result.output
        assert "needs the hosts' speed" in result.output
        return
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert info["jobs"] > 0 and info["cleaning"]


def test_simulate_writes_batsim_and_swf_schedules(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = runner.invoke(app, ["simulate", "-w", str(KTH), "--limit", "100", "-d", "easy",
                                 "--out", str(out), "--schedule-format", "batsim",
                                 "--schedule-format", "swf", "--json"])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out / "out_jobs.csv", keep_default_na=False)
    assert len(table) == 100 and set(table.final_state) == {"COMPLETED_SUCCESSFULLY"}
    assert load_workload(out / "schedule.swf").n_jobs == 100
    summary = json.loads(result.output)
    assert table.waiting_time.mean() == pytest.approx(summary["mean_wait"])
    bad = runner.invoke(app, ["simulate", "-w", str(KTH), "--limit", "10",
                              "--schedule-format", "batsim"])
    assert bad.exit_code == 2 and "needs --out" in bad.output
    bad = runner.invoke(app, ["simulate", "-w", str(KTH), "--limit", "10", "--out",
                              str(tmp_path / "r2"), "--schedule-format", "oar"])
    assert bad.exit_code == 2 and "unknown schedule format 'oar'" in bad.output


def test_simulate_on_a_sacct_export() -> None:
    result = runner.invoke(app, ["simulate", "-w", str(DATA / "sacct_parsable2.txt"),
                                 "-p", "nodes=4,cores=32", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["jobs"] == 8 and summary["cleaning"]["steps_skipped"] == 4


def test_simulate_skip_bad_lines_reaches_the_accounting_readers(tmp_path: Path) -> None:
    bad = tmp_path / "export.txt"
    bad.write_text((DATA / "sacct_parsable2.txt").read_text() + "9999|9999|2024-03\n")
    args = ["simulate", "-w", str(bad), "-p", "nodes=4,cores=32", "--json"]
    fails = runner.invoke(app, args)
    assert fails.exit_code == 2 and f"{bad}:17" in fails.output
    ok = runner.invoke(app, [*args, "--skip-bad-lines"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.output)["cleaning"]["bad_lines_skipped"] == 1


def test_simulate_a_batsim_workload_on_its_simgrid_platform(tmp_path: Path) -> None:
    result = runner.invoke(app, ["simulate", "-w", str(DATA / "batsim_workload.json"),
                                 "-p", str(DATA / "platform.xml"), "-d", "fifo", "--out",
                                 str(tmp_path / "run"), "--schedule-format", "batsim",
                                 "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["jobs"] == 3 and summary["cleaning"]["dropped_unsupported_profile"] == 2
    table = pd.read_csv(tmp_path / "run" / "out_jobs.csv", keep_default_na=False)
    # whole 2-core hosts, numbered by host as Batsim does; 5e10 flops at 1 Gf/s = 50 s
    assert table.requested_number_of_resources.tolist() == [1, 4, 2]
    assert table.execution_time.tolist() == [30, 50, 30]
    assert table.allocated_resources.tolist() == ["0", "0-3", "0-1"]


def test_convert_writes_the_batsim_version_asked_for(tmp_path: Path) -> None:
    out = tmp_path / "w.json"
    source = str(DATA / "batsim" / "test_delays.json")  # Batsim 5's DelayProfile
    result = runner.invoke(app, ["convert", source, str(out)])
    assert result.exit_code == 0 and "10 jobs (batsim)" in result.output, result.output
    assert {p["type"] for p in json.loads(out.read_text())["profiles"].values()} == {
        "DelayProfile"}
    result = runner.invoke(app, ["convert", source, str(out), "--batsim-version", "4"])
    assert result.exit_code == 0, result.output
    assert {p["type"] for p in json.loads(out.read_text())["profiles"].values()} == {"delay"}
    result = runner.invoke(app, ["convert", source, str(tmp_path / "w.swf"),
                                 "--batsim-version", "4"])
    assert result.exit_code == 2 and "--batsim-version" in result.output


def test_headerless_sacct_export_with_columns(tmp_path: Path) -> None:
    from tests.formats.test_sacct_reader import XDMOD_FORMAT

    source = str(DATA / "sacct" / "xdmod_noheader.txt")
    result = runner.invoke(app, ["convert", source, str(tmp_path / "w.swf"),
                                 "--columns", XDMOD_FORMAT])
    assert result.exit_code == 0 and "3 jobs (sacct)" in result.output, result.output
    result = runner.invoke(app, ["trace-info", source, "--json",
                                 "--sacct-format", XDMOD_FORMAT])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["jobs"] == 3
    result = runner.invoke(app, ["convert", source, str(tmp_path / "w.swf"), "--from", "pbs",
                                 "--columns", XDMOD_FORMAT])
    assert result.exit_code == 2 and "--columns" in result.output


def test_simulate_json_says_the_platform_it_chose() -> None:
    result = runner.invoke(app, ["simulate", "-w", str(DATA / "sacct.json"), "-d", "fifo",
                                 "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["platform_chosen"].startswith("nodes=16,cores=1 (no header")
    result = runner.invoke(app, ["simulate", "-w", str(DATA / "sacct.json"), "-d", "fifo",
                                 "-p", "nodes=16,cores=1", "--json"])
    assert "platform_chosen" not in json.loads(result.output)
