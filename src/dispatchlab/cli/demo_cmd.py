"""``dispatchlab demo``: compare the baseline dispatchers and a constraint-programming one on
a real trace bundled with the package (the first 2,000 jobs of the KTH SP2 slice), print the
table and write the report.

The demo's runs are small: the general loop runs each baseline in about a second, where
building the compiled units would cost minutes of CPU on a fresh install. So the demo runs
without Numba (``DISPATCHLAB_NO_NUMBA=1``, unless that variable is set, even empty); the
schedules are the same (equal digests across loops).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from dispatchlab.atomic_output import check_not_file
from dispatchlab.cli.app import app
from dispatchlab.cli.compare_cmd import (
    BackendOpt,
    CompareRequest,
    OldEngineOpt,
    SchedulerOpt,
    WorkersOpt,
    backend_from,
    run_compare,
    workload_entry,
)
from dispatchlab.cli.errors import friendly_errors
from dispatchlab.cli.options import LoadOptions
from dispatchlab.cli.simulate_cmd import console
from dispatchlab.traces.bundled import SAMPLE_TRACE, sample_trace

DEMO_TRACE = SAMPLE_TRACE

#: The dispatchers the demo compares (those not registered yet are skipped with a note).
DEMO_DISPATCHERS = ("fifo", "sjf", "easy", "conservative", "pbs-fifo", "pbs-walltime", "hcp3")

#: Trace windows used for the significance tests.
DEMO_WINDOWS = 5

#: Jobs of the bundled slice the demo simulates (the CP dispatcher costs ~6 ms CPU a job).
DEMO_JOBS = 2000


def demo_trace() -> Path:
    """Path of the real trace slice shipped with the package."""
    return sample_trace()


@contextmanager
def without_numba() -> Iterator[None]:
    """``DISPATCHLAB_NO_NUMBA=1`` for the processes started meanwhile (the run workers),
    unless the variable is set; the environment is as before afterwards."""
    given = "DISPATCHLAB_NO_NUMBA" in os.environ
    if not given:
        os.environ["DISPATCHLAB_NO_NUMBA"] = "1"
    try:
        yield
    finally:
        if not given:
            os.environ.pop("DISPATCHLAB_NO_NUMBA", None)


@app.command("demo")
@friendly_errors
def demo_command(
    out: Annotated[Path, typer.Option(help="Where to write runs, tables and the report.")] = Path(
        "demo-output"
    ),
    windows: Annotated[
        int, typer.Option(min=1, help="Trace windows for the statistics.")
    ] = DEMO_WINDOWS,
    jobs: Annotated[
        int, typer.Option(min=1, help="Jobs of the bundled slice to simulate (its first N).")
    ] = DEMO_JOBS,
    backend: BackendOpt = "local",
    engine: OldEngineOpt = None,
    scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None,
) -> None:
    """Compare FIFO, SJF, EASY, conservative backfilling, the two PBS presets and the CP
    dispatcher hcp3 on the bundled KTH SP2 slice; print the table and write
    OUT/report/index.html."""
    from dispatchlab.dispatchers.registry import presets

    check_not_file(out, "--out")
    known = presets()
    chosen = [d for d in DEMO_DISPATCHERS if d in known]
    missing = [d for d in DEMO_DISPATCHERS if d not in known]
    if missing:
        console.print(
            f"[yellow]not registered yet, skipped:[/] {', '.join(missing)}",
            highlight=False,
            soft_wrap=True,
        )
    console.print(
        f"workload: first {jobs:,} jobs of {DEMO_TRACE} (bundled), "
        f"dispatchers: {', '.join(chosen)}, {windows} trace windows for the statistics",
        highlight=False,
        soft_wrap=True,
    )
    entry = workload_entry(str(demo_trace()), LoadOptions(limit=jobs))
    req = CompareRequest(
        workload=entry,
        dispatchers=chosen,
        out=out,
        windows=windows,
        backend=backend_from(backend, engine) or "local",
        scheduler=scheduler,
        workers=workers,
        title=f"Dispatchers on the KTH SP2 trace (first {jobs:,} jobs)",
    )
    with without_numba():  # small runs: building the compiled units would cost more
        code = run_compare(req)
    if code:
        raise typer.Exit(code)
