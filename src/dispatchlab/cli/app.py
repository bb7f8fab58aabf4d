"""The Typer application object every subcommand module registers on.

Subcommands are imported lazily: ``dispatchlab --help`` and ``dispatchlab --version`` import
none of them, and ``dispatchlab simulate`` imports only the simulate module (not the report,
statistics or experiment machinery). :data:`COMMANDS` names each command's module and its
one-line description (shown by ``--help`` without importing the module).
"""

from __future__ import annotations

from importlib import import_module
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

#: command → (module under dispatchlab.cli, one-line help shown in ``dispatchlab --help``)
COMMANDS: dict[str, tuple[str, str]] = {
    "simulate": ("simulate_cmd", "Simulate one dispatcher on one workload and print the summary."),
    "compare": ("compare_cmd", "Compare several dispatchers on one workload and platform."),
    "run-experiment": ("experiment_cmd", "Run (or resume) an experiment grid from a TOML file."),
    "results": ("results_cmd", "Gather the stored runs of an experiment folder and print the "
                "statistics."),
    "report": ("report_cmd", "Write the interactive report of the runs stored in a folder."),
    "trace-info": ("trace_info_cmd", "Jobs, time span, widest job, offered load and what each "
                   "cleaning option would drop."),
    "dispatchers": ("dispatchers_cmd", "List every dispatcher preset with its family and a "
                    "one-line description."),
    "plan": ("plan_cmd", "Plan a chunk of jobs offline for profit (thesis ch. 6) and write "
             "the plan."),
    "convert": ("convert_cmd", "Convert a workload between formats (SWF, sacct, PBS, Batsim, …)."),
    "live": ("live_cmd", "Drive a Slurm partition or a PBS queue with a dispatcher, or predict "
                         "its starts."),
    "demo": ("demo_cmd", "Compare the baseline dispatchers and a CP one on a bundled KTH slice."),
    "traces": ("traces_cmd", "List, fetch (checked, resumable) and locate the catalogued real "
               "traces."),
}


class LazyGroup(TyperGroup):
    """A Typer group that imports a subcommand's module only when that command runs."""

    _listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in COMMANDS:
            return None
        module, short = COMMANDS[cmd_name]
        if self._listing:  # the group's --help: name and one line, no import
            return typer.core.TyperCommand(name=cmd_name, help=short, short_help=short)
        import_module(f"dispatchlab.cli.{module}")
        for info in app.registered_commands:
            if info.name == cmd_name:
                return typer.main.get_command_from_info(
                    info, pretty_exceptions_short=app.pretty_exceptions_short,
                    rich_markup_mode=app.rich_markup_mode)
        return None  # pragma: no cover  (every module registers its command)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


app = typer.Typer(
    name="dispatchlab",
    cls=LazyGroup,
    help="Simulate HPC batch systems and compare dispatchers on real workloads.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: wraps in 80 columns, no rich import for --help
    context_settings={"max_content_width": 100},
)


def _version(value: bool) -> None:
    if value:
        from dispatchlab import __version__

        typer.echo(f"dispatchlab {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True,
        help="Print the version and exit.")] = False,
    offline: Annotated[bool, typer.Option(
        "--offline", help="Never download a trace named trace:NAME on first use "
        "(as DISPATCHLAB_OFFLINE=1).")] = False,
) -> None:
    """Simulate HPC batch systems and compare dispatchers on real workloads."""
    if offline:
        import os

        os.environ["DISPATCHLAB_OFFLINE"] = "1"
