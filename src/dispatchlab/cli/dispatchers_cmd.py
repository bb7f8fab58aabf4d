"""``dispatchlab dispatchers``: every registered preset with its family and what it is."""

from __future__ import annotations

import json
import shutil
import textwrap
from typing import Annotated

import typer

from dispatchlab.cli.app import app
from dispatchlab.cli.errors import friendly_errors


@app.command("dispatchers")
@friendly_errors
def dispatchers_command(
    family: Annotated[str | None, typer.Option(
        help="Only this family (rule-based, cp, malleable).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON list.")] = False,
) -> None:
    """List every dispatcher preset with its family and a one-line description."""
    from dispatchlab.dispatchers.registry import presets
    from dispatchlab.errors import ConfigError

    entries = list(presets().values())
    families = sorted({e.family for e in entries})
    if family is not None:
        if family not in families:
            raise ConfigError(f"--family: unknown family '{family}' (known: "
                              f"{', '.join(families)})", field="family")
        entries = [e for e in entries if e.family == family]
    if as_json:
        typer.echo(json.dumps([{"name": e.name, "family": e.family,
                                "description": e.description} for e in entries]))
        return
    width = max(len(e.name) for e in entries)
    columns = max(60, shutil.get_terminal_size((80, 24)).columns)
    for fam in families:
        rows = [e for e in entries if e.family == fam]
        if not rows:
            continue
        typer.echo(f"{fam or 'other'} ({len(rows)})")
        for e in rows:
            lines = textwrap.wrap(e.description, max(20, columns - width - 5)) or [""]
            typer.echo(f"  {e.name:<{width}}  {lines[0]}")
            for more in lines[1:]:
                typer.echo(f"  {'':<{width}}  {more}")
    typer.echo("\nAny preset can be changed with a key=value spec: see docs/dispatchers.md.")
