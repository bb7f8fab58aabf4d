"""Short names → configured dispatchers, shared by the CLI, configs and experiments."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dispatchlab.dispatchers.base import Dispatcher
from dispatchlab.errors import ConfigError

Factory = Callable[[], Dispatcher]
#: Turns ``key=value`` fields into a dispatcher, or returns ``None`` when the keys belong
#: to another family (the next parser is tried).
SpecParser = Callable[[dict[str, str]], Dispatcher | None]


@dataclass(frozen=True)
class Entry:
    """A registered preset: its factory and one line saying what it is."""

    name: str
    factory: Factory
    description: str


_PRESETS: dict[str, Entry] = {}
_SPEC_PARSERS: list[SpecParser] = []


def register(name: str, factory: Factory, description: str) -> None:
    """Register preset ``name`` (re-registering replaces it)."""
    _PRESETS[name] = Entry(name, factory, description)


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
    from dispatchlab.dispatchers.power_off import IdlePowerOff, parse_power_off

    wrapped = parse_power_off(spec)
    if wrapped is not None:
        return IdlePowerOff(get_dispatcher(wrapped[0]), wrapped[1])
    if "=" not in spec:
        if spec not in _PRESETS:
            known = ", ".join(sorted(_PRESETS))
            raise ConfigError(f"unknown dispatcher '{spec}' (known: {known})", field="dispatcher")
        return _PRESETS[spec].factory()
    fields: dict[str, str] = {}
    for part in spec.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"expected key=value, got '{part}'", field="dispatcher")
        fields[key.strip()] = value.strip()
    for parser in _SPEC_PARSERS:
        disp = parser(fields)
        if disp is not None:
            return disp
    raise ConfigError(
        f"no dispatcher family accepts the keys {', '.join(fields)} in '{spec}'", field="dispatcher"
    )


def _load_builtin() -> None:
    """Import the modules that register the built-in presets."""
    import dispatchlab.dispatchers.builtin  # noqa: F401
