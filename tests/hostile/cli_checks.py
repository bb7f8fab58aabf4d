"""Shared checks of the hostile-input suites: run a command (in process, or in a child
process when it could take the interpreter down) and check it is refused the way the
bad-input standard says: exit 2, one ``error:`` line last, no traceback, within a time
bound, and no partial output file."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from dispatchlab.cli.main import app

runner = CliRunner()
SRC = str(Path(__file__).resolve().parents[2] / "src")
#: Seconds a refusal may take on a loaded machine (it happens before any run).
REFUSAL_LIMIT = 15.0


def run_cli(args: list[str], limit: float = REFUSAL_LIMIT) -> tuple[int, str]:
    """Run ``dispatchlab ARGS`` in this process: exit code and output (stdout + stderr);
    no uncaught exception, no traceback, within ``limit`` s."""
    t0 = time.perf_counter()
    result = runner.invoke(app, args)
    took = time.perf_counter() - t0
    assert took < limit, f"{took:.1f} s > {limit} s: {args}"
    out = result.output
    assert "Traceback" not in out, out
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{args}: {result.exception!r}")
    return result.exit_code, out


def run_process(args: list[str], limit: float = REFUSAL_LIMIT,
                stdin: int | None = subprocess.DEVNULL) -> tuple[int, str]:
    """Run ``dispatchlab ARGS`` in a child process (for inputs that could crash or hang the
    interpreter): exit code and output, killed after ``limit`` s (an assertion error)."""
    env = {**os.environ, "PYTHONPATH": SRC, "COLUMNS": "200"}
    cmd = [sys.executable, "-c", "from dispatchlab.cli.main import app; app()", *args]
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=limit,
                              stdin=stdin, errors="replace")
    except subprocess.TimeoutExpired:
        raise AssertionError(f"over {limit} s: {args}") from None
    out = done.stdout + done.stderr
    assert "Traceback" not in out, out
    return done.returncode, out


def assert_refused(code: int, out: str, *expected: str) -> str:
    """Exit 2, the last non-empty line starts with ``error:``, only one such line, and it
    holds every ``expected`` text; returns that line."""
    lines = [x for x in out.splitlines() if x.strip()]
    assert code == 2, out
    assert lines and lines[-1].startswith("error:"), out
    assert sum(x.startswith("error:") for x in lines) == 1, out
    for text in expected:
        assert text in lines[-1], out
    return lines[-1]


def refused(args: list[str], *expected: str, process: bool = False,
            limit: float = REFUSAL_LIMIT) -> str:
    """Run ``args`` (in a child process when ``process``) and :func:`assert_refused`."""
    code, out = (run_process if process else run_cli)(args, limit)
    return assert_refused(code, out, *expected)


def assert_nothing_written(*paths: Path) -> None:
    """None of ``paths`` exists (a refused command leaves no partial output)."""
    for p in paths:
        assert not p.exists(), f"{p} was written by a refused command"
