"""``dispatchlab live`` refuses bad settings before it touches Slurm."""

from __future__ import annotations

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
    code, out = _run("pbs", "--partition", "main")
    assert code == 2 and "unknown resource manager" in out
    code, out = _run("slurm", "--partition", "main", "--predict")
    assert code == 2 and "--out" in out
