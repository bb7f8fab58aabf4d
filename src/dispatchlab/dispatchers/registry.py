"""Short names → configured dispatchers, shared by the CLI, configs and experiments."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from dispatchlab.dispatchers.base import Dispatcher
from dispatchlab.dispatchers.capabilities import Capabilities
from dispatchlab.errors import ConfigError

Factory = Callable[[], Dispatcher]
#: Turns ``key=value`` fields into a dispatcher, or returns ``None`` when the keys belong
#: to another family (the next parser is tried).
SpecParser = Callable[[dict[str, str]], Dispatcher | None]


@dataclass(frozen=True)
class Entry:
    """A registered preset: its factory, one line saying what it is, its family, and the
    class the factory builds (``kind``, ``"module:Class"``; "" when not known) or, when that
    class is slow to import, its class-level record (``capabilities``), from which
    :mod:`~dispatchlab.dispatchers.preset_capabilities` reads the family's declaration
    without building the dispatcher."""

    name: str
    factory: Factory
    description: str
    family: str = ""
    kind: str = ""
    capabilities: Capabilities | None = None


_PRESETS: dict[str, Entry] = {}
_SPEC_PARSERS: list[SpecParser] = []


def register(name: str, factory: Factory, description: str, family: str = "",
             kind: type | str = "", capabilities: Capabilities | None = None) -> None:
    """Register preset ``name`` of ``family`` (re-registering replaces it). ``kind``: the
    dispatcher class the factory builds, or ``"module:Class"`` when importing it now would
    be slow; taken from the factory when it is (a ``partial`` of) a class.
    ``capabilities``: the class's own record, when even naming the class is too slow."""
    if not kind:
        func = factory.func if isinstance(factory, partial) else factory
        kind = func if isinstance(func, type) else ""
    if isinstance(kind, type):
        kind = f"{kind.__module__}:{kind.__qualname__}"
    _PRESETS[name] = Entry(name, factory, description, family, kind, capabilities)


def register_spec_parser(parser: SpecParser) -> None:
    """Add a parser for ``key=value,...`` dispatcher specs (tried in order)."""
    _SPEC_PARSERS.append(parser)


def presets() -> dict[str, Entry]:
    """All registered presets, by name."""
    _load_builtin()
    return dict(sorted(_PRESETS.items()))


def get_dispatcher(spec: str) -> Dispatcher:
    """A new dispatcher from a preset name or a ``key=value,...`` spec, optionally with
    idle-node power-off around it (``<spec>+poweroff[:SECONDS]``)."""
    _load_builtin()
    spec = spec.strip()
    from dispatchlab.dispatchers.rule_based.power_off import IdlePowerOff, parse_power_off

    wrapped = parse_power_off(spec)
    if wrapped is not None:
        return IdlePowerOff(get_dispatcher(wrapped[0]), wrapped[1])
    if "=" not in spec:
        if spec not in _PRESETS:
            raise ConfigError(unknown_preset_message(spec), field="dispatcher")
        return _PRESETS[spec].factory()
    return _parse_spec_fields(spec)


def unknown_preset_message(spec: str) -> str:
    """``unknown dispatcher 'fifp' (did you mean 'fifo'? …)``."""
    close = difflib.get_close_matches(spec, list(_PRESETS), n=3, cutoff=0.6)
    hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
    return (f"unknown dispatcher '{spec}' ({hint}`dispatchlab dispatchers` lists the "
            f"{len(_PRESETS)} presets)")


def spec_fields(spec: str) -> dict[str, str]:
    """``key=value,...`` as a dict; a repeated or empty key is an error."""
    fields: dict[str, str] = {}
    for part in spec.split(","):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"expected key=value, got '{part}'", field="dispatcher")
        if key in fields:
            raise ConfigError(f"key '{key}' given twice in '{spec}'", field="dispatcher")
        fields[key] = value.strip()
    return fields


def _parse_spec_fields(spec: str) -> Dispatcher:
    fields = spec_fields(spec)
    for parser in _SPEC_PARSERS:
        disp = parser(fields)
        if disp is not None:
            return disp
    raise ConfigError(
        f"no dispatcher family accepts the keys {', '.join(fields)} in '{spec}'", field="dispatcher"
    )


#: Turns ``key=value`` fields into the family's one spelling, or ``None`` (not ours).
Canonicalizer = Callable[[dict[str, str]], str | None]
_CANONICALIZERS: list[Canonicalizer] = []


def register_canonicalizer(func: Canonicalizer) -> None:
    """Add a family's canonical spelling (tried in order, like the spec parsers)."""
    _CANONICALIZERS.append(func)


def canonical_spec(spec: str) -> str:
    """One spelling for equivalent specs (``easy`` = ``order=fifo,select=easy`` =
    ``select=easy,order=fifo,alloc=first-fit``; ``cp=hcp3`` = ``hcp3``), used in run
    hashes; specs no family canonicalizes are returned stripped."""
    _load_builtin()
    text = spec.strip()
    if "=" not in text:
        return text
    fields = spec_fields(text)
    for func in _CANONICALIZERS:
        out = func(fields)
        if out is not None:
            return out
    return text


def _load_builtin() -> None:
    """Import the modules that register the built-in presets."""
    import dispatchlab.dispatchers as package
    import dispatchlab.dispatchers.builtin  # noqa: F401

    # importing the submodule dispatchers/presets.py rebinds the package's name `presets`
    # to that module; the documented `dispatchlab.dispatchers.rule_based.presets()` is this function
    package.presets = presets
