"""Amounts with units in platform descriptions: memory is held in MB (SPEC units)."""

from __future__ import annotations

import re

from dispatchlab.errors import ConfigError

#: Size of one unit in MB; binary multiples (1 GB = 1024 MB), as memory is sold and reported.
MEMORY_UNITS_MB = {
    "kb": 1 / 1024,
    "kib": 1 / 1024,
    "k": 1 / 1024,
    "mb": 1,
    "mib": 1,
    "m": 1,
    "gb": 1024,
    "gib": 1024,
    "g": 1024,
    "tb": 1024**2,
    "tib": 1024**2,
    "t": 1024**2,
}
#: Resource names whose amounts may carry a memory unit.
MEMORY_RESOURCES = ("mem",)

_AMOUNT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def parse_memory_mb(value: object, *, field: str, source: str | None = None) -> int:
    """``16384``, ``"16 GB"`` or ``"512MiB"`` as whole MB; a ConfigError naming ``field``."""
    if isinstance(value, bool):
        raise ConfigError(
            f"expected an amount of memory, got {value!r}", field=field, source=source
        )
    if isinstance(value, int):
        mb = float(value)
    elif isinstance(value, str):
        m = _AMOUNT.match(value)
        unit = m.group(2).lower() if m else ""
        if m is None or (unit and unit not in MEMORY_UNITS_MB):
            raise ConfigError(
                f'not an amount of memory: {value!r} (e.g. 16384, "16 GB", "512 MB")',
                field=field,
                source=source,
            )
        mb = float(m.group(1)) * MEMORY_UNITS_MB[unit or "mb"]
    else:
        raise ConfigError(
            f'expected an integer (MB) or a string such as "16 GB", got {type(value).__name__}',
            field=field,
            source=source,
        )
    if mb < 0:
        raise ConfigError(f"must not be negative, got {value!r}", field=field, source=source)
    if mb != int(mb):
        raise ConfigError(f"{value!r} is not a whole number of MB", field=field, source=source)
    return int(mb)


def parse_capacity(resource: str, value: object, *, field: str, source: str | None = None) -> int:
    """A node's capacity of ``resource``: a non-negative integer (memory may carry a unit)."""
    if resource in MEMORY_RESOURCES:
        return parse_memory_mb(value, field=field, source=source)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(
            f"expected a non-negative integer, got {value!r}", field=field, source=source
        )
    if value < 0:
        raise ConfigError(f"must not be negative, got {value}", field=field, source=source)
    return value
