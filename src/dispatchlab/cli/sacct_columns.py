"""``--columns`` / ``--sacct-format``: the column names of a headerless sacct export."""

from __future__ import annotations

from dispatchlab.errors import ConfigError


def headerless_format(fmt: str | None, columns: str | None) -> str | None:
    """The input format once ``--columns`` is given: sacct (the only format it names the
    columns of); another ``--from`` with it is an error."""
    if columns is None:
        return fmt
    if fmt not in (None, "sacct"):
        raise ConfigError(f"--columns names the columns of a sacct export, not of {fmt}",
                          field="--columns")
    return "sacct"
