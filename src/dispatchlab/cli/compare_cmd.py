"""``dispatchlab compare``: several dispatchers on one workload and platform, side by side."""

from __future__ import annotations

import json
import math
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as Bar
from rich.table import Table

from dispatchlab.atomic_output import atomic_output, check_not_file
from dispatchlab.cli.app import app
from dispatchlab.cli.errors import check_level, err_console, flag_fields, friendly_errors
from dispatchlab.cli.options import (
    LoadOptions,
    PlatformOpt,
    RunOptions,
    WorkloadOpt,
    as_option_error,
    with_load_options,
    with_run_options,
)
from dispatchlab.cli.simulate_cmd import console
from dispatchlab.errors import ConfigError, DispatchlabError
from dispatchlab.experiments.backends import make_backend
from dispatchlab.experiments.campaign import CampaignOutcome, Progress, run_campaign
from dispatchlab.experiments.collect import write_tables
from dispatchlab.experiments.config import PlannedRun
from dispatchlab.experiments.grid import plan
from dispatchlab.experiments.spec import parse_experiment
from dispatchlab.experiments.store import RunStore
from dispatchlab.report.analysis import DEFAULT_STATS_METRICS, Comparison, build_comparison
from dispatchlab.report.format import fmt_metric
from dispatchlab.report.tables import best_rows, group_label, group_rows, groups_of
from dispatchlab.report.web.tables import SHORT
from dispatchlab.stats.metrics import METRICS
from dispatchlab.stats.ranking import Ranking

#: Width of tables written to a pipe or file (a terminal's own width is used otherwise).
PIPE_WIDTH = 150

#: Columns of the terminal table and their short headers (the HTML report's; it shows more).
TERMINAL_METRICS = {k: SHORT[k] for k in (
    "mean_wait", "p90_wait", "mean_bounded_slowdown", "max_bounded_slowdown", "utilization",
    "makespan", "killed", "dispatch_time_mean_ms")}

_BACKEND_HELP = ("Where runs execute: local (process pool) | dask-local (starts a local "
                 "Dask cluster) | dask (connect to --scheduler).")
BackendOpt = Annotated[str, typer.Option("--backend", help=_BACKEND_HELP)]
#: The same option where leaving it out means "the experiment file's choice".
MaybeBackendOpt = Annotated[
    str | None, typer.Option("--backend", help=_BACKEND_HELP + " Default: the file's.")
]
#: ``--engine``/``-e``: the old name of ``--backend`` (hidden, still accepted).
OldEngineOpt = Annotated[
    str | None, typer.Option("--engine", "-e", hidden=True, help="Deprecated: --backend.")
]


#: Where runs can execute (experiments/backends.py).
BACKENDS = ("local", "dask-local", "dask")


def backend_from(backend: str | None, old_engine: str | None) -> str | None:
    """``--backend``, or the deprecated ``--engine`` (with a warning on stderr)."""
    if old_engine is not None:
        err_console.print("warning: --engine is deprecated for compare/run-experiment/demo; "
                          "use --backend", highlight=False)
        backend = old_engine
    if backend is not None and backend not in BACKENDS:
        raise ConfigError(f"unknown backend '{backend}' (known: {', '.join(BACKENDS)})",
                          field="--backend")
    return backend


SchedulerOpt = Annotated[
    str | None,
    typer.Option(
        "--scheduler", help="Dask scheduler address for --backend dask, e.g. tcp://host:8786."
    ),
]
WorkersOpt = Annotated[
    int | None,
    typer.Option("--workers", help="Worker processes for local / dask-local (default: the cores)."),
]


@dataclass
class CompareRequest:
    """Everything ``compare`` (and ``demo``) needs, as plain values."""

    workload: dict[str, Any]
    dispatchers: list[str]
    out: Path
    platform: str = "auto"
    seeds: list[int] = field(default_factory=lambda: [0])
    windows: int = 1
    backend: str = "local"
    scheduler: str | None = None
    workers: int | None = None
    on_infeasible: str = "error"
    stats_metrics: list[str] = field(default_factory=lambda: list(DEFAULT_STATS_METRICS))
    alpha: float = 0.05
    p_adjust: str = "holm"
    confidence: float = 0.95
    report: bool = True
    gantt_max_jobs: int = 5000
    as_json: bool = False
    title: str | None = None
    progress: bool = True
    schedule_formats: list[str] = field(default_factory=list)


def show(renderable: object) -> None:
    """Print a table; when the output is not a terminal, wide enough not to truncate."""
    if console.is_terminal:
        console.print(renderable)
    else:
        Console(width=PIPE_WIDTH, highlight=False).print(renderable)


def split_dispatchers(values: Sequence[str]) -> list[str]:
    """``["fifo,sjf", "order=sjf,select=easy"]`` → presets split on commas, specs kept whole.

    ``all`` stands for every rule-based preset (the family that runs on any workload);
    ``family:NAME`` for every preset of one family (``dispatchlab dispatchers`` lists them).
    A dispatcher named twice is refused (its runs would repeat, as an experiment refuses
    them); one also in a family given is run once.
    """
    from dispatchlab.dispatchers.registry import presets

    known = presets()
    families = sorted({e.family for e in known.values() if e.family})
    out: list[str] = []
    named: set[str] = set()

    def name(item: str) -> None:
        if item in named:
            raise ConfigError(f"dispatcher '{item}' is given twice (its runs would be the "
                              "same; give it once)", field="dispatchers")
        named.add(item)
        out.append(item)

    for v in values:
        if "=" in v:
            name(v.strip())
            continue
        for part in v.split(","):
            part = part.strip()
            family = "rule-based" if part == "all" else (
                part.split(":", 1)[1] if part.startswith("family:") else None)
            if family is not None:
                if family not in families:
                    raise ConfigError(f"unknown dispatcher family '{family}' (known: "
                                      f"{', '.join(families)})", field="dispatchers")
                out.extend(n for n, e in known.items() if e.family == family)
            elif part:
                name(part)
    if not out:
        raise ConfigError("give at least one dispatcher", field="dispatchers")
    return list(dict.fromkeys(out))


def parse_seeds(text: str) -> list[int]:
    """``0,1,2`` or a range ``0-4``."""
    seeds: list[int] = []
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part:
                a, b = part.split("-", 1)
                seeds.extend(range(int(a), int(b) + 1))
            elif part:
                seeds.append(int(part))
        except ValueError:
            raise ConfigError(
                f"expected seeds like 0,1,2 or 0-4, got '{text}'", field="seeds"
            ) from None
    if not seeds:
        raise ConfigError("give at least one seed", field="seeds")
    return seeds


def progress_bar(enabled: bool) -> tuple[Bar | None, Callable[[Progress], None] | None]:
    """A rich progress bar and the callback that feeds it (None when disabled)."""
    if not enabled:
        return None, None
    bar = Bar(
        TextColumn("runs"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[info]}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
    task = bar.add_task("runs", total=1, info="")

    def update(p: Progress) -> None:
        info = f"{p.skipped} already done" if p.skipped else ""
        if p.failed:
            info += f", {p.failed} failed"
        bar.update(task, total=p.total, completed=p.finished, info=info)

    return bar, update


def execute(
    runs: Sequence[PlannedRun],
    out: Path,
    backend: str,
    scheduler: str | None,
    workers: int | None,
    *,
    quiet: bool,
) -> CampaignOutcome:
    """Run the runs not yet in ``out/runs`` on the chosen backend, with a progress bar.

    Ctrl-C stops with exit code 130 and says how to resume.
    """
    store = RunStore(out)
    eng = make_backend(backend, scheduler=scheduler, workers=workers)
    bar, update = progress_bar(not quiet and console.is_terminal)
    try:
        with eng:
            if bar is not None:
                with bar:
                    outcome = run_campaign(runs, store, eng, on_progress=update)
            else:
                outcome = run_campaign(runs, store, eng)
    except KeyboardInterrupt:
        done = sum(store.is_done(r.key) for r in runs)
        err_console.print(
            f"interrupted: {done} of {len(runs)} runs are stored in {out}/runs; "
            "run the same command again to resume",
            highlight=False,
        )
        raise typer.Exit(130) from None
    return outcome


def warn_missing_schedules(runs: Sequence[PlannedRun], out: Path) -> None:
    """Say which stored runs lack an asked-for schedule layout (stored by an earlier
    command without it: the layouts are not part of a run's hash)."""
    from dispatchlab.metrics.schedule_files import SCHEDULE_FILES

    store = RunStore(out)
    lacking = [r.key for r in runs if store.is_done(r.key) and any(
        not (store.path(r.key) / SCHEDULE_FILES[f]).is_file()
        for f in r.config.schedule_formats)]
    if lacking:
        err_console.print(f"warning: {len(lacking)} run(s) stored earlier without the asked "
                          f"schedule layout (first: {out}/runs/{lacking[0]}); use another "
                          "--out to write it for every run", highlight=False, soft_wrap=True)


def report_outcome(outcome: CampaignOutcome, runs: Sequence[PlannedRun], *, quiet: bool) -> None:
    """One line on what ran, then one line per failed run."""
    if not quiet:
        console.print(
            f"{outcome.total} runs: {outcome.stored} run now, {outcome.skipped} "
            f"already done, {len(outcome.failures)} failed "
            f"(backend {outcome.backend})",
            highlight=False,
            soft_wrap=True,
        )
    labels = {r.key: r.labels for r in runs}
    for key, why in outcome.failures.items():
        lab = labels[key]
        where = (
            f"{lab.dispatcher} on {lab.workload}"
            + (f" window {lab.window}" if lab.window is not None else "")
            + f" seed {lab.seed}"
        )
        err_console.print(
            f"[bold red]failed:[/] {where} (run {key}): {why}", highlight=False, soft_wrap=True
        )


# --- terminal tables ----------------------------------------------------------------------


def print_comparison(cmp: Comparison) -> None:
    """Summary, per-class (and per-queue) tables and the rankings, on the terminal."""
    t = Table(title=cmp.title, title_justify="left")
    t.add_column("dispatcher", no_wrap=True)
    keys = [k for k in TERMINAL_METRICS if k in cmp.summary]
    for k in keys:
        t.add_column(TERMINAL_METRICS[k], justify="right")
    best = {k: best_rows(cmp.summary, k) for k in keys}
    for d, row in cmp.summary.iterrows():
        t.add_row(
            str(d),
            *(
                f"[bold green]{fmt_metric(k, row[k])}[/]"
                if str(d) in best[k]
                else fmt_metric(k, row[k])
                for k in keys
            ),
        )
    show(t)
    for kind, table in (("class", cmp.classes), ("queue", cmp.queues)):
        if not len(table):
            continue
        groups = groups_of(table)
        gt = Table(
            title="by job duration class (actual run time; bsld = bounded slowdown)"
            if kind == "class"
            else "by queue",
            title_justify="left",
        )
        gt.add_column("dispatcher", no_wrap=True)
        for g in groups:
            n = float(table[(g, "jobs")].iloc[0])
            label = str(g) if kind == "class" else group_label(kind, str(g))
            jobs = (
                ""
                if math.isnan(n)
                else f" ({int(n):,} jobs)"
                if n == int(n)
                else f" (≈{n:,.0f} jobs)"
            )
            gt.add_column(f"{label}{jobs}\nmean wait", justify="right")
            gt.add_column("\nmean bsld", justify="right")
        for cells in group_rows(table, ("mean_wait", "mean_bounded_slowdown")):
            gt.add_row(*cells)
        show(gt)
    if cmp.stats is not None:
        console.print(
            f"statistics over {cmp.sets_label} (N = {cmp.stats.n_sets})",
            highlight=False,
            soft_wrap=True,
        )
        for r in cmp.stats.rankings.values():
            print_ranking(r)
    else:
        console.print(
            "[dim]one set only: add --windows K (or seeds of a seeded generator) for "
            "confidence intervals and significance tests[/]"
        )
    if cmp.stats_note:
        console.print(f"[dim]{cmp.stats_note}[/]", highlight=False, soft_wrap=True)


def print_ranking(r: Ranking) -> None:
    """The "significantly better" table of one metric."""
    info = METRICS[r.metric]
    fr = r.friedman
    head = f"ranking by {info.label}"
    if fr is not None:
        head += (
            f": Friedman χ² = {fr.chi2:.2f}, p = {fr.p_value:.3g} (k = {fr.k}, "
            f"N = {fr.n_blocks}); SE = {r.standard_error:.3f}, α = {r.alpha}, "
            f"{'Holm' if r.adjust == 'holm' else 'unadjusted'} p"
        )
    if not r.rows or (fr is None and len(r.rows) < 2):
        console.print(f"{head}: [dim]{r.note}[/]", highlight=False, soft_wrap=True)
        return
    console.print(head, highlight=False, soft_wrap=True)
    t = Table()
    for col in ("tier", "dispatcher", "mean rank", "significantly better than"):
        t.add_column(col, justify="right" if col in ("tier", "mean rank") else "left")
    for row in r.rows:
        t.add_row(
            str(row.tier) if row.tier else "–",
            row.name,
            f"{row.mean_rank:.2f}",
            ", ".join(row.better_than) or "–",
        )
    show(t)
    if r.note:
        console.print(f"[dim]{r.note}[/]", highlight=False, soft_wrap=True)


# --- the command --------------------------------------------------------------------------


def build_runs(req: CompareRequest) -> tuple[dict[str, Any], list[PlannedRun]]:
    """The experiment a comparison amounts to, and its runs (planned and validated)."""
    entries = [{**req.workload}]
    if req.windows > 1:
        entries.append({**req.workload, "windows": req.windows})
    data = {
        "name": req.title or "compare",
        "workloads": entries,
        "platforms": [req.platform],
        "dispatchers": req.dispatchers,
        "seeds": req.seeds,
        "on_infeasible": req.on_infeasible,
        "schedule_format": req.schedule_formats,
    }
    try:
        spec = parse_experiment(data)
        return spec.model_dump(), plan(spec, Path.cwd())
    except ConfigError as exc:  # name compare's options, not the experiment file's keys
        from dispatchlab.cli.compare_terms import in_command_terms

        named = as_option_error(exc)
        if named is not exc:
            raise named from None
        raise in_command_terms(exc, req.dispatchers) from None


def run_compare(req: CompareRequest) -> int:
    """Run, print and report a comparison; the exit code (1 when some run failed)."""
    quiet = req.as_json
    check_not_file(req.out, "--out")
    experiment, runs = build_runs(req)
    RunStore(req.out).write_plan(experiment, runs)
    outcome = execute(runs, req.out, req.backend, req.scheduler, req.workers,
                      quiet=quiet or not req.progress)
    report_outcome(outcome, runs, quiet=quiet)
    warn_missing_schedules(runs, req.out)
    records = list(RunStore(req.out).records({r.key for r in runs}))
    if not any(r.labels.get("window") is None for r in records):
        err_console.print("[bold red]error:[/] no run of the whole workload finished")
        return 1
    workload_label = runs[0].labels.workload
    first = next(r for r in records if r.labels.get("window") is None)
    plat = first.doc["simulation"]["platform"]
    n_jobs = int(first.summary["jobs"])
    context = {
        "workload": f"{workload_label} ({n_jobs:,} jobs)",
        "platform": f"{plat['name']} ({plat['nodes']} nodes; "
        + ", ".join(f"{v:,} {k}" for k, v in plat["total"].items())
        + ")",
        "created": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": " ".join(shlex.quote(a) for a in ["dispatchlab", *sys.argv[1:]]),
        "request": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(req).items()},
    }
    cmp = build_comparison(
        records,
        title=req.title or f"Dispatchers on {workload_label}",
        order=[
            r.labels.dispatcher
            for r in runs
            if r.labels.window is None and r.labels.seed == req.seeds[0]
        ],
        stats_metrics=req.stats_metrics,
        alpha=req.alpha,
        adjust=req.p_adjust,
        confidence=req.confidence,
        context=context,
    )
    write_tables(req.out, records)
    doc = cmp.to_json()
    with atomic_output(req.out / "compare.json") as tmp:
        tmp.write_text(json.dumps(doc, indent=2, default=str))
    page = None
    if req.report:
        from dispatchlab.report.build import write_report

        try:
            page = write_report(cmp, req.out / "report", gantt_max_jobs=req.gantt_max_jobs).html
        except KeyboardInterrupt:
            err_console.print(f"interrupted while writing the report to {req.out / 'report'}: "
                              "the runs are stored; run the same command again to write it",
                              highlight=False)
            raise typer.Exit(code=130) from None
        doc["report"] = str(page)
    if req.as_json:
        typer.echo(json.dumps(doc, default=str))
    else:
        print_comparison(cmp)
        console.print(
            f"results: {req.out}/results.csv" + (f"; report: {page}" if page else ""),
            highlight=False,
            soft_wrap=True,
        )
    return 1 if outcome.failures else 0


def workload_entry(path: str, opts: LoadOptions) -> dict[str, Any]:
    """The experiment-file form of the loading flags shared with ``simulate``."""
    from dispatchlab.input_files import is_pipe
    from dispatchlab.workload.load import detect_format

    entry: dict[str, Any] = {"path": path, "skip": opts.skip, "limit": opts.limit}
    if opts.format is not None:
        entry["format"] = opts.format
    p = Path(path)
    if is_pipe(p):
        raise ConfigError("a pipe is read once and compare loads the workload in every run: "
                          "save it to a file first", source=path, field="--workload")
    detected = opts.format
    if detected is None and p.exists():
        try:
            detected = detect_format(p)
        except DispatchlabError:
            detected = None
    if detected == "swf":
        entry["options"] = {
            "procs": opts.swf_procs,
            "missing_estimate": opts.swf_missing_estimate,
            "units": opts.swf_units,
            "cores_per_node": opts.swf_cores_per_node,
            "drop_zero_runtime": opts.drop_zero_runtime,
            "drop_invalid": not opts.keep_invalid,
            "skip_bad_lines": opts.skip_bad_lines,
        }
    if detected == "eurora" and opts.eurora_units != "requested":
        entry["options"] = {"units": opts.eurora_units}
    return entry


#: The run options compare cannot honour, and why: none.
COMPARE_REFUSES: dict[str, str] = {}


@app.command("compare")
@friendly_errors
@with_load_options
@with_run_options(COMPARE_REFUSES, "compare")
@flag_fields
def compare_command(
    workload: WorkloadOpt,
    dispatchers: Annotated[
        list[str],
        typer.Option(
            "--dispatchers",
            "-d",
            help="Comma-separated presets (fifo,sjf,easy), 'all' (the rule-based "
            "presets), 'family:NAME', or a key=value spec; repeat the option to add more.",
        ),
    ] = ["all"],  # noqa: B006
    platform: PlatformOpt = None,
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", help="Output folder (runs, tables, report). Re-running resumes."
        ),
    ] = Path("compare-output"),
    backend: BackendOpt = "local",
    engine: OldEngineOpt = None,
    scheduler: SchedulerOpt = None,
    workers: WorkersOpt = None,
    seeds: Annotated[str, typer.Option(
        "--seeds", "--seed", help="Seeds, e.g. 0 or 0,1,2 or 0-9.")] = "0",
    windows: Annotated[
        int,
        typer.Option(
            min=1,
            help="Also cut the workload into K consecutive windows and test which "
            "dispatchers are significantly better over them.",
        ),
    ] = 1,
    stats_metrics: Annotated[
        str, typer.Option(help="Metrics for the confidence intervals and rankings.")
    ] = ",".join(DEFAULT_STATS_METRICS),
    alpha: Annotated[float, typer.Option(help="Significance level.")] = 0.05,
    p_adjust: Annotated[str, typer.Option(help="holm | none (the paper's raw p-values).")] = "holm",
    report: Annotated[bool, typer.Option(help="Write the HTML report.")] = True,
    gantt_max_jobs: Annotated[
        int, typer.Option(help="Draw Gantt charts up to this many jobs.")
    ] = 5000,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
    *,
    load: LoadOptions,
    run: RunOptions,
) -> None:
    """Run several dispatchers on one workload and platform in parallel, print a comparison
    table and write a report folder (OUT/report/index.html)."""
    metrics = [m.strip() for m in stats_metrics.split(",") if m.strip()]
    check_level(alpha, "--alpha")
    if gantt_max_jobs < 0:
        raise ConfigError(f"must be 0 (no Gantt charts) or more, got {gantt_max_jobs}",
                          field="--gantt-max-jobs")
    for m in metrics:
        if m not in METRICS:
            raise ConfigError(
                f"unknown metric '{m}' (known: {', '.join(METRICS)})", field="stats-metrics"
            )
    if p_adjust not in ("holm", "none"):
        raise ConfigError("must be holm or none", field="p-adjust")
    if not 0 < alpha < 1:
        raise ConfigError("must be between 0 and 1", field="alpha")
    entry = {**workload_entry(workload, load), **run.workload_keys()}
    req = CompareRequest(
        workload=entry,
        dispatchers=split_dispatchers(dispatchers),
        out=out,
        platform=platform or "auto",
        seeds=parse_seeds(seeds),
        windows=windows,
        backend=backend_from(backend, engine) or "local",
        scheduler=scheduler,
        workers=workers,
        on_infeasible=run.on_infeasible,
        stats_metrics=metrics,
        alpha=alpha,
        p_adjust=p_adjust,
        report=report,
        gantt_max_jobs=gantt_max_jobs,
        as_json=as_json,
        progress=run.progress,
        schedule_formats=list(run.schedule_format or []),
    )
    code = run_compare(req)
    if code:
        raise typer.Exit(code)
