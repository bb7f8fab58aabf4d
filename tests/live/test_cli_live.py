"""``dispatchlab live`` refuses bad settings before it touches Slurm."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from dispatchlab.cli.main import app

runner = CliRunner()


def _run(*args: str) -> tuple[int, str]:
    res = runner.invoke(app, ["live", *args])
    return res.exit_code, res.output


def test_oracle_dispatcher_is_refused() -> None:
    code, out = _run("slurm", "--partition", "main", "--dispatcher",
                     "select=easy,estimate=real")
    assert code == 2 and "reads the future" in out


def test_bad_poll_and_system_and_missing_out() -> None:
    assert _run("slurm", "--partition", "main", "--poll", "2")[0] == 2
    code, out = _run("torque", "--partition", "main")
    assert code == 2 and "unknown resource manager 'torque' (known: slurm, pbs)" in out
    code, out = _run("slurm", "--partition", "main", "--predict")
    assert code == 2 and "--out" in out


def test_bad_durations_history_and_estimates_are_refused_at_start(tmp_path: Path) -> None:
    """Refused before Slurm is looked at (PATH empty: reaching Slurm would say so)."""
    out = str(tmp_path / "pred.csv")
    bad = tmp_path / "jobcomp.log"
    bad.write_text("not a record\n")
    cases = [
        (["--duration", "-3"], "--duration must be > 0 s, got -3"),
        (["--release-timeout", "-1"], "--release-timeout must be > 0 s, got -1"),
        (["--every", "0"], "--every must be > 0 s, got 0"),
        (["--predict", "--out", out, "--history", "/nonexistent"],
         "--history /nonexistent: no such file"),
        (["--predict", "--out", out, "--history", str(bad)],
         f"{bad}:1, field 'JobId': not a jobcomp/filetxt record"),
        (["--predict", "--out", out, "--estimate", "real"], "reads actual run times"),
        (["--predict", "--out", out, "--estimate", "nosuch"],
         "unknown duration estimate 'nosuch'"),
    ]
    for more, message in cases:
        res = runner.invoke(app, ["live", "slurm", "--partition", "main", *more],
                            env={"PATH": str(tmp_path)})
        assert res.exit_code == 2 and message in res.output, (more, res.output)
        assert len(res.output.strip().splitlines()) == 1


def test_pbs_without_its_commands_or_with_a_slurm_history_is_refused(tmp_path: Path) -> None:
    res = runner.invoke(app, ["live", "pbs", "--partition", "workq"],
                        env={"PATH": str(tmp_path)})
    assert res.exit_code == 2 and "the PBS command 'qstat' is not on PATH" in res.output
    log = tmp_path / "jobcomp.log"
    log.write_text("")
    res = runner.invoke(app, ["live", "pbs", "--partition", "workq", "--predict", "--out",
                              str(tmp_path / "p.csv"), "--history", str(log)])
    assert res.exit_code == 2 and "--history reads a Slurm job completion log" in res.output
