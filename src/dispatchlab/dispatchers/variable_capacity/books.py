"""Per-machine conservative-backfilling books of the target strategies, in arrays.

Machine ``m``'s free cores over future time is the step function ``T[m, :N[m]]`` /
``F[m, :N[m]]`` of :mod:`~dispatchlab.engine.compiled.slot_availability_ops` (the availability
conservative backfilling uses; here one slot = one core). The placement of a batch of jobs
(every arrival, and all pending jobs when machines change) is one call of
:func:`place_jobs`, compiled with Numba when it is available (plain Python otherwise, same
source).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.engine.compiled.compiled_ops import availability_helpers, heap_inlined
from dispatchlab.engine.compiled.slot_availability_ops import (
    NEVER,
    NONE,
    avail_add,
    avail_advance,
    avail_fit,
)
from dispatchlab.numba_loader import compiled

STRETCH, ASAP, PACKED = 0, 1, 2


def target_rank(share: float, muse: int, mode: int, pack: int) -> int:
    """Target rank among ``muse`` risk-free machines for a job of category ``share``."""
    if mode == PACKED:
        packs = max(1, muse // pack)
        k = min(int(share * packs), packs - 1) * pack
        return min(k, muse - 1)
    return min(int(share * muse), muse - 1)


def place_jobs(walltime: IntArray, submit: IntArray, cores: IntArray, share: FloatArray,
               T: IntArray, F: IntArray, N: IntArray, ranks: IntArray, muse: int, mode: int,
               nbhd: int, pack: int, now: int, smax: float, out_node: IntArray,
               out_start: IntArray, first: int) -> tuple[int, float]:
    """Place jobs ``first …`` of the batch in order (see :mod:`..target`); returns how many
    are done (fewer when an availability needs more room: grow and call again) and ``S⁺``.
    Raises ``ValueError`` before anything when ranks, ``muse`` or ``pack`` would index
    outside the books; a neighbourhood wider than ``muse`` adds no machine (cut there)."""
    if muse > len(ranks) or pack < 1 or nbhd < 0:
        raise ValueError("place_jobs: muse past the ranks, pack < 1 or neighbourhood < 0")
    for q in range(len(ranks)):
        if ranks[q] < 0 or ranks[q] >= len(N):
            raise ValueError("place_jobs: a rank outside the books")
    nbhd = min(nbhd, max(muse, 0))
    cap = T.shape[1]
    order = np.empty(2 * nbhd + 1, np.int64)
    fs = np.empty(2 * nbhd + 1, np.int64)
    fn = np.empty(2 * nbhd + 1, np.int64)
    i = first
    n_jobs = len(walltime)
    while i < n_jobs:
        for m in range(len(N)):
            if N[m] + 2 > cap:
                return i, smax
        w = max(1, walltime[i])
        r = submit[i]
        c = cores[i]
        out_node[i] = -1
        out_start[i] = NONE
        if muse <= 0:
            i += 1
            continue
        k = target_rank(share[i], muse, mode, pack)
        no = 1
        order[0] = k
        for d in range(1, nbhd + 1):
            if k + d < muse:
                order[no] = k + d
                no += 1
            if k - d >= 0:
                order[no] = k - d
                no += 1
        nf = 0
        chosen = -1
        for q in range(no):
            node = ranks[order[q]]
            s = avail_fit(T[node], F[node], N[node], c, w, NEVER, NEVER)
            if s == NONE:
                continue
            fs[nf] = s
            fn[nf] = node
            nf += 1
            if mode == STRETCH:
                if (s + w - r) / w <= smax:
                    chosen = nf - 1
                    break
            elif s == now:
                chosen = nf - 1
                break
        if chosen < 0 and nf > 0:
            if mode != STRETCH and fn[0] == ranks[k] and (fs[0] + w - r) / w <= smax:
                chosen = 0
            else:
                chosen = 0
                for q in range(1, nf):
                    if fs[q] < fs[chosen]:
                        chosen = q
        if chosen >= 0:
            s = fs[chosen]
            node = fn[chosen]
            st = (s + w - r) / w
            if st > smax:
                smax = st
            N[node] = avail_add(T[node], F[node], N[node], s, s + w, -c)
            out_node[i] = node
            out_start[i] = s
        i += 1
    return i, smax


def take_many(nodes: IntArray, t0: IntArray, t1: IntArray, cores: IntArray, T: IntArray,
              F: IntArray, N: IntArray, first: int) -> int:
    """Hold ``cores[i]`` on ``nodes[i]`` over ``[t0[i], t1[i])`` for ``i ≥ first``
    (negative cores give back); returns how many are done (as :func:`place_jobs`)."""
    cap = T.shape[1]
    i = first
    while i < len(nodes):
        m = nodes[i]
        if N[m] + 2 > cap:
            return i
        N[m] = avail_add(T[m], F[m], N[m], t0[i], t1[i], -cores[i])
        i += 1
    return i


def advance_all(T: IntArray, F: IntArray, N: IntArray, now: int) -> None:
    """Drop the past of every machine's availability."""
    for m in range(len(N)):
        N[m] = avail_advance(T[m], F[m], N[m], now)


_kernels: dict[str, Callable[..., Any]] = {}


def kernels() -> dict[str, Callable[..., Any]]:
    """The three functions, compiled with Numba (disk-cached) when it is available."""
    if not _kernels:
        helpers = [*availability_helpers(), target_rank]
        _kernels.update({f.__name__: compiled(f, helpers=helpers, inline=heap_inlined(),
                                              fallback=f)
                         for f in (place_jobs, take_many, advance_all)})
    return _kernels


class Books:
    """Every machine's free-core availability (the arrays above) and its capacity."""

    __slots__ = ("F", "N", "T", "cap", "k")

    def __init__(self, cap: list[int]):
        self.cap = np.array(cap, dtype=np.int64)
        n = len(cap)
        self.T = np.zeros((n, 64), dtype=np.int64)
        self.F = np.zeros((n, 64), dtype=np.int64)
        self.N = np.ones(n, dtype=np.int64)
        self.F[:, 0] = self.cap
        self.k = kernels()

    def clear(self, now: int) -> None:
        """Every machine idle from ``now`` on."""
        self.N[:] = 1
        self.T[:, 0] = now
        self.F[:, 0] = self.cap

    def grow(self) -> None:
        """Double the room for breakpoints."""
        self.T = np.concatenate([self.T, np.zeros_like(self.T)], axis=1)
        self.F = np.concatenate([self.F, np.zeros_like(self.F)], axis=1)

    def advance(self, now: int) -> None:
        """Drop the past."""
        self.k["advance_all"](self.T, self.F, self.N, now)

    def take(self, nodes: IntArray, t0: IntArray, t1: IntArray, cores: IntArray) -> None:
        """Hold (or, with negative cores, give back) cores over windows."""
        done = 0
        while done < len(nodes):
            done = self.k["take_many"](nodes, t0, t1, cores, self.T, self.F, self.N, done)
            if done < len(nodes):
                self.grow()

    def place(self, walltime: IntArray, submit: IntArray, cores: IntArray,
              share: FloatArray, ranks: IntArray, muse: int, mode: int, nbhd: int,
              pack: int, now: int, smax: float) -> tuple[IntArray, IntArray, float]:
        """Place a batch; per job its machine (−1: none) and start, and the new ``S⁺``."""
        n = len(walltime)
        node = np.empty(n, np.int64)
        start = np.empty(n, np.int64)
        done = 0
        while done < n:
            done, smax = self.k["place_jobs"](walltime, submit, cores, share, self.T,
                                              self.F, self.N, ranks, muse, mode, nbhd, pack,
                                              now, smax, node, start, done)
            if done < n:
                self.grow()
        return node, start, smax

    def free_now(self, m: int) -> int:
        """Free cores of machine ``m`` at the availability's first breakpoint."""
        return int(self.F[m, 0])
