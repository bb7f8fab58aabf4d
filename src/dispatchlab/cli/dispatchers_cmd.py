"""``dispatchlab dispatchers``: every registered preset with its family, what it is and
what it supports (its :class:`~dispatchlab.engine.capabilities.Capabilities`)."""

from __future__ import annotations

import json
import shutil
import textwrap
from typing import TYPE_CHECKING, Annotated

import typer

from dispatchlab.cli.app import app
from dispatchlab.cli.errors import friendly_errors

if TYPE_CHECKING:
    from dispatchlab.dispatchers.family import Entry
    from dispatchlab.engine.capabilities import Capabilities


@app.command("dispatchers")
@friendly_errors
def dispatchers_command(
    family: Annotated[str | None, typer.Option(
        help="Only this family (`dispatchlab dispatchers` lists them).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON list.")] = False,
) -> None:
    """List every dispatcher preset with its family, a one-line description and what it
    supports (flags: d nodes leaving, c fixed power cap, v varying power cap, m multi-unit
    jobs; u follows a desired utilization, s switches power states, r reshapes malleable
    jobs, p reads pricing, o reads actual run times (oracle), n chooses which nodes leave;
    - where not)."""
    from dispatchlab.dispatchers.preset_capabilities import preset_capabilities
    from dispatchlab.dispatchers.registry import presets
    from dispatchlab.errors import ConfigError

    entries = list(presets().values())
    families = sorted({e.family for e in entries})
    if family is not None:
        family = family.strip().lower().replace("_", "-")
        if family not in families:
            raise ConfigError(unknown_family(family, families, entries), field="--family")
        entries = [e for e in entries if e.family == family]
    caps = {e.name: preset_capabilities(e) for e in entries}
    if as_json:
        typer.echo(json.dumps([{"name": e.name, "family": e.family,
                                "description": e.description,
                                "capabilities": caps[e.name].describe()} for e in entries]))
        return
    width = max(len(e.name) for e in entries)
    flag_width = len(FLAGS) + 1
    columns = max(60, shutil.get_terminal_size((80, 24)).columns)
    for fam in families:
        rows = [e for e in entries if e.family == fam]
        if not rows:
            continue
        typer.echo(f"{fam or 'other'} ({len(rows)})")
        for e in rows:
            lines = textwrap.wrap(e.description,
                                  max(20, columns - width - flag_width - 5)) or [""]
            typer.echo(f"  {e.name:<{width}}  {flags(caps[e.name]):<{flag_width}}{lines[0]}")
            for more in lines[1:]:
                typer.echo(f"  {'':<{width}}  {'':<{flag_width}}{more}")
    typer.echo("\nSupports: d nodes leaving, c fixed power cap, v varying power cap, m multi-unit "
               "jobs;\nu follows a desired utilization, s switches power states, r reshapes "
               "malleable jobs,\np reads pricing, o reads actual run times (oracle), n chooses "
               "which nodes leave,\nx runs in its own simulator, not the engine "
               "(docs/composition.md).\nAny preset can be changed with a key=value spec: see "
               "docs/dispatchers.md.")


def unknown_family(word: str, families: list[str], entries: list[Entry]) -> str:
    """The error for ``--family WORD``: the families, and the presets whose name holds the
    word (the README groups presets by topic, ``power capping``, while a family is what
    builds them: ``prb-power`` is ``rule-based``)."""
    hits: dict[str, list[str]] = {}
    for e in entries:
        if word and word in e.name:
            hits.setdefault(e.family, []).append(e.name)
    hint = "; ".join(f"{', '.join(names[:6])}{', …' if len(names) > 6 else ''} in family "
                     f"{fam}" for fam, names in hits.items())
    return (f"unknown family '{word}' (known: {', '.join(families)})"
            + (f"; presets matching '{word}': {hint}" if hint else ""))


#: The compact column: one letter per capability field, in this order.
FLAGS = {"nodes_leaving": "d", "fixed_power_cap": "c", "varying_power_cap": "v",
         "multi_unit_jobs": "m", "follows_desired_utilization": "u",
         "switches_power_states": "s", "reshapes_malleable_jobs": "r", "reads_pricing": "p",
         "oracle": "o", "chooses_leaving_nodes": "n", "own_simulator": "x"}


def flags(caps: Capabilities) -> str:
    """``dcvm-s--``: each field's letter when true, ``-`` when false."""
    return "".join(letter if getattr(caps, field) else "-" for field, letter in FLAGS.items())
