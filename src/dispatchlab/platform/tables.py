"""Checks shared by the TOML table parsers of the platform (queues, reservations, power)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dispatchlab.errors import ConfigError


def checked_table(value: Any, allowed: tuple[str, ...], *, where: str,
                  source: str | None, what: str = "a table") -> Mapping[str, Any]:
    """``value`` as a table whose keys are all in ``allowed``, else a :class:`ConfigError`
    naming the field (``where`` or ``where.<first unknown key>``) and the file (``must be
    <what>`` when it is no table)."""
    if not isinstance(value, Mapping):
        raise ConfigError(f"must be {what}", field=where, source=source)
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        raise ConfigError(f"unknown key (allowed: {', '.join(allowed)})",
                          field=f"{where}.{unknown[0]}", source=source)
    return value
