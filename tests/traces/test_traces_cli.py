"""``dispatchlab traces list|fetch|path`` and the end-of-run note on missing traces."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dispatchlab.cli.main import app
from tests.conftest import REPO
from tests.traces.http_server import Behaviour, serving
from tests.traces.test_trace_resolve import BODY, OTHER, tiny_catalogue

runner = CliRunner()
resolve_module = import_module("dispatchlab.traces.resolve")


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    how = Behaviour(files={"/tiny.swf.gz": BODY})
    with serving(how) as base:
        cat = tiny_catalogue(base)
        monkeypatch.setattr("dispatchlab.traces.catalogue.all_traces", lambda: cat)
        monkeypatch.setattr("dispatchlab.cli.traces_cmd.all_traces", lambda: cat)
        monkeypatch.setattr("dispatchlab.traces.locations.sibling_dir", lambda: None)
        monkeypatch.setenv("DISPATCHLAB_DATA", str(tmp_path / "data"))
        monkeypatch.delenv("DISPATCHLAB_TRACES", raising=False)
        monkeypatch.setenv("DISPATCHLAB_OFFLINE", "1")  # fetch downloads all the same
        resolve_module._checked.clear()
        yield how, tmp_path / "data" / "traces"


def test_list_says_what_is_here_and_fetch_brings_it(tiny) -> None:  # type: ignore[no-untyped-def]
    how, cache = tiny
    listed = json.loads(runner.invoke(app, ["traces", "list", "--json"]).stdout)
    assert [(t["name"], t["present"]) for t in listed["traces"]] == [("tiny", 0)]
    assert listed["cache"] == str(cache)
    missing = runner.invoke(app, ["traces", "path", "tiny"])
    assert missing.exit_code == 2 and "traces fetch tiny" in missing.output
    fetched = runner.invoke(app, ["traces", "fetch", "tiny"])
    assert fetched.exit_code == 0, fetched.output
    assert "fetched 1 file(s)" in fetched.stdout and "100.0%" in fetched.output
    assert (cache / "swf" / "tiny.swf.gz").read_bytes() == BODY
    again = runner.invoke(app, ["traces", "fetch", "--all"])
    assert "tiny: present" in again.stdout and len(how.ranges) == 1
    assert runner.invoke(app, ["traces", "path", "tiny"]).stdout.strip() == \
        str(cache / "swf" / "tiny.swf.gz")


def test_fetch_failure_exits_non_zero_and_keeps_nothing(tiny) -> None:  # type: ignore[no-untyped-def]
    how, cache = tiny
    how.files["/tiny.swf.gz"] = OTHER
    result = runner.invoke(app, ["traces", "fetch", "tiny"])
    assert result.exit_code == 1 and "SHA-256" in result.output
    assert not (cache / "swf" / "tiny.swf.gz").exists()


@pytest.mark.parametrize("args, message", [
    (["traces", "move"], "unknown action 'move'"),
    (["traces", "fetch"], "give trace names or --all"),
    (["traces", "path"], "give a trace name"),
    (["traces", "list", "no-such-trace"], "no trace 'no-such-trace'"),
])
def test_usage_errors(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and message in result.output


def test_the_run_ends_with_the_missing_trace_count_and_fetch_command(tmp_path: Path) -> None:
    """A pytest run (in a subprocess, with this suite's conftest) that skips for an absent
    trace ends by counting the skips and naming the fetch command."""
    env = {"DISPATCHLAB_TRACES": str(tmp_path), "PATH": "/usr/bin:/bin",
           "DISPATCHLAB_DATA": str(tmp_path / "data"), "PYTHONPATH": str(REPO)}
    probe = [sys.executable, "-c", "from tests.conftest import trace_available as t; "
             "print(t('borg-7d'))"]
    if subprocess.run(probe, capture_output=True, text=True, env=env, cwd=tmp_path,
                      timeout=60).stdout.strip() != "False":
        pytest.skip("borg-7d is beside the repository here: nothing would be missing")
    test = tmp_path / "test_needs_traces.py"
    test.write_text("from tests.conftest import shared_trace\n"
                    "def test_a():\n    shared_trace('borg-7d')\n"
                    "def test_b():\n    shared_trace('7D_604800.txt')\n"
                    "def test_c():\n    pass\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-p", "tests.conftest", str(test)], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=120)
    assert "1 passed, 2 skipped" in out.stdout, out.stdout
    assert "2 test(s) skipped for a missing trace (borg-7d)" in out.stdout
    assert "dispatchlab traces fetch borg-7d" in out.stdout


def test_global_offline_flag_forbids_first_use_downloads(tiny, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    how, cache = tiny
    monkeypatch.delenv("DISPATCHLAB_OFFLINE")
    result = runner.invoke(app, ["--offline", "trace-info", "trace:tiny"])
    assert result.exit_code == 2 and "downloading is off" in result.output
    assert how.ranges == [] and not (cache / "swf").exists()
