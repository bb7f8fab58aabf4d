"""``dispatchlab demo``: compare the baseline dispatchers and a constraint-programming one on
a real trace bundled with the package (the first 5,000 jobs of the KTH SP2 log), print the
table and write the report."""

from __future__ import annotations

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


def demo_trace() -> Path:
    """Path of the real trace slice shipped with the package."""
    return sample_trace()


@app.command("demo")
@friendly_errors
def demo_command(
    out: Annotated[Path, typer.Option(help="Where to write runs, tables and the report.")] = Path(
        "demo-output"
    ),
    windows: Annotated[
        int, typer.Option(min=1, help="Trace windows for the statistics.")
    ] = DEMO_WINDOWS,
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
        f"workload: {DEMO_TRACE} (bundled), dispatchers: {', '.join(chosen)}, "
        f"{windows} trace windows for the statistics",
        highlight=False,
        soft_wrap=True,
    )
    entry = workload_entry(str(demo_trace()), LoadOptions())
    req = CompareRequest(
        workload=entry,
        dispatchers=chosen,
        out=out,
        windows=windows,
        backend=backend_from(backend, engine) or "local",
        scheduler=scheduler,
        workers=workers,
        title="Dispatchers on the KTH SP2 trace (first 5,000 jobs)",
    )
    code = run_compare(req)
    if code:
        raise typer.Exit(code)
