"""``dispatchlab live slurm``: a dispatcher drives a Slurm partition, or predicts its starts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dispatchlab.cli.app import app
from dispatchlab.cli.errors import friendly_errors


@app.command("live")
@friendly_errors
def live_command(
    system: Annotated[str, typer.Argument(help="The resource manager: slurm.")],
    partition: Annotated[str, typer.Option(help="The Slurm partition to drive.")],
    dispatcher: Annotated[str, typer.Option(
        help="Dispatcher preset or spec (any without an oracle: easy, conservative, "
             "pbs-fifo, hcp3, …).")] = "easy",
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Decide and log, change nothing in Slurm.")] = False,
    hold_new: Annotated[bool, typer.Option(
        "--hold-new", help="Also put a user hold on new pending jobs of the partition "
                           "(default: drive only jobs submitted with sbatch --hold).")] = False,
    predict: Annotated[bool, typer.Option(
        "--predict", help="Shadow mode: change nothing; write each pending job's "
                          "predicted start to --out, refreshed every cycle.")] = False,
    estimate: Annotated[str, typer.Option(
        help="--predict: duration estimate of the forward simulation (walltime, "
             "heuristic, …).")] = "walltime",
    history: Annotated[Path | None, typer.Option(
        help="--predict: a Slurm job completion log (jobcomp/filetxt) to measure the "
             "estimate's error on (the confidence band).")] = None,
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
) -> None:
    """Drive a Slurm partition with a dispatchlab dispatcher (or, with --predict, predict
    its start times). Ctrl-C stops it; held jobs stay held (docs/live.md)."""
    from dispatchlab.errors import ConfigError
    from dispatchlab.live.adapter import JsonLog, SlurmAdapter, live_dispatcher
    from dispatchlab.live.slurm_client import SlurmClient

    if system != "slurm":
        raise ConfigError(f"unknown resource manager '{system}' (known: slurm)", field="system")
    if not 0 < poll <= 1:
        raise ConfigError(f"--poll must be in (0, 1] s, got {poll:g}", field="poll")
    live_dispatcher(dispatcher)
    if report:
        _report(out, history)
        return
    stream = None
    if log is not None:
        try:
            stream = log.open("a")
        except OSError as exc:
            from dispatchlab.atomic_output import write_failure

            raise write_failure(log, exc) from None
    logger = JsonLog(stream)
    client = SlurmClient()
    try:
        if predict:
            from dispatchlab.live.predict import ShadowPredictor

            if out is None:
                raise ConfigError("--predict needs --out (the predictions CSV)", field="out")
            ShadowPredictor(client, partition, dispatcher, estimate=estimate, out=out,
                            history=history, seed=seed, log=logger
                            ).run(poll=poll, duration=duration, every=every)
        else:
            SlurmAdapter(client, partition, dispatcher, dry_run=dry_run, hold_new=hold_new,
                         release_timeout=release_timeout, seed=seed, log=logger
                         ).run(poll=poll, duration=duration, every=every)
    except KeyboardInterrupt:
        logger("stopped", reason="interrupted")
    finally:
        if stream is not None:
            stream.close()


def _report(out: Path | None, history: Path | None) -> None:
    """Predicted vs realized starts, as JSON."""
    import json

    from dispatchlab.errors import ConfigError
    from dispatchlab.live.predict_report import prediction_summary, prediction_table

    if out is None or history is None:
        raise ConfigError("--report needs --out (predictions) and --history (completion "
                          "log)", field="report")
    table = prediction_table(out, history)
    typer.echo(json.dumps(prediction_summary(table), indent=2))
