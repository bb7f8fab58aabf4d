"""``dispatchlab run-experiment``: a grid of runs from a TOML file, resumable."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dispatchlab.atomic_output import atomic_output, check_not_file
from dispatchlab.cli.app import app
from dispatchlab.cli.compare_cmd import (
    MaybeBackendOpt,
    OldEngineOpt,
    SchedulerOpt,
    WorkersOpt,
    backend_from,
    execute,
    report_outcome,
    warn_missing_schedules,
)
from dispatchlab.cli.errors import friendly_errors
from dispatchlab.cli.results_cmd import summarize_folder
from dispatchlab.cli.simulate_cmd import console
from dispatchlab.errors import ConfigError
from dispatchlab.experiments.campaign import simulation_groups
from dispatchlab.experiments.grid import plan
from dispatchlab.experiments.spec import load_experiment
from dispatchlab.experiments.store import RunStore
from dispatchlab.input_files import read_text


@app.command("run-experiment")
@friendly_errors
def run_experiment_command(
    experiment: Annotated[Path, typer.Argument(help="Experiment file (TOML).", exists=False)],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Output folder (default: the file's 'out', else ./<name>)."
        ),
    ] = None,
    backend: MaybeBackendOpt = None,
    engine: OldEngineOpt = None,
    scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Validate and list the runs; run nothing.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
) -> None:
    """Run every workload × platform × dispatcher × parameter × seed of EXPERIMENT.

    Each finished run is stored at once under OUT/runs/<hash>/; running the same file again
    skips the runs already stored, so an interrupted campaign resumes where it stopped.
    The whole file is checked before anything runs. At the end the runs are gathered into
    OUT/results.parquet/.csv and the statistics are printed.
    """
    # read once: the file may be a pipe, and its copy in OUT is this very text
    text = read_text(experiment, lambda why: ConfigError(why, source=str(experiment)))
    spec = load_experiment(experiment, text)
    runs = plan(spec, experiment.parent, source=str(experiment))
    if out is None:
        out = experiment.parent / spec.out if spec.out else Path(spec.name)
    check_not_file(out, "--out")  # refused before anything is said or run
    ex = spec.execution
    eng = backend_from(backend, engine) or ex.backend
    sched = scheduler or ex.scheduler
    n_workers = workers or ex.workers
    dims = {
        k: len({getattr(r.labels, k) for r in runs})
        for k in ("workload", "platform", "dispatcher", "seed")
    }
    windows = len({(r.labels.workload, r.labels.window) for r in runs})
    pricing = len({r.labels.pricing for r in runs} - {None})
    sims = len(simulation_groups(runs))
    quiet = as_json
    if not quiet:
        console.print(
            f"experiment {spec.name}: {len(runs)} runs ({dims['workload']} workloads"
            f"{f', {windows} sets of jobs' if windows > dims['workload'] else ''} × "
            f"{f'{pricing} pricing scenarios × ' if pricing else ''}"
            f"{dims['platform']} platforms × {dims['dispatcher']} dispatchers × "
            f"{dims['seed']} seeds{f'; {sims} simulations' if sims < len(runs) else ''})"
            f" → {out}",
            highlight=False,
            soft_wrap=True,
        )
    if dry_run:
        for r in runs:
            typer.echo(f"{r.key}  {r.labels.block}  {r.labels.dispatcher}")
        return
    if experiment.resolve() != (out / "experiment.toml").resolve():
        with atomic_output(out / "experiment.toml") as tmp:
            Path(tmp).write_text(text, encoding="utf-8")  # read once: a pipe too
    RunStore(out).write_plan(spec.model_dump(), runs)
    outcome = execute(runs, out, eng, sched, n_workers, quiet=quiet)
    report_outcome(outcome, runs, quiet=quiet)
    warn_missing_schedules(runs, out)
    summarize_folder(
        out,
        metrics=spec.stats.metrics,
        alpha=spec.stats.alpha,
        adjust=spec.stats.p_adjust,
        confidence=spec.stats.confidence,
        keys={r.key for r in runs},
        as_json=as_json,
        extra={
            "stored": outcome.stored,
            "skipped": outcome.skipped,
            "failed": outcome.failures,
            "backend": outcome.backend,
        },
    )
    if outcome.failures:
        raise typer.Exit(1)
