"""A dispatcher family's record in the catalogue (:mod:`.catalogue`): its presets, the
``key=value`` spec parser that builds its dispatchers, and its one spelling of a spec for
run hashes. What a family supports is declared on its classes
(:class:`~dispatchlab.engine.capabilities.Capabilities`), and copied onto a preset
only when naming the class would import something slow."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial

from dispatchlab.engine.capabilities import Capabilities
from dispatchlab.engine.protocol import Dispatcher

Factory = Callable[[], Dispatcher]
#: Turns ``key=value`` fields into a dispatcher, or returns ``None`` when the keys belong
#: to another family (the next parser is tried).
SpecParser = Callable[[dict[str, str]], Dispatcher | None]
#: Turns ``key=value`` fields into the family's one spelling, or ``None`` (not ours).
Canonicalizer = Callable[[dict[str, str]], str | None]


@dataclass(frozen=True)
class Entry:
    """A preset: its factory, one line saying what it is, its family, and the class the
    factory builds (``kind``, ``"module:Class"``; "" when not known) or, when that class is
    slow to import, its class-level record (``capabilities``), from which
    :mod:`~dispatchlab.dispatchers.preset_capabilities` reads the family's declaration
    without building the dispatcher."""

    name: str
    factory: Factory
    description: str
    family: str = ""
    kind: str = ""
    capabilities: Capabilities | None = None


def preset(name: str, factory: Factory, description: str, *, family: str = "",
           kind: type | str = "", capabilities: Capabilities | None = None) -> Entry:
    """An :class:`Entry`; ``kind`` is taken from the factory when it is (a ``partial`` of)
    a class, and written ``"module:Class"``."""
    if not kind:
        func = factory.func if isinstance(factory, partial) else factory
        kind = func if isinstance(func, type) else ""
    if isinstance(kind, type):
        kind = f"{kind.__module__}:{kind.__qualname__}"
    return Entry(name, factory, description, family, kind, capabilities)


@dataclass(frozen=True)
class Family:
    """One family: ``presets`` lists its presets (called once, when the catalogue is first
    read), ``parse_spec`` and ``canonical_spec`` handle its ``key=value`` specs.
    ``spec_keys``: the keys that make a spec this family's (``cp``; every key of a
    rule-based spec), named when a spec no family accepts has unknown keys."""

    name: str
    summary: str
    presets: Callable[[], Sequence[Entry]]
    parse_spec: SpecParser | None = None
    canonical_spec: Canonicalizer | None = None
    spec_keys: tuple[str, ...] = ()

    def entries(self) -> list[Entry]:
        """The family's presets, each marked with the family's name."""
        return [replace(e, family=self.name) for e in self.presets()]
