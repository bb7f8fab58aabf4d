"""Lazy exports of a package (PEP 562): a public name is imported from its submodule on
first use, so importing the package stays cheap (no pandas, SciPy, OR-Tools, ...).

In a package ``__init__.py``::

    __getattr__, __dir__ = lazy_exports(__name__, {"Results": "metrics.results"})

maps each exported name to the submodule (relative to the package) that defines it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(package: str, where: Mapping[str, str]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package``: ``where`` maps an
    exported name to its submodule, relative to ``package``. A name is imported once, then
    kept in the package's namespace; an unknown name raises :class:`AttributeError` naming
    the package, as Python does."""
    table = dict(where)

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}", name=name)
        value = getattr(import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__
