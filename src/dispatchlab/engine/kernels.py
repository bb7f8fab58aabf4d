"""Hot inner loops of the engine and the allocators, compiled with Numba when available.

Each kernel has a plain-numpy twin with identical results (used when Numba is missing
and, in the tests, as the reference). Kernels only compute; messages are built in Python.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dispatchlab.arrays import IntArray
from dispatchlab.numba_loader import NUMBA, compiled

#: Status codes of :func:`check_and_take`.
OK, BAD_COUNTS, BAD_RANGE, NOT_INCREASING, NO_ROOM = 0, 1, 2, 3, 4


def _check_and_take_py(
    free: IntArray, nodes: IntArray, counts: IntArray, req: IntArray, units: int
) -> int:
    """Validate a placement of ``units`` units and, when valid, take it from ``free``."""
    k = len(nodes)
    if k == 0 or len(counts) != k or counts.min() <= 0 or int(counts.sum()) != units:
        return BAD_COUNTS
    if nodes[0] < 0 or nodes[k - 1] >= free.shape[0] or nodes.min() < 0 \
            or nodes.max() >= free.shape[0]:
        return BAD_RANGE
    if k > 1 and not (nodes[1:] > nodes[:-1]).all():
        return NOT_INCREASING
    after = free[nodes] - counts[:, None] * req
    if after.min() < 0:
        return NO_ROOM
    free[nodes] = after
    return OK


def _release_py(free: IntArray, nodes: IntArray, counts: IntArray, req: IntArray) -> None:
    """Give a placement's resources back to ``free``."""
    free[nodes] += counts[:, None] * req


def _first_fit_py(free: IntArray, req: IntArray, units: int) -> tuple[IntArray, IntArray]:
    """Lowest-index nodes hosting ``units`` units; empty arrays when they do not fit."""
    mask = req > 0
    per_node = (free[:, mask] // req[mask]).min(axis=1)
    cum = per_node.cumsum()
    last = int(cum.searchsorted(units))
    if last >= len(cum):
        return np.empty(0, np.int64), np.empty(0, np.int64)
    nodes = per_node[: last + 1].nonzero()[0].astype(np.int64)
    counts = per_node[nodes].astype(np.int64)
    counts[-1] -= int(cum[last]) - units
    return nodes, counts


def _check_and_take_nb(free: Any, nodes: Any, counts: Any, req: Any, units: int) -> int:
    k = nodes.shape[0]
    n_nodes, n_res = free.shape
    if k == 0 or counts.shape[0] != k:
        return BAD_COUNTS
    total = 0
    for a in range(k):
        total += counts[a]
    if total != units:
        return BAD_COUNTS
    prev = -1
    for a in range(k):
        if counts[a] <= 0:
            return BAD_COUNTS
        nd = nodes[a]
        if nd < 0 or nd >= n_nodes:
            return BAD_RANGE
        if nd <= prev:
            return NOT_INCREASING
        prev = nd
        c = counts[a]
        for r in range(n_res):
            if free[nd, r] < c * req[r]:
                return NO_ROOM
    for a in range(k):
        nd = nodes[a]
        c = counts[a]
        for r in range(n_res):
            free[nd, r] -= c * req[r]
    return OK


def _release_nb(free: Any, nodes: Any, counts: Any, req: Any) -> None:
    n_res = free.shape[1]
    for a in range(nodes.shape[0]):
        nd = nodes[a]
        c = counts[a]
        for r in range(n_res):
            free[nd, r] += c * req[r]


def _units_on_node(free: Any, nd: int, req: Any, most: int) -> int:
    """How many units of ``req`` node ``nd`` can host now, at most ``most``."""
    fit = most
    for r in range(free.shape[1]):
        q = req[r]
        if q > 0:
            m = free[nd, r] // q
            if m < fit:
                fit = m
    return fit


def _first_fit_nb(free: Any, req: Any, units: int) -> Any:
    n_nodes = free.shape[0]
    # pass 1: how many nodes are needed (exact-size outputs keep no oversized buffers alive)
    k = 0
    left = units
    last = -1
    for nd in range(n_nodes):
        fit = _units_on_node(free, nd, req, left)
        if fit > 0:
            k += 1
            left -= fit
            if left == 0:
                last = nd
                break
    if last < 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    nodes = np.empty(k, np.int64)
    counts = np.empty(k, np.int64)
    k = 0
    left = units
    for nd in range(last + 1):
        fit = _units_on_node(free, nd, req, left)
        if fit > 0:
            nodes[k] = nd
            counts[k] = fit
            k += 1
            left -= fit
    return nodes, counts


#: Whether the kernels (and the compiled loops) can be compiled in this process.
COMPILED = NUMBA


#: The plain functions the compiled kernels are made of (for the ahead-of-time unit,
#: :mod:`dispatchlab.engine.compiled.aot_build`).
check_and_take_source = _check_and_take_nb
release_source = _release_nb
first_fit_source = _first_fit_nb
HELPERS = (_units_on_node,)


def _compile() -> None:
    """Replace the kernels below by their compiled (or plain) versions, on first call:
    ahead of time compiled for int64 arrays (no Numba start-up, ~0.5 s a process), the JIT
    for any other argument; the plain twins without Numba."""
    global check_and_take, release, first_fit_nodes
    module = _aot_module()
    if module is None:
        check_and_take, release, first_fit_nodes = (
            compiled(_check_and_take_nb, fallback=_check_and_take_py),
            compiled(_release_nb, fallback=_release_py),
            compiled(_first_fit_nb, helpers=HELPERS, fallback=_first_fit_py))
        return
    check_and_take, release, first_fit_nodes = _guarded(module)


def _aot_module() -> Any:
    """The engine's ahead-of-time unit when Numba is on and it is built, else ``None``."""
    if not NUMBA:
        return None
    from dispatchlab.engine.compiled.compiled_ops import aot_module

    return aot_module()


def _guarded(module: Any) -> tuple[Callable[..., int], Callable[..., None], Callable[..., Any]]:
    """The ahead-of-time kernels behind a type check: an extension module reads whatever
    memory it is given, so only native int64 arrays of the right dimensions reach it;
    anything else goes to the JIT, compiled on its first use (and raising its typing error
    for what it cannot take either)."""
    i8, nd = np.dtype(np.int64), np.ndarray
    take, give, fit = module.check_and_take, module.release, module.first_fit_nodes

    def placement_ok(free: Any, nodes: Any, counts: Any, req: Any) -> bool:
        return (nodes.__class__ is nd and counts.__class__ is nd and free.__class__ is nd
                and req.__class__ is nd and nodes.dtype == i8 and counts.dtype == i8
                and free.dtype == i8 and req.dtype == i8 and nodes.ndim == 1
                and counts.ndim == 1 and free.ndim == 2 and req.ndim == 1)

    def aot_check_and_take(free: Any, nodes: Any, counts: Any, req: Any, units: int) -> int:
        """Validate a placement and take it from ``free`` (ahead of time compiled)."""
        if placement_ok(free, nodes, counts, req):
            return take(free, nodes, counts, req, units)
        return int(compiled(_check_and_take_nb, fallback=_check_and_take_py)(
            free, nodes, counts, req, units))

    def aot_release(free: Any, nodes: Any, counts: Any, req: Any) -> None:
        """Give a placement back to ``free`` (ahead of time compiled)."""
        if placement_ok(free, nodes, counts, req):
            give(free, nodes, counts, req)
        else:
            compiled(_release_nb, fallback=_release_py)(free, nodes, counts, req)

    def aot_first_fit(free: Any, req: Any, units: int) -> Any:
        """First nodes that together host ``units`` units (ahead of time compiled)."""
        if (free.__class__ is nd and req.__class__ is nd and free.dtype == i8
                and req.dtype == i8 and free.ndim == 2 and req.ndim == 1):
            return fit(free, req, units)
        return compiled(_first_fit_nb, helpers=HELPERS, fallback=_first_fit_py)(
            free, req, units)

    return aot_check_and_take, aot_release, aot_first_fit


# The kernels are compiled on first call (importing Numba costs ~0.5 s, which a command
# that never runs them should not pay). Call them as ``kernels.<name>(…)``: after the
# first call the module attribute is the compiled function (or its ahead-of-time wrapper).
def _check_and_take_first(free: Any, nodes: Any, counts: Any, req: Any, units: int) -> int:
    """Validate a placement and take it from ``free`` (see :func:`_check_and_take_py`)."""
    _compile()
    return int(check_and_take(free, nodes, counts, req, units))


def _release_first(free: Any, nodes: Any, counts: Any, req: Any) -> None:
    """Give a placement back to ``free``."""
    _compile()
    release(free, nodes, counts, req)


def _first_fit_first(free: Any, req: Any, units: int) -> Any:
    """First nodes (in index order) that together host ``units`` units."""
    _compile()
    return first_fit_nodes(free, req, units)


check_and_take: Callable[..., int] = _check_and_take_first
release: Callable[..., None] = _release_first
first_fit_nodes: Callable[..., Any] = _first_fit_first


_warm = False


def warm_up() -> None:
    """Compile (or load from cache) every kernel now, so no decision is charged for it."""
    global _warm
    if _warm:
        return
    free = np.ones((2, 2), dtype=np.int64)
    req = np.array([1, 0], dtype=np.int64)
    nodes, counts = first_fit_nodes(free, req, 1)
    check_and_take(free, nodes, counts, req, 1)
    release(free, nodes, counts, req)  # (the first call compiled them: globals rebound)
    _warm = True
