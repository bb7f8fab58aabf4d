"""Shared test helpers: where the real traces are, and tiny workload builders."""

from __future__ import annotations

from pathlib import Path

import pytest

from dispatchlab.workload.workload import Workload

REPO = Path(__file__).resolve().parents[1]
SHARED = (REPO / ".." / "shared").resolve()
TRACES = SHARED / "traces"
SWF = TRACES / "swf"


def shared_trace(name: str) -> Path:
    """Path of a shared real trace; the test is skipped when the shared folder is absent."""
    path = SWF / name
    if not path.exists():
        pytest.skip(f"shared trace {name} not available")
    return path


def jobs(*rows: tuple[int, int, int, int], **extra: object) -> Workload:
    """Workload from ``(submit, runtime, walltime, units)`` rows of 1-core units."""
    submit, runtime, walltime, units = (list(c) for c in zip(*rows, strict=True))
    return Workload.from_columns(
        submit=submit, runtime=runtime, walltime=walltime, units=units,
        req={"cores": [1] * len(rows)}, **extra,  # type: ignore[arg-type]
    )
