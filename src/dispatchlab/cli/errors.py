"""Turn dispatchlab's input errors into a one-line message and a non-zero exit code."""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from dispatchlab.errors import ConfigError, DispatchlabError

F = TypeVar("F", bound=Callable[..., Any])

err_console = Console(stderr=True, soft_wrap=True)


def friendly_errors(func: F) -> F:
    """Run ``func``; a DispatchlabError becomes ``error: <message>`` and exit code 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except DispatchlabError as exc:
            # escape: messages quote TOML tables such as [[nodes]], which are rich markup
            err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False,
                              markup=True)
            raise typer.Exit(code=2) from None
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError,
                FileExistsError) as exc:
            # the path and a short reason, not Python's "[Errno 2] No such file or directory"
            from dispatchlab.input_files import os_reason

            where = f"{exc.filename}: " if exc.filename else ""
            err_console.print(f"[bold red]error:[/] {escape(where + os_reason(exc))}",
                              highlight=False)
            raise typer.Exit(code=2) from None

    return wrapper  # type: ignore[return-value]


def flag_fields(func: F) -> F:
    """Under :func:`friendly_errors`: a :class:`ConfigError` whose field is one of the
    command's options by its Python name (``watts_per_core``) names the flag instead
    (``--watts-per-core``), so that the error speaks the command line's spelling."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ConfigError as exc:
            flag = f"--{(exc.field or '').replace('_', '-')}"
            if not exc.field or flag not in command_flags(func):
                raise
            where = (f"{exc.source}: " if exc.source else "") + f"field '{exc.field}': "
            raise ConfigError(str(exc).removeprefix(where), field=flag,
                              source=exc.source) from None

    return wrapper  # type: ignore[return-value]


def command_flags(func: Callable[..., Any]) -> set[str]:
    """The long flags of a command function's options: each ``typer.Option``'s own
    spellings (under ``Annotated`` the first one is its ``default``), else ``--`` and the
    parameter's name with dashes."""
    hints = typing.get_type_hints(func, include_extras=True)
    out: set[str] = set()
    for name in inspect.signature(func).parameters:
        decls: tuple[str, ...] = ()
        for meta in getattr(hints.get(name), "__metadata__", ()):
            first = getattr(meta, "default", None)  # Annotated: a flag given first
            decls = (*((first,) if isinstance(first, str) else ()),
                     *(getattr(meta, "param_decls", None) or ())) or decls
        long = [d for d in decls if d.startswith("--")]
        out.update(long or [f"--{name.replace('_', '-')}"])
    return out


def check_level(value: float, option: str) -> float:
    """A significance or confidence level: strictly between 0 and 1."""
    if not 0.0 < value < 1.0:
        raise DispatchlabError(f"{option}: must be between 0 and 1 (exclusive), got {value:g}")
    return value
