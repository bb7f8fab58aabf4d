"""``dispatchlab report``: the interactive report of the runs stored in a folder (written by
``compare``, ``demo`` or ``run-experiment``)."""

from __future__ import annotations

import shlex
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from dispatchlab.cli.app import app
from dispatchlab.cli.errors import friendly_errors
from dispatchlab.cli.results_cmd import _experiment_stats, _planned_keys, warn_damaged
from dispatchlab.cli.simulate_cmd import console
from dispatchlab.errors import ConfigError
from dispatchlab.experiments.store import RunRecord, RunStore
from dispatchlab.input_files import folder_problem


def report_context(records: list[RunRecord]) -> dict[str, Any]:
    """Workload(s), platform, creation time and command line shown at the top."""
    main = [r for r in records if r.labels.get("window") is None] or records
    workloads = list(dict.fromkeys(str(r.labels.get("workload")) for r in main))
    first = main[0]
    plat = first.doc.get("simulation", {}).get("platform", {})
    jobs = int(first.summary.get("jobs", 0))
    what = (f"{workloads[0]} ({jobs:,} jobs)" if len(workloads) == 1
            else f"{len(workloads)} workloads: " + ", ".join(workloads[:8])
            + (" …" if len(workloads) > 8 else ""))
    ctx: dict[str, Any] = {"workload": what}
    if plat:
        ctx["platform"] = (f"{plat.get('name')} ({plat.get('nodes')} nodes; "
                           + ", ".join(f"{v:,} {k}" for k, v in plat.get("total", {}).items())
                           + ")")
    ctx["created"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    ctx["command"] = " ".join(shlex.quote(a) for a in ["dispatchlab", *sys.argv[1:]])
    return ctx


@app.command("report")
@friendly_errors
def report_command(
    directory: Annotated[Path, typer.Argument(help="Output folder of compare, demo or "
                                              "run-experiment.")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Report folder (default: "
                                              "DIRECTORY/report).")] = None,
    title: Annotated[str | None, typer.Option(help="Title of the page.")] = None,
    gantt_max_jobs: Annotated[int, typer.Option(
        help="Jobs drawn as bars per Gantt chart (more: a window of them over an occupancy "
             "map; the static PNG Gantt charts only up to this many jobs); 0: none.")] = 5000,
) -> None:
    """Write the interactive report (DIRECTORY/report/index.html: zoomable time series,
    Gantt charts, sortable tables, a section per family of results) and the PNG/SVG figures
    for papers, from every run stored under DIRECTORY/runs."""
    from dispatchlab.report.analysis import DEFAULT_STATS_METRICS, build_comparison
    from dispatchlab.report.build import write_report

    problem = folder_problem(directory)
    if problem:
        raise ConfigError(f"{directory}: {problem}", field="DIR")
    if not (directory / "runs").is_dir():
        raise ConfigError(f"{directory} has no runs/ folder", field="DIR")
    if gantt_max_jobs < 0:
        raise ConfigError(f"must be 0 (no Gantt charts) or more, got {gantt_max_jobs}",
                          field="--gantt-max-jobs")
    store = RunStore(directory)
    keys = _planned_keys(directory)
    records = list(store.records(keys))
    warn_damaged(store, keys)  # as `results` does
    if not records:
        raise ConfigError(f"no usable runs under {directory / 'runs'}", field="DIR")
    stats = _experiment_stats(directory)
    cmp = build_comparison(
        records, title=title or f"Dispatchers: {directory.name}",
        order=[d for d in store.planned_dispatchers()
               if d in {r.labels["dispatcher"] for r in records}] or None,
        stats_metrics=stats.get("metrics", list(DEFAULT_STATS_METRICS)),
        alpha=stats.get("alpha", 0.05), adjust=stats.get("p_adjust", "holm"),
        confidence=stats.get("confidence", 0.95), context=report_context(records))
    files = write_report(cmp, out or directory / "report", gantt_max_jobs=gantt_max_jobs)
    console.print(f"report: {files.html}", highlight=False, soft_wrap=True)
