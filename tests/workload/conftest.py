"""Helpers for the workload tests: where the shared traces are, and workload equality."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from dispatchlab.workload.workload import Workload
from tests.conftest import trace_path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"

ROW_COLUMNS = (
    "job_id",
    "submit",
    "walltime",
    "runtime",
    "units",
    "req",
    "queue",
    "user",
    "app",
    "power",
    "est",
    "lst",
    "logged_wait",
)


def shared(*parts: str) -> Path:
    """A real trace file or folder by its path in the trace layout (``swf/…``,
    ``eurora/…``), found through the catalogue; the test is skipped when it is absent."""
    return trace_path("/".join(parts))


def assert_same_workload(a: Workload, b: Workload, *, source: bool = False) -> None:
    """Equal columns, name tables and attributes (``meta`` as JSON sees it)."""
    for name in ROW_COLUMNS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype, name
        assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), name
    assert a.resources == b.resources
    assert a.queues == b.queues
    assert a.users == b.users
    assert a.apps == b.apps
    assert a.origin_unix == b.origin_unix
    assert a.timezone == b.timezone
    assert _json(a.meta) == _json(b.meta)
    if source:
        assert a.source == b.source


def assert_same_jobs(a: Workload, b: Workload) -> None:
    """The same jobs as labelled columns (name tables may be ordered differently)."""
    fa, fb = a.to_frame(), b.to_frame()
    assert list(fa.columns) == list(fb.columns)
    for col in fa.columns:
        assert np.array_equal(
            fa[col].to_numpy(), fb[col].to_numpy(), equal_nan=fa[col].dtype.kind == "f"
        ), col


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))
