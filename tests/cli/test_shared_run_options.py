"""One declaration of the run-shaping options: ``simulate``, ``compare``, ``live`` and the
experiment file's workload keys take the same set, each refusing with one line what it
cannot honour; ``compare`` and ``run-experiment`` then run as ``simulate`` does with the
same options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from dispatchlab.cli.main import app
from dispatchlab.cli.options import (
    LOAD_OPTIONS,
    NOT_IN_TOML,
    RUN_OPTIONS,
    TOML_KEYS,
    TOML_TOP_KEYS,
    RunOptions,
)
from dispatchlab.experiments.spec import ExperimentSpec, WorkloadEntry
from dispatchlab.run_settings import SETTING_NAMES

runner = CliRunner()

#: Each command's options outside the shared declarations (a new option added to one
#: command only fails this test: declare it in cli/options.py, or list it here).
OWN_OPTIONS = {
    "simulate": {"workload", "platform", "dispatcher", "seed", "out", "force", "as_json",
                 "engine"},
    "compare": {"workload", "dispatchers", "platform", "out", "backend", "engine",
                "scheduler", "workers", "seeds", "windows", "stats_metrics", "alpha",
                "p_adjust", "report", "gantt_max_jobs", "as_json"},
    "live": {"system", "partition", "dispatcher", "dry_run", "hold_new", "predict",
             "estimate", "history", "out", "report", "poll", "every", "duration",
             "release_timeout", "log", "seed", "queue_rules"},
}
LOADS = {"simulate", "compare"}

#: Two Eurora jobs: the second lists two chunks on node 8 next to 1 requested node
#: (PA-HPC-SIM's reading counts 2 units for it).
BATCH = (
    "11;xxx;yyy;debug;2014-03-31 11:00:00__3;2;1;0;1048576#4;2;1;0;1048576#__"
    "2014-03-31 11:00:10;2014-03-31 11:05:10;2;4;2gb;00:30;NA;NA;COMPLETED;0\n"
    "12;xxx;yyy;debug;2014-03-31 11:00:05__8;8;0;0;204800#8;8;0;0;204800#__"
    "2014-03-31 11:00:20;2014-03-31 11:01:20;1;8;200mb;00:10;NA;NA;COMPLETED;0\n"
)
PEER = ["--power-cap", "230", "--job-power", "pa-hpc-sim", "--no-idle-power",
        "--eurora-units", "chunks"]


def _params(name: str) -> set[str]:
    group = typer.main.get_command(app)
    command = group.get_command(click.Context(group), name)  # type: ignore[attr-defined]
    return {p.name for p in command.params if p.name}


@pytest.mark.parametrize("name", sorted(OWN_OPTIONS))
def test_each_command_takes_the_shared_declaration(name: str) -> None:
    shared = set(RUN_OPTIONS) | (set(LOAD_OPTIONS) if name in LOADS else set())
    params = _params(name)
    assert params >= shared
    assert params - shared == OWN_OPTIONS[name]


def test_the_record_and_the_experiment_keys_match_the_declaration() -> None:
    assert list(RunOptions.__dataclass_fields__) == list(RUN_OPTIONS)
    assert set(SETTING_NAMES) <= set(RUN_OPTIONS)
    keys = {TOML_KEYS.get(n, n) for n in RUN_OPTIONS if n not in NOT_IN_TOML}
    entry, top = set(WorkloadEntry.model_fields), set(ExperimentSpec.model_fields)
    assert keys - entry == set(TOML_TOP_KEYS) and set(TOML_TOP_KEYS) <= top


def _batch(tmp_path: Path) -> Path:
    path = tmp_path / "hist_2.log_crypt"
    path.write_text(BATCH)
    return path


def _ok(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return result.stdout


def _compare(tmp_path: Path, args: list[str], name: str = "cmp") -> pd.DataFrame:
    out = tmp_path / name
    _ok(["compare", *args, "-o", str(out), "--no-report", "--workers", "1", "--json"])
    return pd.read_csv(out / "results.csv")


def test_compare_runs_with_pa_hpc_sims_accounting_as_simulate(tmp_path: Path) -> None:
    base = ["-w", str(_batch(tmp_path)), "-p", "eurora-64"]
    table = _compare(tmp_path, [*base, "-d", "pa-list,pa-easy", *PEER])
    for disp in ("pa-list", "pa-easy"):
        alone = json.loads(_ok(["simulate", *base, "-d", disp, *PEER, "--json"]))
        row = table[table["dispatcher"] == disp].iloc[0]
        for key in ("mean_wait", "max_wait", "makespan", "utilization"):
            assert row[key] == pytest.approx(alone[key]), (disp, key)
    # 204 W + 80 W > 230 W: the second job waits for the first to end (at 300 s)
    assert (table["max_wait"] == 295).all()


def test_compare_takes_seed_loop_and_schedule_layouts(tmp_path: Path) -> None:
    base = ["-w", "gen:eurora-like:jobs=30,seed=1", "-p", "eurora", "-d", "fifo,easy"]
    table = _compare(tmp_path, [*base, "--seed", "3", "--loop", "general", "--schedule-format",
                                "swf", "--schedule-format", "batsim"])
    assert (table["seed"] == 3).all() and (table["loop"] == "general").all()
    for disp in ("fifo", "easy"):
        key = table[table["dispatcher"] == disp]["run"].iloc[0]
        folder = tmp_path / "cmp" / "runs" / key
        alone = tmp_path / disp
        _ok(["simulate", *base[:4], "-d", disp, "--seed", "3", "--out", str(alone),
             "--schedule-format", "swf", "--schedule-format", "batsim", "--json"])
        for name in ("schedule.swf", "out_jobs.csv"):
            assert (folder / name).read_text() == (alone / name).read_text(), (disp, name)
    # runs stored without the layout are not run again (it is not in their hash): said
    _compare(tmp_path, base, "plain")
    again = runner.invoke(app, ["compare", *base, "--schedule-format", "swf", "-o",
                                str(tmp_path / "plain"), "--no-report", "--workers", "1"])
    assert again.exit_code == 0, again.output
    assert "2 run(s) stored earlier without the asked schedule layout" in again.output
    bad = runner.invoke(app, ["compare", *base, "--schedule-format", "gantt", "-o",
                              str(tmp_path / "bad")])
    assert bad.exit_code == 2
    assert "field '--schedule-format': unknown schedule format 'gantt'" in bad.output
    assert not (tmp_path / "bad").exists()
    wrong = runner.invoke(app, ["compare", *base, "--loop", "fast", "-o", str(tmp_path / "w")])
    assert wrong.exit_code == 2 and "field '--loop': unknown value 'fast'" in wrong.output


def _vc_files(tmp_path: Path) -> tuple[Path, Path]:
    jobs = tmp_path / "jobs.txt"
    jobs.write_text("1 100 5000 4\n2 86000 20000 8\n3 86500 3000 2\n4 90000 4000 1\n"
                    "5 100000 1000 8\n6 200000 1000 8\n")
    variation = tmp_path / "var.txt"
    variation.write_text("8\n86000 6\n95000 8\n")
    return jobs, variation


VC_KEYS = ("jobs", "mean_wait", "makespan", "goodput", "aborted_count", "min_alive_nodes",
           "mean_alive_nodes")


def _vc_args(jobs: Path, variation: Path) -> list[str]:
    return ["-w", str(jobs), "--format", "vcjobs", "-p", "nodes=8,cores=8", "--window-start",
            "86400", "--window", "86400", "--scenario", str(variation), "--on-abort", "fail"]


def test_compare_takes_the_job_file_window_and_on_abort(tmp_path: Path) -> None:
    args = _vc_args(*_vc_files(tmp_path))
    table = _compare(tmp_path, [*args, "-d", "ff-aware"])
    alone = json.loads(_ok(["simulate", *args, "-d", "ff-aware", "--json"]))
    row = table.iloc[0]
    for key in VC_KEYS:
        assert row[key] == pytest.approx(alone[key]), key
    run = next((tmp_path / "cmp" / "runs").glob("*/run.json"))
    assert "on_abort" in run.read_text() and "fail" in run.read_text()


def _experiment(tmp_path: Path, name: str, dispatcher: str, platform: str, entry: str,
                top: str = "") -> dict[str, Any]:
    """Run a one-workload experiment; its one result row."""
    path = tmp_path / f"{name}.toml"
    path.write_text(f'name = "{name}"\ndispatchers = ["{dispatcher}"]\n'
                    f'platforms = ["{platform}"]\n{top}\n[[workloads]]\n{entry}')
    _ok(["run-experiment", str(path), "-o", str(tmp_path / name), "--json", "--workers", "1"])
    return dict(pd.read_csv(tmp_path / name / "results.csv").iloc[0])


def test_run_experiment_keys_run_as_simulate_with_the_flags(tmp_path: Path) -> None:
    batch = _batch(tmp_path)
    row = _experiment(tmp_path, "peer", "pa-list", "eurora-64", f"""path = "{batch.name}"
power_cap = 230
job_power = "pa-hpc-sim"
idle_power = false
options = {{ units = "chunks" }}
loop = "general"
""", top='schedule_format = ["swf"]')
    alone = json.loads(_ok(["simulate", "-w", str(batch), "-p", "eurora-64", "-d", "pa-list",
                            *PEER, "--loop", "general", "--json", "--out", str(tmp_path / "s"),
                            "--schedule-format", "swf"]))
    for key in ("mean_wait", "max_wait", "makespan", "loop"):
        assert row[key] == alone[key], key
    schedule = tmp_path / "peer" / "runs" / row["run"] / "schedule.swf"
    assert schedule.read_text() == (tmp_path / "s" / "schedule.swf").read_text()
    jobs, variation = _vc_files(tmp_path)
    row = _experiment(tmp_path, "vc", "ff-aware", "nodes=8,cores=8", f"""path = "{jobs.name}"
format = "vcjobs"
window_start = 86400
window = 86400
scenario = "{variation.name}"
on_abort = "fail"
""")
    alone = json.loads(_ok(["simulate", *_vc_args(jobs, variation), "-d", "ff-aware",
                            "--json"]))
    for key in VC_KEYS:
        assert row[key] == pytest.approx(alone[key]), key


def test_experiment_keys_are_checked_before_anything_runs(tmp_path: Path) -> None:
    exp = tmp_path / "exp.toml"
    exp.write_text('name = "x"\ndispatchers = ["fifo"]\n[[workloads]]\n'
                   'path = "gen:eurora-like:jobs=10,seed=1"\nwindow = 100\n')
    bad = runner.invoke(app, ["run-experiment", str(exp), "--dry-run"])
    assert bad.exit_code == 2
    assert "workloads[0].window" in bad.output and "variable-capacity job file" in bad.output
    exp.write_text('name = "x"\ndispatchers = ["fifo"]\n[[workloads]]\n'
                   'path = "gen:eurora-like:jobs=10,seed=1"\njob_power = "nope.csv"\n')
    bad = runner.invoke(app, ["run-experiment", str(exp), "--dry-run"])
    assert bad.exit_code == 2 and "workloads[0].job_power" in bad.output
    exp.write_text('name = "x"\ndispatchers = ["fifo"]\n[[workloads]]\n'
                   'path = "gen:eurora-like:jobs=10,seed=1"\non_abort = "drop"\n')
    bad = runner.invoke(app, ["run-experiment", str(exp), "--dry-run"])
    assert bad.exit_code == 2
    assert "field 'workloads[0].on_abort': unknown value 'drop' (known: requeue, fail)" in (
        bad.output)
    # a node power model the platform lacks: refused at planning, as simulate refuses it
    exp.write_text('name = "x"\ndispatchers = ["fifo"]\nplatforms = ["nodes=4,cores=16"]\n'
                   '[[workloads]]\npath = "gen:eurora-like:jobs=10,seed=1"\n'
                   'job_power = "node"\n')
    bad = runner.invoke(app, ["run-experiment", str(exp), "--dry-run"])
    assert bad.exit_code == 2
    assert "workloads[0].job_power" in bad.output and "no node power model" in bad.output


def test_compare_refuses_before_running_naming_its_own_option(tmp_path: Path) -> None:
    base = ["compare", "-w", "gen:eurora-like:jobs=10,seed=1", "-p", "nodes=4,cores=16",
            "-d", "fifo", "-o", str(tmp_path / "out")]
    for args, option in ((["--job-power", "node"], "--job-power"),
                         (["--window", "100"], "--window"),
                         (["--on-abort", "drop"], "--on-abort")):
        bad = runner.invoke(app, [*base, *args])
        assert bad.exit_code == 2, bad.output
        assert f"field '{option}'" in bad.output and "workloads[0]" not in bad.output
        assert not (tmp_path / "out").exists()


def test_live_takes_d_and_refuses_simulation_options() -> None:
    assert "-d" in runner.invoke(app, ["live", "--help"]).stdout
    for args in (["--loop", "general"], ["--window", "10"], ["--no-idle-power"]):
        bad = runner.invoke(app, ["live", "slurm", "--partition", "p", "-d", "easy", *args])
        assert bad.exit_code == 2, bad.output
        line = bad.output.strip()
        assert "\n" not in line and f"live cannot take {args[0]}" in line


def test_compare_merges_several_scenarios_and_a_cap_file_as_simulate(tmp_path: Path) -> None:
    down = tmp_path / "down.csv"
    down.write_text("time,what,value,target\n600,node_down,,node00\n4000,node_up,,node00\n")
    caps = tmp_path / "caps"
    caps.write_text("0;20000\n3000;12000\n")
    args = ["-w", "gen:eurora-like:jobs=40,seed=2", "-p", "eurora", "--scenario", str(down),
            "--scenario", "gen:constant:what=energy_price,value=0.2", "--power-cap", str(caps),
            "--on-over-cap", "kill-youngest"]
    table = _compare(tmp_path, [*args, "-d", "easy"])
    alone = json.loads(_ok(["simulate", *args, "-d", "easy", "--json"]))
    row = table.iloc[0]
    for key in ("mean_wait", "makespan", "killed", "utilization"):
        assert row[key] == pytest.approx(alone[key]), key
    assert row["power_cap_mean_w"] == pytest.approx(alone["power"]["cap_mean_w"])
    run = json.loads(next((tmp_path / "cmp" / "runs").glob("*/run.json")).read_text())
    assert len(run["config"]["workload"]["scenario"]) == 3
