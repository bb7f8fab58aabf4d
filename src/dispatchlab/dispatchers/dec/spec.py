"""``dec=<preset>,key=value,...`` dispatcher specs: a DEC preset with its feedback
iterations or any CP field changed, e.g. ``dec=dec-feedback,feedback=8,delta_max=0.64``."""

from __future__ import annotations

import re
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from dispatchlab.dispatchers.spec_values import convert_field
from dispatchlab.errors import ConfigError

if TYPE_CHECKING:
    from dispatchlab.dispatchers.dec.dispatcher import DecDispatcher

_DEC = re.compile(r"^dec(-feedback(?:-(\d+))?)?(-paper)?$")


def parse_dec_spec(spec: dict[str, str]) -> DecDispatcher | None:
    """DEC from ``dec=<preset>`` (``dec``, ``dec-feedback[-N]``, ``-paper``) plus changes:
    ``feedback`` (iterations) and any CP field, e.g. ``dec=dec-feedback,feedback=8,
    delta_max=0.64``; None without a ``dec`` key."""
    if "dec" not in spec:
        return None
    from dispatchlab.dispatchers.cp.config import CPConfig, SearchConfig
    from dispatchlab.dispatchers.dec.dispatcher import DecConfig, DecDispatcher
    from dispatchlab.dispatchers.dec.names import DEC_FEEDBACK, dec_name
    from dispatchlab.dispatchers.dec.presets import dec_preset

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


def canonical_dec_spec(fields: dict[str, str]) -> str | None:
    """``dec=<preset>`` alone is the preset's name; other DEC specs keep their spelling."""
    return fields["dec"].strip() if set(fields) == {"dec"} else None
