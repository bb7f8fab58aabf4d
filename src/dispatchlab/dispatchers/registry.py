"""Short names → configured dispatchers, shared by the CLI, configs and experiments."""

from __future__ import annotations

import difflib

from dispatchlab.dispatchers.family import (
    Canonicalizer,
    Entry,
    Factory,
    Family,
    SpecParser,
    preset,
)
from dispatchlab.engine.capabilities import Capabilities
from dispatchlab.engine.protocol import Dispatcher
from dispatchlab.errors import ConfigError
from dispatchlab.keyvalue import split_key_values

__all__ = ["Entry", "canonical_spec", "families", "get_dispatcher", "presets", "register",
           "register_canonicalizer", "register_spec_parser", "spec_fields"]

_PRESETS: dict[str, Entry] = {}
_SPEC_PARSERS: list[SpecParser] = []
_CANONICALIZERS: list[Canonicalizer] = []
_FAMILIES: list[Family] = []


def _load_catalogue() -> None:
    """Read the built-in families once (:mod:`.catalogue`): presets, parsers, spellings."""
    if _FAMILIES:
        return
    from dispatchlab.dispatchers.catalogue import FAMILIES

    _FAMILIES.extend(FAMILIES)
    _PRESETS.update({e.name: e for fam in FAMILIES for e in fam.entries()})
    _SPEC_PARSERS.extend(f.parse_spec for f in FAMILIES if f.parse_spec is not None)
    _CANONICALIZERS.extend(f.canonical_spec for f in FAMILIES if f.canonical_spec is not None)


def families() -> list[Family]:
    """The built-in families, in the order their spec parsers are tried."""
    _load_catalogue()
    return list(_FAMILIES)


def register(name: str, factory: Factory, description: str, family: str = "",
             kind: type | str = "", capabilities: Capabilities | None = None) -> None:
    """Register preset ``name`` of ``family`` (re-registering replaces it). ``kind``: the
    dispatcher class the factory builds, or ``"module:Class"`` when importing it now would
    be slow; taken from the factory when it is (a ``partial`` of) a class.
    ``capabilities``: the class's own record, when even naming the class is too slow."""
    _load_catalogue()
    _PRESETS[name] = preset(name, factory, description, family=family, kind=kind,
                            capabilities=capabilities)


def register_spec_parser(parser: SpecParser) -> None:
    """Add a parser for ``key=value,...`` dispatcher specs (tried after the built-in ones)."""
    _load_catalogue()
    _SPEC_PARSERS.append(parser)


def presets() -> dict[str, Entry]:
    """All registered presets, by name."""
    _load_catalogue()
    return dict(sorted(_PRESETS.items()))


def get_dispatcher(spec: str) -> Dispatcher:
    """A new dispatcher from a preset name or a ``key=value,...`` spec, optionally with
    idle-node power-off around it (``<spec>+poweroff[:SECONDS]``)."""
    _load_catalogue()
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
    return split_key_values(spec, field="dispatcher", skip_empty=False)


def _parse_spec_fields(spec: str) -> Dispatcher:
    fields = spec_fields(spec)
    for parser in _SPEC_PARSERS:
        disp = parser(fields)
        if disp is not None:
            return disp
    raise unknown_keys_error(spec, list(fields))


def unknown_keys_error(spec: str, keys: list[str]) -> ConfigError:
    """A spec no family accepts: when keys of one family are there, the others are
    unknown to it (named, with the keys it takes); else the keys that name each family."""
    for fam in _FAMILIES:
        if fam.spec_keys and set(keys) & set(fam.spec_keys):
            bad = [k for k in keys if k not in fam.spec_keys]
            return ConfigError(f"unknown key(s) {', '.join(bad)} for a {fam.name} dispatcher in "
                               f"'{spec}' (accepted: {', '.join(fam.spec_keys)})",
                               field=bad[0] if bad else "dispatcher")
    names = "; ".join(f"{'/'.join(f.spec_keys)} ({f.name})" for f in _FAMILIES if f.spec_keys)
    known = [k for f in _FAMILIES for k in f.spec_keys]
    close = [c for k in keys for c in difflib.get_close_matches(k, known, n=1, cutoff=0.7)]
    hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
    return ConfigError(f"no dispatcher family has the key(s) {', '.join(keys)}{hint} in "
                       f"'{spec}': a spec names its family by one of its keys: {names}",
                       field=keys[0] if keys else "dispatcher")


def register_canonicalizer(func: Canonicalizer) -> None:
    """Add a family's canonical spelling (tried in order, like the spec parsers)."""
    _load_catalogue()
    _CANONICALIZERS.append(func)


def canonical_spec(spec: str) -> str:
    """One spelling for equivalent specs (``easy`` = ``order=fifo,select=easy`` =
    ``select=easy,order=fifo,alloc=first-fit``; ``cp=hcp3`` = ``hcp3``), used in run
    hashes; specs no family canonicalizes are returned stripped."""
    _load_catalogue()
    text = spec.strip()
    if "=" not in text:
        return text
    fields = spec_fields(text)
    for func in _CANONICALIZERS:
        out = func(fields)
        if out is not None:
            return out
    return text
