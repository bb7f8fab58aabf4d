"""An invalid experiment file fails before any run starts, naming the offending key."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from dispatchlab.cli.main import app
from tests.conftest import missing_reason, trace_available

GOOD = """
name = "check"
seeds = [0]
dispatchers = ["fifo"]
platforms = ["auto"]

[[workloads]]
path = "{trace}"
limit = 300
"""

CASES = [
    # (replace this by that — or append that when this is empty —, key named, words)
    (("limit = 300", "limt = 300"), "workloads[0].limt", "unknown key"),
    (("limit = 300", "limit = 0"), "workloads[0].limit", "greater than or equal to 1"),
    (
        ('dispatchers = ["fifo"]', 'dispatchers = ["fifo", "no-such-policy"]'),
        "dispatchers[1]",
        "unknown dispatcher 'no-such-policy'",
    ),
    (('platforms = ["auto"]', 'platforms = ["nodes=4"]'), "platforms[0]", "cores"),
    (('path = "{trace}"', 'path = "missing.swf"'), "workloads[0].path", "file not found"),
    (("seeds = [0]", 'seeds = [0, "x"]'), "seeds[1]", "integer"),
    (
        ('dispatchers = ["fifo"]', 'dispatchers = ["fifo-{{depth}}"]'),
        "dispatchers[0]",
        "undefined parameter '{depth}'",
    ),
    (("", "[parameters]\nunused = [1, 2]"), "parameters.unused", "not used"),
    (
        ("limit = 300", "limit = 300\nwindows = 7\nwindow_jobs = 50"),
        "workloads[0].windows",
        "the workload has 300",
    ),
    (
        ("limit = 300", 'limit = 300\noptions = {procs = "most"}'),
        "workloads[0].options.procs",
        "procs must be",
    ),
    (
        ("limit = 300", "limit = 300\noptions = {colour = 1}"),
        "workloads[0].options.colour",
        "unknown SWF option",
    ),
    (("", '[stats]\nmetrics = ["happiness"]'), "stats.metrics", "unknown metric 'happiness'"),
    (("", '[execution]\nbackend = "spark"'), "execution.backend",
     "'local', 'dask-local' or 'dask'"),
    (("", '[execution]\nbackend = "local"\nengine = "local"'), "execution",
     "give 'backend' only"),
    (('name = "check"', 'name = "check'), None, "not valid TOML"),
    (
        ("limit = 300", 'limit = 300\ncooling = "water"'),
        "workloads[0].cooling",
        "expected 'air', 'hybrid' or a CSV",
    ),
    (
        ("limit = 300", 'limit = 300\ncooling = "air"'),
        "workloads[0].cooling",
        "no ambient temperature",
    ),
    (
        ("limit = 300", 'limit = 300\ntemperature = "gen:temperature:season=summer"'),
        "workloads[0].cooling",
        "need a cooling model",
    ),
    (
        ("limit = 300", 'limit = 300\ncooling = "air"\nprices = "free"\n'
         'temperature = "gen:temperature"'),
        "workloads[0].prices",
        "K1,K2",
    ),
]


@pytest.mark.parametrize(
    ("change", "key", "words"), CASES, ids=[c[1] or "toml-syntax" for c in CASES]
)
def test_invalid_file_names_the_key_and_runs_nothing(
    tmp_path: Path, kth: Path, change: tuple[str, str], key: str | None, words: str
) -> None:
    text = GOOD + change[1] if not change[0] else GOOD.replace(*change)
    text = text.replace("{trace}", str(kth))
    exp = tmp_path / "exp.toml"
    exp.write_text(text)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run-experiment", str(exp), "--out", str(out)])
    message = " ".join(result.output.split())
    assert result.exit_code == 2, result.output
    assert message.startswith("error:")
    assert str(exp) in message
    if key:
        assert f"field '{key}'" in message
    assert words in message
    assert not out.exists(), "nothing may be written before the file is valid"


def test_valid_file_dry_run_lists_every_run(tmp_path: Path, kth: Path) -> None:
    exp = tmp_path / "exp.toml"
    exp.write_text(GOOD.replace("{trace}", str(kth)).replace("seeds = [0]", "seeds = 3"))
    result = CliRunner().invoke(
        app, ["run-experiment", str(exp), "--dry-run", "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 0, result.output
    assert "3 runs" in result.output
    assert len([ln for ln in result.output.splitlines() if "fifo" in ln and "|" in ln]) == 3
    assert not (tmp_path / "out").exists()


EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples" / "experiments").glob("*.toml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_experiments_are_valid(path: Path) -> None:
    if "gen:curie-thesis" in path.read_text(encoding="utf-8") and not trace_available("CEA-Curie"):
        pytest.skip(missing_reason("CEA-Curie"))
    from dispatchlab.dispatchers.registry import presets
    from dispatchlab.experiments import load_experiment, plan

    spec = load_experiment(path)
    missing = [
        d for d in spec.dispatchers if isinstance(d, str) and "=" not in d and d not in presets()
    ]
    if missing:
        pytest.skip(f"presets not registered yet: {missing}")
    runs = plan(spec, path.parent, source=str(path))
    assert runs and len({r.key for r in runs}) == len(runs)


def test_old_execution_key_is_read_with_a_warning(tmp_path: Path, kth: Path) -> None:
    """``[execution] engine`` was the backend's name: old files still load, with a warning."""
    import tomllib

    from dispatchlab.experiments.spec import parse_experiment

    text = GOOD.replace("{trace}", str(kth)) + '[execution]\nengine = "dask-local"\n'
    with pytest.warns(FutureWarning, match="write backend"):
        spec = parse_experiment(tomllib.loads(text), source="old.toml")
    assert spec.execution.backend == "dask-local"
