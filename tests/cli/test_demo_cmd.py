"""``dispatchlab demo``: a real comparison (baselines and a CP dispatcher, with its report)
that builds no compiled unit, so a fresh install runs it in about a minute."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from dispatchlab.cli.demo_cmd import DEMO_DISPATCHERS, without_numba


@pytest.mark.slow  # ~17 s CPU: three processes import the whole stack
def test_demo_compares_without_building_compiled_units(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if k not in ("DISPATCHLAB_NO_NUMBA",
                                                              "DISPATCHLAB_NO_AOT")}
    env["DISPATCHLAB_CACHE_DIR"] = str(cache)  # where a compiled-unit build would go
    out = tmp_path / "demo"
    proc = subprocess.run(
        [sys.executable, "-m", "dispatchlab.cli.main", "demo", "--jobs", "200",
         "--windows", "2", "--workers", "2", "--out", str(out)],
        capture_output=True, text=True, env=env, cwd=tmp_path, check=False, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "first 200 jobs" in proc.stdout
    results = pd.read_csv(out / "results.csv")
    assert set(results["dispatcher"]) == set(DEMO_DISPATCHERS)
    assert len(results) == len(DEMO_DISPATCHERS) * 3  # the whole slice and 2 windows
    assert (results["jobs"][results["window"].isna()] == 200).all()
    assert set(results["loop"]) == {"general"}
    assert (out / "report" / "index.html").stat().st_size > 0
    assert not cache.exists() or not list(cache.iterdir())


def test_the_demo_leaves_the_environment_as_it_found_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPATCHLAB_NO_NUMBA", raising=False)
    with without_numba():
        assert os.environ["DISPATCHLAB_NO_NUMBA"] == "1"
    assert "DISPATCHLAB_NO_NUMBA" not in os.environ
    monkeypatch.setenv("DISPATCHLAB_NO_NUMBA", "")  # the user's choice (Numba on) is kept
    with without_numba():
        assert os.environ["DISPATCHLAB_NO_NUMBA"] == ""
    assert os.environ["DISPATCHLAB_NO_NUMBA"] == ""
