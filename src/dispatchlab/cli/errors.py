"""Turn dispatchlab's input errors into a one-line message and a non-zero exit code."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from dispatchlab.errors import DispatchlabError

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


def check_level(value: float, option: str) -> float:
    """A significance or confidence level: strictly between 0 and 1."""
    if not 0.0 < value < 1.0:
        raise DispatchlabError(f"{option}: must be between 0 and 1 (exclusive), got {value:g}")
    return value
