"""``cp=<preset>,key=value,...`` dispatcher specs: a CP preset with parameters changed.

Used by experiment files and ``-d`` options, e.g. ``cp=pcp1,objective=wait,m=50`` or
``cp=hcp3-real,delta=0.05,delta_max=0.8,wall_limit=2``. Keys are the fields of
:class:`~dispatchlab.dispatchers.cp.config.CPConfig` and
:class:`~dispatchlab.dispatchers.cp.config.SearchConfig`; ``estimator`` (or ``estimate``)
names the duration predictor; ``bounded`` takes ``+``-separated objective names.
"""

from __future__ import annotations

import re
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from dispatchlab.dispatchers.spec_values import convert_field
from dispatchlab.errors import ConfigError

if TYPE_CHECKING:
    from dispatchlab.dispatchers.cp.dispatcher import CPDispatcher

_PRESET = re.compile(r"^(hcp|pcp)([0-3]?)(?:-(real|heuristic|walltime|paper))?$")
def parse_cp_spec(spec: dict[str, str]) -> CPDispatcher | None:
    """A CP dispatcher from ``cp=<preset>`` plus field changes; None without a ``cp`` key."""
    if "cp" not in spec:
        return None
    from dispatchlab.dispatchers.cp.config import CPConfig, SearchConfig
    from dispatchlab.dispatchers.cp.dispatcher import CPDispatcher
    from dispatchlab.dispatchers.cp.presets import preset_config

    match = _PRESET.match(spec["cp"].strip())
    if match is None:
        raise ConfigError(
            f"cp: '{spec['cp']}' is not a CP preset (hcp, hcp1 … pcp3, -real/-heuristic/-paper)",
            field="cp",
        )
    kind, version, variant = match.groups()
    cfg = preset_config(kind, int(version or 0), variant or "walltime")
    types = {f.name: f.type for f in fields(CPConfig) if f.name != "search"}
    types |= {f.name: f.type for f in fields(SearchConfig)}
    changes: dict[str, Any] = {}
    for key, raw in spec.items():
        if key == "cp":
            continue
        name = "estimator" if key == "estimate" else key
        if name not in types:
            known = ", ".join(sorted(types))
            raise ConfigError(f"unknown CP parameter '{key}' (known: {known})", field=key)
        changes[name] = convert_field(key, raw, types[name])
    return CPDispatcher(cfg.with_(**changes))


def canonical_cp_spec(fields: dict[str, str]) -> str | None:
    """``cp=<preset>`` alone is the preset's name; other CP specs keep their spelling."""
    return fields["cp"].strip() if set(fields) == {"cp"} else None
