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
    from dispatchlab.dispatchers.dec.dispatcher import DecDispatcher

_PRESET = re.compile(r"^(hcp|pcp)([0-3]?)(?:-(real|heuristic|walltime|paper))?$")
_DEC = re.compile(r"^dec(-feedback(?:-(\d+))?)?(-paper)?$")
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


def parse_dec_spec(spec: dict[str, str]) -> DecDispatcher | None:
    """DEC from ``dec=<preset>`` (``dec``, ``dec-feedback[-N]``, ``-paper``) plus changes:
    ``feedback`` (iterations) and any CP field, e.g. ``dec=dec-feedback,feedback=8,
    delta_max=0.64``; None without a ``dec`` key."""
    if "dec" not in spec:
        return None
    from dispatchlab.dispatchers.cp.config import DEC_FEEDBACK, CPConfig, SearchConfig, dec_name
    from dispatchlab.dispatchers.cp.presets import dec_preset
    from dispatchlab.dispatchers.dec.dispatcher import DecConfig, DecDispatcher

    match = _DEC.match(spec["dec"].strip())
    if match is None:
        raise ConfigError(f"dec: '{spec['dec']}' is not a DEC preset (dec, dec-feedback, "
                          "dec-feedback-N, with -paper)", field="dec")
    fb, n, paper = match.groups()
    feedback = 0 if fb is None else int(n) if n else DEC_FEEDBACK
    base = dec_preset(feedback, paper is not None)
    types = {f.name: f.type for f in fields(CPConfig) if f.name not in ("search", "kind")}
    types |= {f.name: f.type for f in fields(SearchConfig)}
    changes: dict[str, Any] = {}
    for key, raw in spec.items():
        if key == "dec":
            continue
        if key == "feedback":
            feedback = convert_field(key, raw, "int")
            continue
        name = "estimator" if key == "estimate" else key
        if name not in types:
            known = ", ".join(sorted({*types, "feedback"}))
            raise ConfigError(f"unknown DEC parameter '{key}' (known: {known})", field=key)
        changes[name] = convert_field(key, raw, types[name])
    cfg = DecConfig(feedback=feedback, cp=base.config.with_(**changes))
    return DecDispatcher(cfg, name=dec_name(feedback, paper is not None))
