"""``dispatchlab convert IN OUT``: a workload from one format to another."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from dispatchlab.cli.app import app
from dispatchlab.cli.errors import friendly_errors
from dispatchlab.cli.options import BadOpt
from dispatchlab.cli.sacct_columns import headerless_format
from dispatchlab.errors import ConfigError
from dispatchlab.params import given

if TYPE_CHECKING:
    from dispatchlab.workload.workload import Workload


@app.command("convert")
@friendly_errors
def convert_command(
    source: Annotated[str, typer.Argument(help="Input: SWF, sacct --parsable2 / --json export, "
                                          "Slurm job completion log, PBS/Torque accounting "
                                          "log, Batsim JSON, Eurora batch, Parquet/CSV "
                                          "table, or gen:… spec.")],
    target: Annotated[Path, typer.Argument(help="Output file: .swf[.gz], .json (Batsim), "
                                           ".parquet or .csv.")],
    from_: Annotated[str | None, typer.Option(
        "--from", help="Input format (detected from name/content if omitted): swf, eurora, "
        "sacct, sacct-json, jobcomp, pbs, batsim, parquet, csv, vcjobs.")] = None,
    to: Annotated[str | None, typer.Option(
        help="Output format (from the name if omitted): swf, batsim, parquet, csv.")] = None,
    timezone: Annotated[str | None, typer.Option(
        help="Accounting logs: IANA zone their date-times were written in (default UTC).")]
    = None,
    units: Annotated[str | None, typer.Option(
        help="Accounting logs: pool (each CPU a 1-core unit, default) | nodes (whole nodes).")]
    = None,
    cores_per_node: Annotated[int | None, typer.Option(
        help="Accounting logs with --units nodes: cores per node.")] = None,
    skip_bad_lines: BadOpt = False,
    columns: Annotated[str | None, typer.Option(
        "--columns", "--sacct-format", help="sacct export without its header line "
        "(--noheader): its column names, comma-separated as its --format gave them "
        "(implies --from sacct).")] = None,
    speed: Annotated[float | None, typer.Option(
        help="Batsim input: host speed in flop/s for parallel_homogeneous profiles.")] = None,
    batsim_platform: Annotated[str | None, typer.Option(
        help="Batsim input: SimGrid platform XML giving host speed and cores.")] = None,
    nb_res: Annotated[int | None, typer.Option(
        help="Batsim output: the platform's resource count (default: SWF header MaxProcs, "
        "else the widest job).")] = None,
    batsim_version: Annotated[str | None, typer.Option(
        help="Batsim output: the Batsim version that will read it, which names the profile "
        "types (5 = DelayProfile, the default; 1-4 = delay).")] = None,
    skip: Annotated[int, typer.Option(help="Skip the first N jobs.")] = 0,
    limit: Annotated[int | None, typer.Option(help="Keep at most N jobs.")] = None,
) -> None:
    """Convert a workload between formats, printing what cleaning dropped or changed."""
    from dispatchlab.cli.simulate_cmd import require_jobs
    from dispatchlab.workload.load import (
        OUTPUT_FORMATS,
        load_workload,
        output_format,
        save_workload,
    )
    from dispatchlab.workload.load_report import cleaning_counts

    if to is not None and to not in OUTPUT_FORMATS:
        raise ConfigError(f"unknown output format '{to}' (known: {', '.join(OUTPUT_FORMATS)})",
                          field="--to")
    fmt_out = to or output_format(target)
    if fmt_out not in OUTPUT_FORMATS:
        raise ConfigError(f"cannot tell the output format of {target} (use .swf, .json, "
                          f".parquet, .csv or --to {'|'.join(OUTPUT_FORMATS)})", field="--to")
    from_ = headerless_format(from_, columns)
    options = given(timezone=timezone, units=units, cores_per_node=cores_per_node,
                    speed=speed, platform=batsim_platform, skip_bad_lines=skip_bad_lines or None,
                    columns=columns)
    wl = load_workload(source, format=from_, skip=skip or None, limit=limit, **options)
    require_jobs(wl, source, "convert")
    unwritten = unwritten_requests(wl) if fmt_out == "swf" else ""
    if fmt_out == "batsim":
        from dispatchlab.workload.batsim_workload import write_batsim

        write_batsim(wl, target, nb_res=nb_res,
                     **given(batsim_version=batsim_version))
    elif unwritten:
        from dispatchlab.workload.swf_writer import write_swf

        if nb_res is not None:
            raise ConfigError("--nb-res applies to Batsim output only", field="--nb-res")
        if batsim_version is not None:
            raise ConfigError("--batsim-version applies to Batsim output only",
                              field="--batsim-version")
        write_swf(wl, target, notes=[unwritten])
    else:
        if nb_res is not None:
            raise ConfigError("--nb-res applies to Batsim output only", field="--nb-res")
        if batsim_version is not None:
            raise ConfigError("--batsim-version applies to Batsim output only",
                              field="--batsim-version")
        save_workload(wl, target, fmt_out)
    counts = cleaning_counts(wl.meta.get("load_report") or {})
    if counts:
        typer.echo("cleaning: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
    if unwritten:
        typer.echo(f"note: {unwritten}")
    typer.echo(f"{wl.n_jobs:,} jobs ({wl.meta.get('format', 'workload')}) written to {target} "
               f"as {fmt_out}")


def unwritten_requests(wl: Workload) -> str:
    """What SWF cannot hold of ``wl``'s requests (resources other than cores and memory),
    with how many jobs asked for each; empty when nothing is lost."""
    from dispatchlab.platform.platform import CORES

    lost = {r: int((wl.req_of(r) > 0).sum()) for r in wl.resources if r not in (CORES, "mem")}
    lost = {r: n for r, n in lost.items() if n}
    if not lost:
        return ""
    return ("SWF has no field for " + ", ".join(lost) + ": the requests of "
            + ", ".join(f"{n:,} job(s) for {r}" for r, n in lost.items()) + " are not written")
