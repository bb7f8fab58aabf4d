"""Start-time generators of the node managers (thesis §5.3.3–5.3.5, SPEC §5).

Each node answers with up to ``responses`` distinct candidate starts whose fitting index
is ≥ 1. All nodes are handled at once: the input is the fitting index ``I`` (nodes ×
candidate starts), the output a boolean mask of the chosen starts.

- **First**: the ``responses`` earliest starts with ``I ≥ 1``.
- **Uniform**: starts drawn with probability ∝ ``I``. The thesis draws a point of the
  cumulative ``Σ I`` and, when it falls on a start with ``I < 1``, moves on to the next
  start with ``I ≥ 1`` (wrapping to the first one); so each feasible start carries its own
  ``I`` plus that of the infeasible starts just before it. Several starts are drawn
  without replacement from those weights (Efraimidis–Spirakis keys ``log(U)/weight``:
  one draw is exactly the thesis's).
- **Exponential**: the same with ``I(s) · exp(−rate · x)``, ``x = (s − est)/window`` ∈
  [0, 1): earlier starts are favoured, ``rate`` (default 3) says how strongly. The
  thesis's density ``(lst − est)·e^{−(lst − est)x}`` does not say in which unit ``x``
  runs; we fix it to the window fraction and expose the rate.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dispatchlab.arrays import BoolArray, FloatArray

Generator = Callable[[FloatArray, int, np.random.Generator], BoolArray]


def responses(units: int, window: int, nodes: int) -> int:
    """``floor((u − 1) · window / L) + 1`` starts per node: with that many distinct
    feasible starts from each of ``L`` nodes, some start is offered by ≥ ``u`` nodes
    (pigeonhole)."""
    return (max(units, 1) - 1) * window // max(nodes, 1) + 1


def first(index: FloatArray, count: int, rng: np.random.Generator) -> BoolArray:
    """The ``count`` earliest feasible starts of each node."""
    ok = index >= 1
    return ok & (np.cumsum(ok, axis=1) <= count)


def carried_weights(weight: FloatArray, feasible: BoolArray) -> FloatArray:
    """Each feasible start's weight plus the weight of the infeasible starts just
    before it (the trailing ones go to the first feasible start); 0 elsewhere."""
    w = np.cumsum(np.maximum(weight, 0.0), axis=1)
    at_feasible = np.maximum.accumulate(np.where(feasible, w, 0.0), axis=1)
    before = np.zeros_like(w)
    before[:, 1:] = at_feasible[:, :-1]
    out = np.where(feasible, w - before, 0.0)
    rows = np.flatnonzero(feasible.any(axis=1))
    if len(rows):
        head = feasible[rows].argmax(axis=1)
        out[rows, head] += w[rows, -1] - at_feasible[rows, -1]
    return out


def draw(weight: FloatArray, count: int, rng: np.random.Generator) -> BoolArray:
    """Per row, ``count`` distinct columns drawn ∝ ``weight`` without replacement
    (columns of weight 0 never)."""
    n, s = weight.shape
    positive = weight > 0
    if count >= s:
        return positive
    with np.errstate(divide="ignore"):
        keys = np.where(positive, np.log(rng.random((n, s))) / np.where(positive, weight, 1),
                        -np.inf)
    top = np.argpartition(-keys, count - 1, axis=1)[:, :count]
    out = np.zeros((n, s), dtype=bool)
    np.put_along_axis(out, top, True, axis=1)
    return out & positive


def uniform(index: FloatArray, count: int, rng: np.random.Generator) -> BoolArray:
    """Starts drawn ∝ ``I`` (infeasible mass carried to the next feasible start)."""
    return draw(carried_weights(index, index >= 1), count, rng)


def exponential(rate: float = 3.0) -> Generator:
    """Starts drawn ∝ ``I(s) · exp(−rate · x)`` (``x`` the start's window fraction)."""

    def gen(index: FloatArray, count: int, rng: np.random.Generator) -> BoolArray:
        s = index.shape[1]
        decay = np.exp(-rate * np.arange(s) / s)
        return draw(carried_weights(np.maximum(index, 0.0) * decay, index >= 1), count, rng)

    return gen


GENERATORS = ("first", "uniform", "exponential")


def get_generator(name: str, rate: float = 3.0) -> Generator:
    """A generator by name."""
    if name == "first":
        return first
    if name == "uniform":
        return uniform
    if name == "exponential":
        return exponential(rate)
    raise ValueError(f"unknown start-time generator '{name}' (known: {', '.join(GENERATORS)})")
