"""Shared test helpers: where the real traces are, and tiny workload builders.

Real traces are found through the trace catalogue (``dispatchlab.traces``): the folders of
``$DISPATCHLAB_TRACES``, the cache (``dispatchlab traces fetch …``), then ``../shared/traces``
beside this repository. Tests never download (``DISPATCHLAB_OFFLINE=1`` unless set
otherwise); a test whose trace is absent is skipped, and the run ends by saying how many
were and how to fetch their traces.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("DISPATCHLAB_OFFLINE", "1")

from dispatchlab.traces.catalogue import find_trace
from dispatchlab.traces.errors import TraceError
from dispatchlab.traces.resolve import resolve
from dispatchlab.workload.workload import Workload
from tests import aot_prebuild
from tests.skip_summary import skip_lines

REPO = Path(__file__).resolve().parents[1]

#: how a skip for a missing trace starts (counted at the end of the run)
MISSING = "missing trace"
_MISSING_NAME = re.compile(MISSING + r" ([^\s:]+):")


def trace_path(ref: str) -> Path:
    """Local path of a catalogued trace (``KTH-SP2``, a file name such as
    ``KTH-SP2-1996-2.1-cln.swf.gz``, a layout path ``eurora/...``, or ``NAME/SUB``); the test
    is skipped when no checked local copy exists."""
    try:
        return resolve(ref, fetch=False)
    except TraceError:
        name = find_trace(ref)[0].name
        pytest.skip(f"{MISSING} {name}: not present locally (`dispatchlab traces fetch {name}`)")


def trace_available(ref: str) -> bool:
    """Whether a checked local copy of the trace (file or folder part) exists."""
    try:
        resolve(ref, fetch=False)
    except TraceError:
        return False
    return True


def missing_reason(ref: str) -> str:
    """The skip reason for a module or test that needs ``ref``."""
    name = find_trace(ref)[0].name
    return f"{MISSING} {name}: not present locally (`dispatchlab traces fetch {name}`)"


def needs_trace(ref: str) -> pytest.MarkDecorator:
    """Skip a test or module (``pytestmark``) when the trace ``ref`` has no local copy."""
    return pytest.mark.skipif(not trace_available(ref), reason=missing_reason(ref))


#: ``gen:curie-thesis`` reads the Curie log: tests that generate it need that trace
needs_curie = needs_trace("CEA-Curie")


def shared_trace(name: str) -> Path:
    """Path of a real trace by file or catalogue name; skipped when it is absent."""
    return trace_path(name)


def pytest_configure(config: Any) -> None:
    """A parallel run builds the ahead-of-time units in the background from the start."""
    aot_prebuild.start(config)


def pytest_unconfigure(config: Any) -> None:
    aot_prebuild.stop()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    """List the skipped tests grouped by reason, with counts; say how many were skipped for
    a missing trace and how to fetch them."""
    skipped = terminalreporter.stats.get("skipped", [])
    if skipped:
        terminalreporter.write_sep("-", f"{len(skipped)} skipped, by reason")
        for line in skip_lines(skipped):
            terminalreporter.write_line(line)
    names: set[str] = set()
    count = 0
    for report in skipped:
        longrepr = getattr(report, "longrepr", None)
        reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else ""
        found = _MISSING_NAME.search(str(reason))
        if found:
            count += 1
            names.add(found.group(1))
    if count:
        listed = " ".join(sorted(names))
        terminalreporter.write_sep("-", "missing traces")
        terminalreporter.write_line(
            f"{count} test(s) skipped for a missing trace ({listed}). Fetch them with\n"
            f"    .venv/bin/dispatchlab traces fetch {listed}\n"
            "(or `traces fetch --all`, about 56 MB) and run again; docs/traces.md says more.")


def jobs(*rows: tuple[int, int, int, int], **extra: object) -> Workload:
    """Workload from ``(submit, runtime, walltime, units)`` rows of 1-core units."""
    submit, runtime, walltime, units = (list(c) for c in zip(*rows, strict=True))
    return Workload.from_columns(
        submit=submit, runtime=runtime, walltime=walltime, units=units,
        req={"cores": [1] * len(rows)}, **extra,  # type: ignore[arg-type]
    )
