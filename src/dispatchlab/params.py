"""Parameters from constructors, as scikit-learn's estimators have them.

A component (dispatcher, ordering, selection, allocator, duration estimator, config)
stores each parameter of its constructor, unchanged or validated, under the parameter's
own name, and keeps its run state in ``_private`` attributes. :meth:`Parametrized.get_params`
then reads the parameters back from the constructor's signature, and
:meth:`Parametrized.describe` — defined here only — records ``{"name": …, **parameters}``
as JSON-ready values, components described in turn. Run state never appears.

A class shapes its description with three declarations, never with code:

- :attr:`~Parametrized.merged_params`: parameters holding a config whose entries are
  listed at this level (the CP dispatcher's ``CPConfig``);
- :attr:`~Parametrized.omitted_at_default`: parameters left out while at their default
  (a selection scheme's ``depth`` when it has none);
- :attr:`~Parametrized.described_attributes`: further entries read from attributes by a
  dotted path (a resolved default, the family, a fixed note), or a group of them.

The description covers the parameters of the class's constructor and of its bases'
constructors (a subclass that fixes some of its base's parameters still records them).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Mapping
from typing import Any, ClassVar

__all__ = ["Attributes", "Parametrized", "constructor_params", "described_params", "given",
           "jsonable"]

#: entries read from attributes: key → dotted path, or key → {key → path} (a group)
Attributes = Mapping[str, "str | Mapping[str, str]"]

_SKIPPED = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


_OWN: dict[type, tuple[inspect.Parameter, ...]] = {}
_DESCRIBED: dict[type, tuple[inspect.Parameter, ...]] = {}


def constructor_params(cls: type) -> tuple[inspect.Parameter, ...]:
    """The named parameters of ``cls``'s own constructor (``self``, ``*args`` and
    ``**kwargs`` left out); none when ``cls`` defines no constructor."""
    if cls not in _OWN:
        init = cls.__dict__.get("__init__")
        params = [] if init is None or cls is object else list(
            inspect.signature(init).parameters.values())[1:]
        _OWN[cls] = tuple(p for p in params if p.kind not in _SKIPPED)
    return _OWN[cls]


def described_params(cls: type) -> tuple[inspect.Parameter, ...]:
    """The parameters ``cls`` describes: its bases' constructors' first (the furthest
    base first), then its own; a name appears once, with the most derived default."""
    if cls not in _DESCRIBED:
        found: dict[str, inspect.Parameter] = {}
        for klass in reversed(cls.__mro__):
            for param in constructor_params(klass):
                found[param.name] = param
        _DESCRIBED[cls] = tuple(found.values())
    return _DESCRIBED[cls]


def jsonable(value: Any) -> Any:
    """``value`` as JSON-ready data: components by their description, plain dataclasses
    by their fields, sequences as lists, mappings with string keys, anything else by
    ``repr``."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, type):
        return repr(value)
    if hasattr(value, "describe"):
        return value.describe()
    if dataclasses.is_dataclass(value):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    return repr(value)


def given(**values: Any) -> dict[str, Any]:
    """The keyword arguments that are set (not None), in their order: the optional entries
    of a description, a file's identity or a reader's options."""
    return {k: v for k, v in values.items() if v is not None}


def _attribute(obj: object, path: str) -> Any:
    """``obj.a.b`` for ``path`` ``"a.b"``."""
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


class Parametrized:
    """Base of every described component: :meth:`get_params` and :meth:`describe` from
    the constructor's signature (see the module docstring)."""

    #: parameters holding a component whose description is listed at this level
    merged_params: ClassVar[tuple[str, ...]] = ()
    #: parameters left out of the description while equal to their default
    omitted_at_default: ClassVar[tuple[str, ...]] = ()
    #: further entries: key → dotted attribute path, or key → {key → path} (a group)
    described_attributes: ClassVar[Attributes] = {}

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's parameters and their current values; with ``deep``, also
        those of parameters that are components themselves, as ``part__param``."""
        out: dict[str, Any] = {}
        for param in constructor_params(type(self)):
            value = self._param(param.name)
            out[param.name] = value
            if deep and isinstance(value, Parametrized):
                out.update({f"{param.name}__{k}": v for k, v in value.get_params().items()})
        return out

    def describe(self) -> dict[str, Any]:
        """``{"name": …, **parameters}``, JSON-ready; the name when the component has one."""
        out: dict[str, Any] = {}
        if hasattr(self, "name"):
            out["name"] = self.name
        for param in described_params(type(self)):
            if param.name == "name":
                continue
            value = self._param(param.name)
            if param.name in self.omitted_at_default and value == param.default:
                continue
            doc = jsonable(value)
            if param.name in self.merged_params and isinstance(doc, dict):
                out.update({k: v for k, v in doc.items() if k != "name"})
            else:
                out[param.name] = doc
        for key, path in self.described_attributes.items():
            out[key] = (jsonable(_attribute(self, path)) if isinstance(path, str) else
                        {k: jsonable(_attribute(self, p)) for k, p in path.items()})
        return out

    def _param(self, name: str) -> Any:
        """The stored value of constructor parameter ``name``."""
        try:
            return getattr(self, name)
        except AttributeError:
            raise TypeError(f"{type(self).__qualname__} does not store its constructor "
                            f"parameter '{name}' as self.{name} (parameters are read back "
                            "from the constructor's signature)") from None
