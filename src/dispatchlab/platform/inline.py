"""Inline platform specs such as ``nodes=128,cores=16`` or ``nodes=64,cores=16,gpu=2,mem=16GB``.

Memory is in MB; ``mem`` also accepts a unit (``mem=16GB``, ``mem=512MB``).
"""

from __future__ import annotations

from dispatchlab.errors import ConfigError
from dispatchlab.keyvalue import split_key_values
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
    fields = split_key_values(spec, field="platform", skip_empty=False,
                              key=lambda k: ALIASES.get(k.lower(), k.lower()))
    values = {key: _amount(key, raw) for key, raw in fields.items()}
    if "nodes" not in values:
        raise ConfigError("missing; e.g. nodes=128,cores=16", field="nodes")
    nodes = values.pop("nodes")
    if CORES not in values:
        raise ConfigError("missing; e.g. nodes=128,cores=16", field=CORES)
    if values[CORES] <= 0:
        raise ConfigError("must be positive", field=CORES)
    ordered = {CORES: values.pop(CORES), **values}
    return Platform.homogeneous(nodes, ordered, name=spec)


def _amount(key: str, raw: str) -> int:
    """A per-node amount: memory with an optional unit, anything else a whole number ≥ 0."""
    if key in MEMORY_RESOURCES:
        return parse_memory_mb(raw, field=key)
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"not an integer: '{raw}'", field=key) from None
    if value < 0:
        raise ConfigError(f"must not be negative, got {value}", field=key)
    return value
