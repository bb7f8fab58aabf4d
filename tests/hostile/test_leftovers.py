"""Cases of the hostile round that the earlier fixes left: each refused in one line naming
the right thing (exit 2, no traceback)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from dispatchlab.cli.main import app

runner = CliRunner()


def _fails(args: list[str]) -> str:
    """Exit 2 with one line and no traceback; the line."""
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and result.output.count("\n") == 1, result.output
    return result.output


@pytest.mark.parametrize(("workload", "said"), [
    ("trace:KTH-SP2", "'trace:KTH-SP2' is a catalogued trace of format swf"),
    ("gen:mejri", "'gen:mejri' is a generator"),
    ("no-such-file.swf", "'no-such-file.swf' is not a file"),
])
def test_window_start_names_what_the_workload_is(workload: str, said: str) -> None:
    # a catalogued SWF trace was called "gen" (the generator's word) before
    out = _fails(["--offline", "simulate", "-w", workload, "--window-start", "100"])
    assert said in out and "--window" in out
