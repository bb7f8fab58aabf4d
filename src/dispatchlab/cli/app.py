"""The Typer application object every subcommand module registers on."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="dispatchlab",
    help="Simulate HPC batch systems and compare dispatchers on real workloads.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
