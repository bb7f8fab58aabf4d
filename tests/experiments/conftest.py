"""Fixtures for the experiment tests: the bundled trace, a small grid, result comparison."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from dispatchlab.cli.demo_cmd import demo_trace
from dispatchlab.experiments import (
    LocalBackend,
    PlannedRun,
    RunStore,
    parse_experiment,
    plan,
    run_campaign,
)
from dispatchlab.stats.metrics import TIMING_KEYS


@pytest.fixture(scope="session")
def kth() -> Path:
    """The real KTH SP2 slice bundled with the package (5,000 jobs)."""
    return demo_trace()


def grid_dispatchers() -> list[str]:
    """Strict FIFO and conservative backfilling, both run by the general engine (best-fit
    keeps them out of the compiled one): the worker-kill tests need runs that last long
    enough (tens of milliseconds) for a worker to be caught busy; the compiled loop
    finishes a 2,000-job window in a few milliseconds."""
    return ["order=fifo,select=strict,alloc=best-fit",
            "order=fifo,select=conservative,alloc=best-fit"]


@pytest.fixture(scope="session")
def grid(kth: Path) -> dict[str, Any]:
    """A campaign of 8 short runs: 2 trace windows of 2,000 jobs × seeds × dispatchers."""
    disp = grid_dispatchers()
    return {
        "name": "engines",
        "workloads": [{"path": str(kth), "name": "kth", "limit": 4000, "windows": 2}],
        "dispatchers": disp,
        "seeds": 4 // len(disp),
    }


@pytest.fixture(scope="session")
def runs(grid: dict[str, Any]) -> list[PlannedRun]:
    """The grid's planned runs."""
    return plan(parse_experiment(grid))


@pytest.fixture(scope="session")
def reference(tmp_path_factory: pytest.TempPathFactory, runs: list[PlannedRun]) -> Path:
    """The grid run uninterrupted by the default engine, a local pool of two processes."""
    out = tmp_path_factory.mktemp("pool")
    with LocalBackend(2) as eng:
        outcome = run_campaign(runs, RunStore(out), eng)
    assert outcome.ok and outcome.stored == len(runs)
    return out


def stored_keys(root: Path) -> set[str]:
    """Hashes of the finished runs under ``root/runs``."""
    runs = root / "runs"
    if not runs.is_dir():
        return set()
    return {
        p.name for p in runs.iterdir() if not p.name.startswith(".") and (p / "run.json").is_file()
    }


def _deterministic(
    run_dir: Path,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    doc = json.loads((run_dir / "run.json").read_text())
    summary = {k: v for k, v in doc["summary"].items() if k not in TIMING_KEYS}
    return (
        pd.read_parquet(run_dir / "jobs.parquet"),
        pd.read_parquet(run_dir / "timeseries.parquet"),
        pd.read_parquet(run_dir / "alloc.parquet"),
        summary,
    )


@pytest.fixture(scope="session")
def same_results() -> Callable[[Path, Path], int]:
    """Assert two output folders hold the same runs with identical results; return count.

    Everything the simulation determines must match bit for bit: per-job table, time
    series, placements and the summary minus the host's timing figures.
    """

    def check(a: Path, b: Path) -> int:
        keys_a, keys_b = stored_keys(a), stored_keys(b)
        assert keys_a == keys_b, f"different runs: {sorted(keys_a ^ keys_b)}"
        for key in sorted(keys_a):
            ja, ta, aa, sa = _deterministic(a / "runs" / key)
            jb, tb, ab, sb = _deterministic(b / "runs" / key)
            pd.testing.assert_frame_equal(ja, jb, check_exact=True)
            pd.testing.assert_frame_equal(ta, tb, check_exact=True)
            pd.testing.assert_frame_equal(aa, ab, check_exact=True)
            assert sa == sb, key
        return len(keys_a)

    return check


def no_leftovers(root: Path) -> None:
    """No temporary folder and exactly one folder per hash."""
    names = [p.name for p in (root / "runs").iterdir()]
    assert not [n for n in names if n.startswith(".tmp-")], names
    assert len(names) == len(set(names))


@pytest.fixture(scope="session")
def leftovers() -> Callable[[Path], None]:
    """The :func:`no_leftovers` check as a fixture."""
    return no_leftovers


@pytest.fixture(scope="session")
def keys_in() -> Callable[[Path], set[str]]:
    """The :func:`stored_keys` helper as a fixture."""
    return stored_keys
