"""A preset's :class:`~dispatchlab.engine.capabilities.Capabilities`, read from the
class its factory builds (``Entry.kind``; or the class's record, registered with the
preset when importing the class is slow) when the family declares them on the class, and
from a built dispatcher only when they depend on its settings (``capabilities`` or
``reads_pricing`` a property the class overrides, or the class not known).

Listing the presets (``dispatchlab dispatchers``) then builds few dispatchers; the answer
is the one :func:`~dispatchlab.engine.capabilities.capabilities_of` gives for a built
one (``tests/dispatchers/test_preset_capabilities.py`` checks every preset).
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from importlib import import_module

from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.dispatchers.family import Entry
from dispatchlab.engine.capabilities import Capabilities, capabilities_of

#: The base class's answer for ``reads_pricing`` (False), a property.
_BASE_READS_PRICING = BaseDispatcher.__dict__["reads_pricing"]


def class_capabilities(cls: type) -> Capabilities | None:
    """The record ``cls`` declares for every instance, or None when an instance decides
    (a ``capabilities``, ``reads_pricing`` or ``oracle`` property) or the class declares
    none."""
    caps = inspect.getattr_static(cls, "capabilities", None)
    if not isinstance(caps, Capabilities):
        return None
    pricing = inspect.getattr_static(cls, "reads_pricing", False)
    if pricing is _BASE_READS_PRICING:
        pricing = False
    oracle = inspect.getattr_static(cls, "oracle", False)
    if not isinstance(pricing, bool) or not isinstance(oracle, bool):
        return None
    return replace(caps, reads_pricing=pricing, oracle=oracle,
                   chooses_leaving_nodes=callable(getattr(cls, "choose_nodes", None)))


def preset_class(entry: Entry) -> type | None:
    """The class ``entry``'s factory builds (imported now), or None when not registered."""
    if not entry.kind:
        return None
    module, _, name = entry.kind.partition(":")
    cls = import_module(module)
    for part in name.split("."):
        cls = getattr(cls, part)
    return cls if isinstance(cls, type) else None


def preset_capabilities(entry: Entry) -> Capabilities:
    """What preset ``entry`` supports: its registered or its class's record, else its
    built dispatcher's."""
    if entry.capabilities is not None:
        return entry.capabilities
    cls = preset_class(entry)
    caps = class_capabilities(cls) if cls is not None else None
    return caps if caps is not None else capabilities_of(entry.factory())
