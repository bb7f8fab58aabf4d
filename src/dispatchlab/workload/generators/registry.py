"""Generator specs (``gen:eurora-like:jobs=330,seed=3``) and the registry behind them.

Syntax: ``gen:<name>`` optionally followed by ``:`` and ``key=value`` pairs separated by
commas — shell-safe, so ``--workload gen:eurora-like:jobs=330,seed=3`` needs no quotes.
The URL-like form ``gen:eurora-like?jobs=330&seed=3`` is read the same way. Keys are the
generator's keyword arguments; values are converted by the generator's declared parsers,
and an unknown key or a bad value is a :class:`WorkloadError` naming it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dispatchlab.errors import WorkloadError
from dispatchlab.keyvalue import convert, split_key_values
from dispatchlab.seeds import check_seed
from dispatchlab.workload.workload import Workload

#: Prefix that marks a generator spec where a workload path is expected.
PREFIX = "gen:"

_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")


@dataclass(frozen=True)
class GeneratorInfo:
    """A registered generator: the function, a one-line description, its parameters."""

    name: str
    func: Callable[..., Workload]
    description: str
    params: Mapping[str, Callable[[str], Any]]


_REGISTRY: dict[str, GeneratorInfo] = {}


#: Most jobs a generator may be asked for (the arrays of 10⁸ jobs already take ~10 GB).
MAX_JOBS = 50_000_000


def register_generator(
    name: str,
    func: Callable[..., Workload],
    description: str,
    params: Mapping[str, Callable[[str], Any]],
) -> None:
    """Make ``func`` available as ``gen:<name>``; ``params`` parse each key's text value."""
    if not _NAME.match(name):
        raise ValueError(f"generator names are lower-case words with '-'/'_', not {name!r}")
    _REGISTRY[name] = GeneratorInfo(name, func, description, dict(params))


def list_generators() -> dict[str, str]:
    """Registered generator names and their descriptions."""
    _load_builtin()
    return {name: info.description for name, info in sorted(_REGISTRY.items())}


def is_generator_spec(text: str) -> bool:
    """True when ``text`` names a generator (starts with ``gen:``)."""
    return text.strip().lower().startswith(PREFIX)


def parse_generator_spec(spec: str) -> tuple[str, dict[str, str]]:
    """``gen:name:k=v,k=v`` (or ``gen:name?k=v&k=v``) → ``(name, {k: v})``, unconverted."""
    text = spec.strip()
    if not is_generator_spec(text):
        raise WorkloadError(
            f"a generator spec starts with '{PREFIX}', got {spec!r}", field="workload"
        )
    body = text[len(PREFIX) :]
    m = re.match(r"^([A-Za-z0-9_-]+)(?:([:?])(.*))?$", body)
    if m is None:
        raise WorkloadError(
            f"cannot read generator spec {spec!r}; e.g. gen:eurora-like:jobs=330,seed=3",
            field="workload",
        )
    name = m.group(1).lower()
    params = split_key_values(m.group(3) or "", field="workload", error=WorkloadError,
                              separators=",&", context="generator spec: ")
    return name, params


def get_generator(name: str) -> GeneratorInfo:
    """The registered generator ``name``; a WorkloadError listing the known ones otherwise."""
    _load_builtin()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise WorkloadError(
            f"unknown generator '{name}' (known: {known})", field="workload"
        ) from None


def generate(spec: str, **overrides: Any) -> Workload:
    """Run the generator a spec names; keyword ``overrides`` win over the spec's values."""
    name, raw = parse_generator_spec(spec)
    info = get_generator(name)

    def check_known(key: str) -> None:
        if key not in info.params:
            raise WorkloadError(
                f"unknown parameter of generator '{name}' (known: {', '.join(info.params)})",
                field=key,
            )

    kwargs: dict[str, Any] = {}
    for key, text in raw.items():
        check_known(key)
        kwargs[key] = convert(key, text, info.params[key], error=WorkloadError)
    for key in overrides:
        check_known(key)
    kwargs.update(overrides)
    if "seed" in kwargs:
        check_seed(kwargs["seed"], error=WorkloadError)
    for key in ("jobs",):
        value = kwargs.get(key)
        if isinstance(value, int) and value > MAX_JOBS:  # (the generator checks >= 1)
            raise WorkloadError(f"must be at most {MAX_JOBS:,}, got {value:,}", field=key)
    return info.func(**kwargs)


def canonical_spec(name: str, params: Mapping[str, Any]) -> str:
    """``gen:name:k=v,...`` for the given (non-default) parameters, keys in order given."""
    if not params:
        return f"{PREFIX}{name}"
    return f"{PREFIX}{name}:" + ",".join(f"{k}={_fmt(v)}" for k, v in params.items())


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "/".join(_fmt(v) for v in value)
    if isinstance(value, Mapping):
        return "/".join(_fmt(v) for v in value.values())
    return str(value)


def _load_builtin() -> None:
    """Import the built-in generators (they register themselves)."""
    from dispatchlab.workload.generators import (  # noqa: F401
        curie_thesis,
        eurora_like,
        mejri,
        variable_capacity,
    )
