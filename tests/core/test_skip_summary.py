"""The end-of-run summary groups skipped tests by reason, with counts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from _pytest.reports import TestReport

from tests.skip_summary import skip_lines, skips_by_reason

REPO = Path(__file__).resolve().parents[2]


def _skipped(reason: str, where: str = "tests/x.py") -> TestReport:
    return TestReport(nodeid=f"{where}::t", location=(where, 1, "t"), keywords={},
                      outcome="skipped", longrepr=(where, 3, f"Skipped: {reason}"),
                      when="setup")


def test_skips_are_counted_per_reason_most_first() -> None:
    reports = [_skipped("no Slurm"), _skipped("missing trace HPC2N: fetch it", "tests/y.py"),
               _skipped("no Slurm", "tests/z.py"), _skipped("no Slurm")]
    assert skips_by_reason(reports) == [("no Slurm", 3), ("missing trace HPC2N: fetch it", 1)]
    assert skip_lines(reports) == ["3  no Slurm", "1  missing trace HPC2N: fetch it"]


def test_a_run_ends_with_its_skips_grouped(tmp_path: Path) -> None:
    (tmp_path / "test_some.py").write_text(
        "import pytest\n"
        "@pytest.mark.parametrize('i', range(3))\n"
        "def test_a(i):\n    pytest.skip('needs a GPU')\n"
        "def test_b():\n    pytest.skip('needs Slurm')\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "tests.conftest",
         "-c", str(REPO / "pyproject.toml"), str(tmp_path / "test_some.py")],
        capture_output=True, text=True, cwd=REPO, check=False, timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(REPO), os.environ.get("PYTHONPATH", "")])})
    out = proc.stdout
    assert "4 skipped, by reason" in out, out
    assert "3  needs a GPU" in out and "1  needs Slurm" in out
    assert "SKIPPED [" not in out  # no per-location skip lines besides the groups
