"""The per-machine books of the authors' simulator (``simu.cc``: ``allocToMach``).

Machine ``m``'s book is ``BN[m]`` steps ``(BP[m, k] cores used, from BT[m, k])``, the last
one ``(0, t)``; the first step may begin in the past (the book is trimmed lazily, one step
per start or end event). :func:`try_place` is ``allocToMach`` line by line, including its
quirks: the first fit scans the steps with its own "doable" bookkeeping (a new try begins
only at a step that is not the last one), a machine with a one-step book takes the job at
once without the stretch test, and the merge of equal neighbouring steps skips one step
after each merge. Plain functions on arrays, compiled by Numba with the simulation.
"""

from __future__ import annotations

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.engine.compiled.slot_availability_ops import shift_in


def try_place(BP: IntArray, BT: FloatArray, BN: IntArray, m: int, nodes: int, now: float,
              t: float, np_: int, release: float, length: float, stretch_max: float,
              SP: IntArray, ST: FloatArray) -> tuple[bool, float, float]:
    """Place a job of ``np_`` cores for ``t`` s on machine ``m`` at or after ``now``.

    Returns ``(placed, start, stretch)``; not placed (book unchanged) when the planned
    stretch ``(start + t − release) / length`` exceeds ``stretch_max`` (``allocToMach``
    then returns that stretch). ``SP``/``ST``: scratch rows as long as ``BP``'s.
    """
    now = float(int(now))  # allocToMach takes cTime as a long
    size = BN[m]
    if size + 2 > BP.shape[1]:
        raise IndexError("book full")
    if size == 1:
        BP[m, 0] = np_
        BT[m, 0] = now
        BP[m, 1] = 0
        BT[m, 1] = now + t
        BN[m] = 2
        return True, now, (now + t - release) / length
    for k in range(size):
        SP[k] = BP[m, k]
        ST[k] = BT[m, k]
    n = size
    t_try = now
    p_u = SP[0]
    t_u = ST[0]
    i = 1
    p_try = p_u + np_
    t_chan = t_u
    doable = p_try <= nodes
    in_try = 1
    p_old = p_u
    while i < size:
        p_u = SP[i]
        t_u = ST[i]
        if doable and t_u >= t_try + t:
            stretch = (t_try + t - release) / length
            if stretch > stretch_max:
                return False, t_try, stretch
            n, at = _open_try(SP, ST, n, in_try, i, np_, p_try, t_try,
                              t_chan < t_try and now == t_try)
            if t_u > t_try + t:
                n = shift_in(SP, ST, n, at + max(in_try, i), p_old, t_try + t)
            _commit(BP, BT, BN, m, SP, ST, n)
            return True, t_try, stretch
        if doable:
            doable = p_u + np_ <= nodes
        elif i != size - 1:
            doable = p_u + np_ <= nodes
            if doable:
                in_try = i + 1
                p_try = p_u + np_
                t_try = t_u
        i += 1
        p_old = p_u
    if doable:
        stretch = (t_try + t - release) / length
        if stretch > stretch_max:
            return False, t_try, stretch
        n, _ = _open_try(SP, ST, n, in_try, i, np_, p_try, t_try,
                         t_chan < t_try and now == t_try)
        n = shift_in(SP, ST, n, n, 0, t_try + t)
        _commit(BP, BT, BN, m, SP, ST, n)
        return True, t_try, stretch
    t_u = ST[n - 1]
    stretch = (t_u + t - release) / length
    if stretch > stretch_max:
        return False, t_u, stretch
    SP[n - 1] = np_
    n = shift_in(SP, ST, n, n, 0, t + t_u)
    _commit(BP, BT, BN, m, SP, ST, n)
    return True, t_u, stretch


def _open_try(SP: IntArray, ST: FloatArray, n: int, in_try: int, i: int, np_: int,
              p_try: int, t_try: float, inserted: bool) -> tuple[int, int]:
    """The job taken on the try that began at step ``in_try − 1``: its cores added to the
    steps ``in_try … i − 1`` and its first step ``(p_try, t_try)`` written, ``inserted``
    before step ``in_try`` (a start now between two steps) or over step ``in_try − 1``.
    Returns the new length and how far the later steps moved (``in_try`` or 0)."""
    for j in range(in_try, i):
        SP[j] += np_
    if inserted:
        return shift_in(SP, ST, n, in_try, p_try, t_try), in_try
    SP[in_try - 1] = p_try
    ST[in_try - 1] = t_try
    return n, 0


def _commit(BP: IntArray, BT: FloatArray, BN: IntArray, m: int, SP: IntArray,
            ST: FloatArray, n: int) -> None:
    """``allocToMach``'s merge (drop a step equal to the one before it, then skip one),
    written back as machine ``m``'s book."""
    i = 0
    while i < n - 1:
        if SP[i] == SP[i + 1]:
            for k in range(i + 1, n - 1):
                SP[k] = SP[k + 1]
                ST[k] = ST[k + 1]
            n -= 1
        i += 1
    for k in range(n):
        BP[m, k] = SP[k]
        BT[m, k] = ST[k]
    BN[m] = n


def trim(BP: IntArray, BT: FloatArray, BN: IntArray, m: int, now: float) -> None:
    """Machine ``m``'s book after a start or end at ``now``: its first step dropped when
    the second begins by then (``simu.cc``'s ``Astart``/``Cend``). A one-step book becomes
    ``[(0, 0)]``: the C++ reads past its end there, and what it makes of it reads the same
    (a one-step book is only ever replaced, and its cores used are 0)."""
    n = BN[m]
    if n < 2:
        BP[m, 0] = 0
        BT[m, 0] = 0.0
        BN[m] = 1
        return
    if BT[m, 1] <= now:
        for k in range(n - 1):
            BP[m, k] = BP[m, k + 1]
            BT[m, k] = BT[m, k + 1]
        BN[m] = n - 1
