"""Exceptions raised by dispatchlab: every one names what was wrong and where."""

from __future__ import annotations


class DispatchlabError(Exception):
    """Base class of all errors dispatchlab raises on purpose."""


class ConfigError(DispatchlabError, ValueError):
    """An invalid platform, dispatcher or experiment configuration.

    ``field`` names the offending key (dotted path) and ``source`` the file, when known.
    """

    def __init__(self, message: str, *, field: str | None = None, source: str | None = None):
        self.field = field
        self.source = source
        where = ""
        if source:
            where += f"{source}: "
        if field:
            where += f"field '{field}': "
        super().__init__(where + message)


class WorkloadError(DispatchlabError, ValueError):
    """Bad workload input: names the file, line, job and field when they are known."""

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        job: int | None = None,
        field: str | None = None,
    ):
        self.source = source
        self.line = line
        self.job = job
        self.field = field
        parts = []
        if source:
            parts.append(source if line is None else f"{source}:{line}")
        elif line is not None:
            parts.append(f"line {line}")
        if job is not None:
            parts.append(f"job {job}")
        if field:
            parts.append(f"field '{field}'")
        prefix = ", ".join(parts)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class InvalidDecision(DispatchlabError):
    """A dispatcher returned a decision the engine cannot carry out."""


class InfeasibleJob(DispatchlabError):
    """A job that no node configuration of the platform can ever host."""


class OutputError(DispatchlabError, OSError):
    """A result, report or workload file that could not be written (disk full, no
    permission, …): names the path and the reason in words."""
