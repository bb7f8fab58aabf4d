"""``dispatchlab trace-info``: what a trace holds and what cleaning would drop."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from dispatchlab.cli.app import app
from dispatchlab.cli.errors import err_console, friendly_errors
from dispatchlab.cli.options import JsonOpt
from dispatchlab.cli.simulate_cmd import console


@app.command("trace-info")
@friendly_errors
def trace_info_command(
    path: Annotated[str, typer.Argument(help="Trace file (SWF, .swf.gz, Eurora batch, sacct "
                                         "export, Slurm job completion log, PBS log, Batsim "
                                         "JSON, …).")],
    platform: Annotated[str | None, typer.Option(
        "--platform", "-p", help="Compute the offered load against this platform.")] = None,
    as_json: JsonOpt = False,
    format: Annotated[str | None, typer.Option(
        help="Input format (detected if omitted): swf, eurora, sacct, sacct-json, "
        "jobcomp, pbs, batsim, …")] = None,
    columns: Annotated[str | None, typer.Option(
        "--columns", "--sacct-format", help="sacct export without its header line "
        "(--noheader): its column names, comma-separated as its --format gave them "
        "(implies --format sacct).")] = None,
) -> None:
    """Jobs, time span, widest job, offered load and what each cleaning option would drop."""
    from dispatchlab.cli.sacct_columns import headerless_format
    from dispatchlab.params import given
    from dispatchlab.workload.trace_summary import trace_info

    info = trace_info(path, format=headerless_format(format, columns), platform=platform,
                      **given(columns=columns))
    if as_json:
        typer.echo(json.dumps(info, default=str))
    else:
        table = Table(title=f"trace {path}", show_header=False)
        table.add_column("field")
        table.add_column("value")
        for key, value in info.items():
            table.add_row(key, _fmt(value))
        console.print(table)
    if "error" in info:  # what could be read is shown above; the trace cannot be used
        err_console.print(f"error: {info['error']}", highlight=False, soft_wrap=True)
        raise typer.Exit(code=2)


def _fmt(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={_fmt(v)}" for k, v in value.items())
    if isinstance(value, float):
        return f"{value:,.4g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)
