"""``dispatchlab traces list|fetch|path``: the catalogue of real traces and their local copies."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.table import Table

from dispatchlab.cli.app import app
from dispatchlab.cli.errors import err_console, friendly_errors
from dispatchlab.cli.simulate_cmd import console
from dispatchlab.traces.catalogue import Trace, all_traces, find_trace
from dispatchlab.traces.errors import TraceError
from dispatchlab.traces.locations import cache_dir, search_dirs
from dispatchlab.traces.progress import human_bytes
from dispatchlab.traces.resolve import damaged_copy, local_copy, materialise, resolve

ACTIONS = ("list", "fetch", "path")


@app.command("traces")
@friendly_errors
def traces_command(
    action: Annotated[str, typer.Argument(help="list | fetch | path")],
    names: Annotated[list[str] | None, typer.Argument(
        help="Trace names (`list` shows them); NAME/SUB picks a file or sub-folder of a "
             "folder trace, e.g. eurora-power-caps/power_caps_100.")] = None,
    fetch_all: Annotated[bool, typer.Option(
        "--all", help="fetch: every catalogued trace (about 56 MB).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="list: one JSON object.")] = False,
) -> None:
    """List the catalogued traces and which are here; fetch them (checked, resumable) into
    the cache; print a trace's local path. Use a trace anywhere as trace:NAME."""
    chosen = list(names or [])
    if action not in ACTIONS:
        raise TraceError(f"unknown action '{action}' (use {' | '.join(ACTIONS)})")
    if action == "list":
        _list(chosen, as_json)
    elif action == "path":
        if not chosen:
            raise TraceError("path: give a trace name (`dispatchlab traces list` shows them)")
        for name in chosen:
            typer.echo(str(resolve(name)))
    else:
        if fetch_all == bool(chosen):
            raise TraceError("fetch: give trace names or --all (not both)")
        for name in chosen:  # an unknown name is refused before anything is fetched
            find_trace(name)
        failed = _fetch(list(all_traces()) if fetch_all else chosen)
        if failed:
            raise typer.Exit(code=1)


def _list(names: list[str], as_json: bool) -> None:
    traces = [find_trace(n)[0] for n in names] if names else list(all_traces().values())
    rows: list[dict[str, Any]] = []
    for t in traces:
        here = sum(local_copy(f) is not None for f in t.files)
        rows.append({"name": t.name, "format": t.format, "files": len(t.files),
                     "present": here, "bytes": t.size, "jobs": t.jobs, "holds": t.machine,
                     "period": t.period, "url": t.url, "licence": t.group.licence,
                     "cite": t.group.cite})
    if as_json:
        typer.echo(json.dumps({"cache": str(cache_dir()),
                               "search": [str(d) for d in search_dirs()], "traces": rows}))
        return
    table = Table(title="catalogued traces (use as trace:NAME)")
    for col in ("name", "here", "size", "jobs", "what it holds"):
        table.add_column(col, overflow="fold")
    for r in rows:
        status = ("yes" if r["present"] == r["files"] else
                  "no" if not r["present"] else f"{r['present']}/{r['files']} files")
        jobs = f"{r['jobs']:,}" if r["jobs"] else ""
        table.add_row(r["name"], status, human_bytes(r["bytes"]), jobs, r["holds"])
    console.print(table)
    console.print(f"looked in: {', '.join(str(d) for d in search_dirs())}\n"
                  "fetch with `dispatchlab traces fetch NAME…` or `--all`; where each comes "
                  "from and how to cite it: docs/traces.md")


def _fetch(names: list[str]) -> list[str]:
    """Fetch each trace (or folder part); report each; the names that failed."""
    failed = []
    for name in names:
        try:
            trace, sub = find_trace(name)
            _fetch_one(trace, sub)
        except TraceError as exc:
            err_console.print(f"[bold red]error:[/] {exc}", highlight=False, markup=True)
            failed.append(name)
    return failed


def _fetch_one(trace: Trace, sub: str) -> None:
    files = trace.select(sub)
    missing = [f for f in files if local_copy(f) is None]
    label = trace.name + (f"/{sub}" if sub else "")
    if not missing:
        where = local_copy(files[0]) if len(files) == 1 else None
        typer.echo(f"{label}: present" + (f" ({where})" if where else
                                           f" ({len(files)} files)"))
        return
    for k, f in enumerate(missing, start=1):
        damage = damaged_copy(f)
        if damage is not None:
            err_console.print(f"{label}: {damage}; fetching it again", highlight=False)
        if len(missing) > 1:
            sys.stderr.write(f"\r{label}: file {k} of {len(missing)}")
            sys.stderr.flush()
        materialise(trace, f, fetch=True)
    if len(missing) > 1:
        sys.stderr.write("\n")
    typer.echo(f"{label}: fetched {len(missing)} file(s), "
               f"{human_bytes(sum(f.size for f in missing))}, checked, into {cache_dir()}")
