"""Issue 19: lazy start-up, ``--version``, ``dispatchers``, "did you mean", lean ``--json``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import dispatchlab
from dispatchlab.cli.main import app
from dispatchlab.dispatchers.registry import presets
from tests.conftest import shared_trace

runner = CliRunner()


def _modules_after(code: str) -> set[str]:
    """Top-level modules a fresh interpreter holds after running ``code``."""
    probe = f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True)
    return set(out.stdout.splitlines()[-1].split())


def test_help_imports_no_subcommand_and_no_heavy_library() -> None:
    mods = _modules_after(
        "import sys\nsys.argv = ['dispatchlab', '--help']\n"
        "from dispatchlab.cli.main import app\n"
        "try:\n    app()\nexcept SystemExit:\n    pass")
    heavy = {"numpy", "pandas", "numba", "matplotlib", "scipy", "pyarrow", "ortools", "rich"}
    assert not heavy & mods
    assert not {m for m in mods if m.startswith("dispatchlab.cli.") and m.endswith("_cmd")}


def test_simulate_json_path_stays_lean() -> None:
    """No report/stats/experiments/matplotlib/scipy/pandas on the simulate --json path (SWF
    is read with numpy; the compiled fifo loop is ahead-of-time compiled; Numba is only
    imported when a JIT kernel runs)."""
    trace = shared_trace("KTH-SP2-1996-2.1-cln.swf.gz")
    mods = _modules_after(
        "import sys\nsys.argv = ['dispatchlab', 'simulate', '-w', " + repr(str(trace)) +
        ", '--limit', '100', '--json']\nfrom dispatchlab.cli.main import app\n"
        "try:\n    app()\nexcept SystemExit:\n    pass")
    assert not {"matplotlib", "scipy", "pandas", "pyarrow", "dispatchlab.report",
                "dispatchlab.stats", "dispatchlab.experiments"} & mods
    assert "dispatchlab.cli.compare_cmd" not in mods


def test_json_never_builds_the_per_job_table(monkeypatch: pytest.MonkeyPatch) -> None:
    import dispatchlab.metrics.results as results

    def boom(*_a: object, **_k: object) -> None:
        raise AssertionError("per-job table or time series built for --json")

    monkeypatch.setattr(results, "job_table", boom)
    monkeypatch.setattr(results, "time_series", boom)
    trace = shared_trace("KTH-SP2-1996-2.1-cln.swf.gz")
    for disp in ("fifo", "easy", "order=fifo,select=easy,alloc=best-fit"):
        result = runner.invoke(app, ["simulate", "-w", str(trace), "--limit", "200",
                                     "-d", disp, "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["jobs"] == 200


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"dispatchlab {dispatchlab.__version__}"


def test_dispatchers_lists_every_preset_with_family() -> None:
    result = runner.invoke(app, ["dispatchers", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert {r["name"] for r in rows} == set(presets())
    assert all(r["family"] and r["description"] for r in rows)
    assert {r["family"] for r in rows} >= {"rule-based", "cp", "malleable", "dardis",
                                           "variable-capacity"}
    text = runner.invoke(app, ["dispatchers", "--family", "cp"])
    assert text.exit_code == 0 and "hcp3-paper" in text.stdout and "fifo " not in text.stdout
    bad = runner.invoke(app, ["dispatchers", "--family", "nope"])
    assert bad.exit_code == 2
    known = ", ".join(sorted({r["family"] for r in rows}))  # every family, sorted
    assert f"known: {known})" in bad.output and "dec, " in known and "offline-plan" in known


def test_help_fits_80_columns() -> None:
    for cmd in ([], ["simulate"], ["compare"], ["results"]):
        result = runner.invoke(app, [*cmd, "--help"], env={"COLUMNS": "80"})
        assert result.exit_code == 0, result.output
        assert max(len(line) for line in result.stdout.splitlines()) <= 80
    assert "--swf-missing-estimate" in runner.invoke(app, ["simulate", "--help"],
                                                     env={"COLUMNS": "80"}).stdout


@pytest.mark.parametrize(("spec", "expect"), [
    ("fifp", "did you mean 'fifo'"),
    ("euroar", "`dispatchlab dispatchers` lists"),
    ("hcp4", "did you mean"),
    ("order=fifo,order=sjf", "key 'order' given twice"),
])
def test_dispatcher_spec_messages(spec: str, expect: str) -> None:
    trace = shared_trace("KTH-SP2-1996-2.1-cln.swf.gz")
    result = runner.invoke(app, ["simulate", "-w", str(trace), "--limit", "10", "-d", spec])
    assert result.exit_code == 2
    assert expect in result.output
    assert "Traceback" not in result.output


def test_loop_and_backend_options(tmp_path: Path) -> None:
    """simulate --loop (event loop) and compare --backend (where runs execute): two names
    for what --engine meant; the old name still works, with a warning."""
    trace = str(shared_trace("KTH-SP2-1996-2.1-cln.swf.gz"))
    base = ["simulate", "-w", trace, "--limit", "100", "--json"]
    new = runner.invoke(app, [*base, "--loop", "general"])
    old = runner.invoke(app, [*base, "--engine", "general"])
    assert new.exit_code == old.exit_code == 0, new.output + old.output
    assert json.loads(new.stdout)["loop"] == json.loads(old.stdout)["loop"] == "general"
    assert "deprecated" in old.stderr and "--loop" in old.stderr
    bad = runner.invoke(app, [*base, "--loop", "foo"])
    assert bad.exit_code == 2 and "field '--loop'" in bad.output
    cmp = ["compare", "-w", trace, "--limit", "100", "-d", "fifo,sjf", "--no-report", "--json",
           "-o", str(tmp_path / "c")]
    bad = runner.invoke(app, [*cmp, "--backend", "nope"])
    assert bad.exit_code == 2 and "unknown backend 'nope'" in bad.output
    old_name = runner.invoke(app, [*cmp, "-e", "local", "--workers", "1"])
    assert old_name.exit_code == 0, old_name.output
    assert "use --backend" in old_name.stderr
    assert "--backend" in runner.invoke(app, ["compare", "--help"]).stdout
    assert "--engine" not in runner.invoke(app, ["compare", "--help"]).stdout


def test_compare_all_means_the_rule_based_presets_and_families_expand() -> None:
    from dispatchlab.cli.compare_cmd import split_dispatchers
    from dispatchlab.dispatchers.registry import presets
    from dispatchlab.errors import ConfigError

    known = presets()
    rule = split_dispatchers(["all"])
    assert rule and all(known[n].family == "rule-based" for n in rule)
    assert {"fifo", "easy", "conservative"} <= set(rule)
    assert not {"hcp3", "dardis-throughput", "target-asap"} & set(rule)
    cp = split_dispatchers(["family:cp,fifo"])
    assert "hcp3" in cp and cp[-1] == "fifo"
    assert split_dispatchers(["order=sjf,select=easy", "fifo"]) == \
        ["order=sjf,select=easy", "fifo"]
    with pytest.raises(ConfigError, match="dispatcher 'fifo' is given twice"):
        split_dispatchers(["order=sjf,select=easy", "fifo,fifo"])
    with pytest.raises(ConfigError, match="unknown dispatcher family 'nope'"):
        split_dispatchers(["family:nope"])
