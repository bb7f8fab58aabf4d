"""Turn dispatchlab's input errors into a one-line message and a non-zero exit code."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console

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
            err_console.print(f"[bold red]error:[/] {exc}", highlight=False, markup=True)
            raise typer.Exit(code=2) from None
        except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
            err_console.print(f"[bold red]error:[/] {exc}", highlight=False)
            raise typer.Exit(code=2) from None

    return wrapper  # type: ignore[return-value]
