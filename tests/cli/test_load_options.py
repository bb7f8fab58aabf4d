"""The reading options declared once in ``cli/options.py`` and handed over as one record."""

from __future__ import annotations

import inspect

import typer
from typer.testing import CliRunner

from dispatchlab.cli.options import LOAD_OPTIONS, LoadOptions, with_load_options


def _app(seen: list[LoadOptions]) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    @with_load_options
    def run(name: str, *, load: LoadOptions, last: int = 1) -> None:
        seen.append(load)
        typer.echo(f"{name} {last}")

    return app


def test_the_options_stand_where_load_stood() -> None:
    @with_load_options
    def command(first: int = 0, *, load: LoadOptions, last: int = 1) -> None:
        del first, load, last

    names = list(inspect.signature(command).parameters)
    assert names == ["first", *LOAD_OPTIONS, "last"]


def test_defaults_give_the_default_record() -> None:
    seen: list[LoadOptions] = []
    result = CliRunner().invoke(_app(seen), ["x"])
    assert result.exit_code == 0, result.output
    assert seen == [LoadOptions()]


def test_given_options_reach_the_record() -> None:
    seen: list[LoadOptions] = []
    result = CliRunner().invoke(_app(seen), [
        "x", "--format", "swf", "--skip", "3", "--limit", "7", "--swf-procs", "max",
        "--swf-units", "nodes", "--swf-cores-per-node", "4", "--drop-zero-runtime",
        "--keep-invalid", "--skip-bad-lines", "--swf-missing-estimate", "reject",
        "--last", "5"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "x 5"
    assert seen == [LoadOptions(format="swf", skip=3, limit=7, swf_procs="max",
                                swf_missing_estimate="reject", swf_units="nodes",
                                swf_cores_per_node=4, drop_zero_runtime=True,
                                keep_invalid=True, skip_bad_lines=True)]
