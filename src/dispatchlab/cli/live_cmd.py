"""``dispatchlab live slurm|pbs``: a dispatcher drives a Slurm partition or a PBS queue, or
predicts its starts."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from dispatchlab.cli.app import app
from dispatchlab.cli.errors import flag_fields, friendly_errors
from dispatchlab.cli.options import RUN_OPTIONS, RunOptions, with_run_options

#: Why live takes none of the run options: Slurm or PBS runs the jobs on the real machine.
LIVE_REFUSES = {name: "the resource manager runs the jobs on the real machine; dispatchlab "
                "only decides their order (and, with --predict, estimates their starts)"
                for name in RUN_OPTIONS}

if TYPE_CHECKING:
    from dispatchlab.live.adapter import JsonLog
    from dispatchlab.live.backend import LiveClient
    from dispatchlab.live.pbs_client import PbsClient
    from dispatchlab.live.pbs_events import PbsEvents


@app.command("live")
@friendly_errors
@with_run_options(LIVE_REFUSES, "live")
@flag_fields
def live_command(
    system: Annotated[str, typer.Argument(help="The resource manager: slurm or pbs.")],
    partition: Annotated[str, typer.Option(help="The Slurm partition (PBS: the queue) to drive.")],
    dispatcher: Annotated[str, typer.Option(
        "--dispatcher", "-d", help="Dispatcher preset or spec (any without an oracle: "
        "easy, conservative, pbs-fifo, hcp3, …).")] = "easy",
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Decide and log, change nothing in Slurm.")] = False,
    hold_new: Annotated[bool, typer.Option(
        "--hold-new", help="Also put a user hold on new pending jobs of the partition "
                           "(default: drive only jobs submitted with sbatch --hold).")] = False,
    predict: Annotated[bool, typer.Option(
        "--predict", help="Shadow mode: change nothing; write each pending job's "
                          "predicted start to --out, refreshed every cycle.")] = False,
    estimate: Annotated[str, typer.Option(
        help="--predict: run times of the forward simulation: walltime (the limits), "
             "or learned from --history: user-ratio (each user's recent run-time/limit "
             "ratio × the job's limit), heuristic, ….")] = "walltime",
    history: Annotated[Path | None, typer.Option(
        help="--predict: finished jobs, a Slurm job completion log (jobcomp/filetxt) or "
             "a sacct export: run times are learned from them and the estimate's error "
             "measured on them (the confidence band).")] = None,
    out: Annotated[Path | None, typer.Option(
        help="--predict: CSV of predictions (appended each cycle).")] = None,
    report: Annotated[bool, typer.Option(
        "--report", help="With --predict: do not poll; compare the predictions in --out "
                         "with the realized starts in --history and print the summary.")
    ] = False,
    poll: Annotated[float, typer.Option(help="Seconds between polls (≤ 1).")] = 0.5,
    every: Annotated[float, typer.Option(
        help="A cycle at least this often (s), even with no event.")] = 30.0,
    duration: Annotated[float | None, typer.Option(
        help="Stop after this many seconds (default: until Ctrl-C).")] = None,
    release_timeout: Annotated[float, typer.Option(
        help="A released job Slurm has not started after this many s is held again.")] = 10.0,
    log: Annotated[Path | None, typer.Option(
        help="JSON-lines log (default: standard error).")] = None,
    seed: Annotated[int, typer.Option(help="Seed handed to the dispatcher.")] = 0,
    queue_rules: Annotated[str | None, typer.Option(
        help="PBS: a platform preset or file whose [queues.NAME] tables add an operator's "
             "rules (start windows, limits) to the PBS queue of the same name, e.g. "
             "eurora-pbs.")] = None,
    *,
    run: RunOptions,
) -> None:
    """Drive a Slurm partition or (`live pbs`) an OpenPBS queue with a dispatchlab
    dispatcher (or, with --predict, predict its start times). Ctrl-C stops it; held jobs
    stay held. Exit code 3 when Slurm could not be read for 300 s in a row
    (docs/live.md)."""
    from dispatchlab.errors import ConfigError
    from dispatchlab.live.adapter import JsonLog, LiveAdapter, live_dispatcher
    from dispatchlab.live.slurm_client import SlurmClient

    if system not in ("slurm", "pbs"):
        raise ConfigError(f"unknown resource manager '{system}' (known: slurm, pbs)",
                          field="system")
    if not 0 < poll <= 1:
        raise ConfigError(f"--poll must be in (0, 1] s, got {poll:g}", field="poll")
    for name, value in (("--duration", duration), ("--release-timeout", release_timeout),
                        ("--every", every)):
        if value is not None and not value > 0:
            raise ConfigError(f"{name} must be > 0 s, got {value:g}",
                              field=name[2:].replace("-", "_"))
    if queue_rules is not None and system != "pbs":
        raise ConfigError("--queue-rules applies to PBS queues (live pbs)",
                          field="queue_rules")
    if history is not None and not history.is_file():
        raise ConfigError(f"--history {history}: no such file (a Slurm job completion "
                          "log, jobcomp/filetxt, or a sacct export)", field="history")
    live_dispatcher(dispatcher)
    if report:
        _report(out, history)
        return
    if predict:
        from dispatchlab.live.predict import check_history, check_partition, live_estimator

        live_estimator(estimate)
        if system == "slurm":
            check_partition(dispatcher, partition)
        if history is not None:
            check_history(history)  # a malformed log: its file and line, now
        if out is None:
            raise ConfigError("--predict needs --out (the predictions CSV)", field="out")
    from dispatchlab.live.outage import SlurmUnreachable
    from dispatchlab.live.slurm_setup import check_slurm_setup

    stream = None
    new_log = log is not None and not log.exists()
    if log is not None:  # the log's folder is the user's argument: checked first
        try:
            stream = log.open("a")
        except OSError as exc:
            from dispatchlab.atomic_output import write_failure

            raise write_failure(log, exc) from None
    client: LiveClient
    try:
        if system == "pbs":  # PBS: --partition names the queue
            client = _pbs_client(partition, history, queue_rules)
        else:
            check_slurm_setup()  # a missing program or configuration: exit 2 before any read
            client = SlurmClient()
    except BaseException:
        if stream is not None:
            stream.close()
            if new_log and log is not None and log.stat().st_size == 0:
                log.unlink()  # a log this call created and never wrote is not left behind
        raise
    logger = JsonLog(stream)
    events: PbsEvents | None = None
    try:
        if predict and out is not None:  # (--predict without --out was refused above)
            from dispatchlab.live.predict import ShadowPredictor

            ShadowPredictor(client, partition, dispatcher, estimate=estimate, out=out,
                            history=history, seed=seed, log=logger
                            ).run(poll=poll, duration=duration, every=every)
        else:
            if system == "pbs" and not dry_run:  # PBS's hook wakes the cycle
                events = _pbs_events(client, logger)
            LiveAdapter(client, partition, dispatcher, dry_run=dry_run, hold_new=hold_new,
                        release_timeout=release_timeout, seed=seed, log=logger
                        ).run(poll=poll, duration=duration, every=every,
                              wake=events.wait if events is not None else None)
    except KeyboardInterrupt:
        logger("stopped", reason="interrupted")
    except SlurmUnreachable as err:  # not bad input: a distinct exit code
        logger("stopped", reason=str(err))
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(code=3) from None
    finally:
        if events is not None:
            events.close()
        if stream is not None:
            stream.close()


def _pbs_client(queue: str, history: Path | None, queue_rules: str | None) -> PbsClient:
    """The PBS backend, once its commands and configuration are found (else exit 2), with
    the operator's queue rules of ``queue_rules`` (a platform preset or file)."""
    from dispatchlab.errors import ConfigError
    from dispatchlab.live.pbs_client import PbsClient, check_pbs_setup
    from dispatchlab.live.pbs_rules import local_zone
    from dispatchlab.platform.resolve import resolve_platform

    if history is not None:
        raise ConfigError("--history reads a Slurm job completion log; on PBS the "
                          "predictions come without a confidence band", field="history")
    try:
        operator = resolve_platform(queue_rules).queues if queue_rules is not None else {}
    except ConfigError as err:
        where = (f"{err.source}: " if err.source else "") + f"field '{err.field}': "
        raise ConfigError(str(err).removeprefix(where) if err.field else str(err),
                          field="queue_rules", source=err.source) from None
    check_pbs_setup()
    return PbsClient(queue=queue, operator=operator, timezone=local_zone())


def _pbs_events(client: LiveClient, logger: JsonLog) -> PbsEvents:
    """The FIFO a server hook writes on PBS's events (logged when it cannot be installed:
    the adapter then polls only)."""
    from dispatchlab.live.pbs_events import HOOK, PbsEvents

    events = PbsEvents(getattr(client, "prefix", ()))
    why = events.install()
    logger("hook", name=HOOK, installed=why is None, **({"reason": why} if why else {}))
    return events


def _report(out: Path | None, history: Path | None) -> None:
    """Predicted vs realized starts, as JSON."""
    import json

    from dispatchlab.errors import ConfigError
    from dispatchlab.live.predict_report import prediction_summary, prediction_table

    if out is None or history is None:
        raise ConfigError("--report needs --out (predictions) and --history (completion "
                          "log)", field="report")
    from dispatchlab.live.predict import history_format

    if history_format(history) != "jobcomp":
        raise ConfigError(f"--report reads the realized starts from a job completion log "
                          f"(jobcomp/filetxt); {history} is a sacct export", field="history")
    table = prediction_table(out, history)
    typer.echo(json.dumps(prediction_summary(table), indent=2))
