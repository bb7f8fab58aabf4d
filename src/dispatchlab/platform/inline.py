"""Inline platform specs such as ``nodes=128,cores=16`` or ``nodes=64,cores=16,gpu=2,mem=16GB``.

Memory is in MB; ``mem`` also accepts a unit (``mem=16GB``, ``mem=512MB``).
"""

from __future__ import annotations

from dispatchlab.errors import ConfigError
from dispatchlab.platform.platform import CORES, Platform
from dispatchlab.platform.quantities import MEMORY_RESOURCES, parse_memory_mb

#: Aliases accepted in inline specs, mapped to canonical resource names.
ALIASES = {
    "core": CORES,
    "cpus": CORES,
    "cpu": CORES,
    "procs": CORES,
    "memory": "mem",
    "gpus": "gpu",
    "mics": "mic",
}


def parse_inline(spec: str) -> Platform:
    """A homogeneous platform from ``nodes=N,<resource>=<per-node amount>,...``."""
    values: dict[str, int] = {}
    for part in spec.split(","):
        key, sep, raw = part.partition("=")
        key = key.strip().lower()
        if not sep or not key:
            raise ConfigError(f"expected key=value, got '{part.strip()}'", field="platform")
        key = ALIASES.get(key, key)
        if key in values:
            raise ConfigError("given twice", field=key)
        if key in MEMORY_RESOURCES:
            values[key] = parse_memory_mb(raw.strip(), field=key)
            continue
        try:
            values[key] = int(raw.strip())
        except ValueError:
            raise ConfigError(f"not an integer: '{raw.strip()}'", field=key) from None
        if values[key] < 0:
            raise ConfigError(f"must not be negative, got {values[key]}", field=key)
    if "nodes" not in values:
        raise ConfigError("missing; e.g. nodes=128,cores=16", field="nodes")
    nodes = values.pop("nodes")
    if CORES not in values:
        raise ConfigError("missing; e.g. nodes=128,cores=16", field=CORES)
    if values[CORES] <= 0:
        raise ConfigError("must be positive", field=CORES)
    ordered = {CORES: values.pop(CORES), **values}
    return Platform.homogeneous(nodes, ordered, name=spec)
