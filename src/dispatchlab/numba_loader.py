"""One way to get a compiled function: ahead of time, else Numba's JIT, else plain Python.

Every compiled part of dispatchlab (the engine's loops and kernels, the slot-profile
operations, the audit's sweep, the variable-capacity books) is a plain Python function
loaded here on first use: from an ahead-of-time built extension module when one is given
and available, else compiled by Numba's JIT (disk-cached) and called once to compile it now,
else — Numba missing or ``DISPATCHLAB_NO_NUMBA`` set — the plain function (or an error, for
the parts that have no plain twin). Importing this module does not import Numba (~0.5 s).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from importlib.util import find_spec
from typing import Any


def numba_wanted() -> bool:
    """Numba installed and not disabled (found without importing it)."""
    return not os.environ.get("DISPATCHLAB_NO_NUMBA") and find_spec("numba") is not None


#: Whether Numba compiles dispatchlab's compiled parts in this process.
NUMBA = numba_wanted()

_loaded: dict[Callable[..., Any], tuple[Callable[..., Any], str]] = {}
_registered: set[Callable[..., Any]] = set()


def register(helpers: Iterable[Callable[..., Any]],
             inline: Iterable[Callable[..., Any]] = ()) -> None:
    """Let Numba compile calls to these plain functions into the functions calling them
    (each registered once); those in ``inline`` are copied into their callers."""
    from numba.extending import register_jitable

    copied = set(inline)
    for fn in (*helpers, *copied):
        if fn not in _registered:
            register_jitable(inline="always" if fn in copied else "never")(fn)
            _registered.add(fn)


Helpers = Iterable[Callable[..., Any]] | Callable[[], Iterable[Callable[..., Any]]]


def compiled(source: Callable[..., Any], *, helpers: Helpers = (), inline: Helpers = (),
             aot_module: Callable[[], Any] | None = None, aot_name: str = "",
             warm: Callable[[Callable[..., Any]], object] | None = None,
             fallback: Callable[..., Any] | None = None, what: str = "") -> Callable[..., Any]:
    """``source`` compiled, loaded once per process.

    ``aot_module()`` (when given) returns the ahead-of-time module or ``None``; its
    attribute ``aot_name`` (default: the source's name) is taken when present. Else Numba's
    JIT compiles ``source`` with ``helpers`` (and ``inline``) registered (:func:`register`)
    and ``warm`` is called with the result so compilation (or loading from the disk cache)
    happens now. ``helpers`` and ``inline`` may be functions returning them, called only
    then (their modules may import Numba).
    Without Numba: ``fallback`` (a plain twin), else :class:`RuntimeError` naming ``what``.
    """
    found = _loaded.get(source)
    if found is None:
        found = _load(source, helpers, inline, aot_module, aot_name, warm, fallback, what)
        _loaded[source] = found
    return found[0]


def kind(source: Callable[..., Any]) -> str:
    """How ``source`` was loaded: ``"aot"``, ``"jit"``, ``"python"``, or ``""`` (not yet)."""
    found = _loaded.get(source)
    return "" if found is None else found[1]


def _load(source: Callable[..., Any], helpers: Helpers, inline: Helpers,
          aot_module: Callable[[], Any] | None,
          aot_name: str,
          warm: Callable[[Callable[..., Any]], object] | None,
          fallback: Callable[..., Any] | None, what: str) -> tuple[Callable[..., Any], str]:
    if not NUMBA:
        if fallback is None:
            raise RuntimeError(f"{what or source.__name__} needs Numba "
                               "(DISPATCHLAB_NO_NUMBA is set or Numba is missing)")
        return fallback, "python"
    if aot_module is not None:
        module = aot_module()
        fn = getattr(module, aot_name or source.__name__, None) if module is not None else None
        if fn is not None:
            return fn, "aot"
    import numba

    register(_listed(helpers), _listed(inline))
    jitted: Callable[..., Any] = numba.njit(cache=True, nogil=True)(source)
    if warm is not None:
        warm(jitted)
    return jitted, "jit"


def _listed(functions: Helpers) -> tuple[Callable[..., Any], ...]:
    return tuple(functions() if callable(functions) else functions)
