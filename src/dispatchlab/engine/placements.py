"""Job placements (nodes and unit counts per job) as flat arrays, the way metrics read them.

The general engine records one small array per job; the compiled engine records one flat
array for the whole run and exposes it per job through :class:`Placements`.
:func:`flat_placements` gives consumers (audit, per-job table) the flat form either way.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, overload

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from dispatchlab.engine.recorder import Recorder

IntArray = npt.NDArray[np.int64]
Int32Array = npt.NDArray[np.int32]


class Placements(Sequence["Int32Array | None"]):
    """Read-only per-job view of a flat array: job ``j`` owns ``flat[offsets[j]:offsets[j+1]]``
    (``None`` for a job that never started)."""

    __slots__ = ("flat", "offsets", "started")

    def __init__(self, flat: Int32Array, offsets: IntArray, started: npt.NDArray[np.bool_]):
        self.flat = flat
        self.offsets = offsets
        self.started = started

    def __len__(self) -> int:
        return len(self.started)

    @overload
    def __getitem__(self, job: int) -> Int32Array | None: ...

    @overload
    def __getitem__(self, job: slice) -> list[Int32Array | None]: ...

    def __getitem__(self, job: int | slice) -> Int32Array | list[Int32Array | None] | None:
        if isinstance(job, slice):
            return [self[j] for j in range(*job.indices(len(self)))]
        if job < 0:
            job += len(self.started)
        if not self.started[job]:
            return None
        return self.flat[self.offsets[job]:self.offsets[job + 1]]

    def __iter__(self) -> Iterator[Int32Array | None]:
        flat, off = self.flat, self.offsets.tolist()
        for j, ok in enumerate(self.started.tolist()):
            yield flat[off[j]:off[j + 1]] if ok else None


def placement_sizes(rec: Recorder) -> IntArray:
    """Per job the number of nodes it used (0: never started)."""
    seq = rec.alloc_nodes
    if isinstance(seq, Placements):
        return np.diff(seq.offsets)
    return np.fromiter((0 if a is None else len(a) for a in seq), dtype=np.int64,
                       count=len(seq))


def flat_placements(rec: Recorder, jobs: npt.NDArray[np.bool_] | None = None
                    ) -> tuple[IntArray, Int32Array, Int32Array]:
    """Per job the number of nodes used (0: never started), and the nodes and unit counts
    of the ``jobs`` selected (default: all) concatenated in job order."""
    nodes_seq, counts_seq = rec.alloc_nodes, rec.alloc_counts
    sizes = placement_sizes(rec)
    if isinstance(nodes_seq, Placements) and isinstance(counts_seq, Placements):
        if jobs is None:
            return sizes, nodes_seq.flat, counts_seq.flat
        keep = np.repeat(jobs, sizes)
        return sizes, nodes_seq.flat[keep], counts_seq.flat[keep]
    pick = range(len(sizes)) if jobs is None else np.flatnonzero(jobs & (sizes > 0)).tolist()
    parts = [a for j in pick if (a := nodes_seq[j]) is not None]
    if not parts:
        empty = np.empty(0, np.int32)
        return sizes, empty, empty
    nodes = np.concatenate(parts).astype(np.int32, copy=False)
    counts = np.concatenate([a for j in pick if (a := counts_seq[j]) is not None]
                            ).astype(np.int32, copy=False)
    return sizes, nodes, counts


def end_nodes(rec: Recorder, jobs: IntArray) -> tuple[Int32Array, Int32Array]:
    """First and last node of each of the (started) ``jobs``."""
    seq = rec.alloc_nodes
    if isinstance(seq, Placements):
        return seq.flat[seq.offsets[jobs]], seq.flat[seq.offsets[jobs + 1] - 1]
    arrays = [seq[j] for j in jobs.tolist()]
    first = np.array([a[0] for a in arrays if a is not None], dtype=np.int32)
    last = np.array([a[-1] for a in arrays if a is not None], dtype=np.int32)
    return first, last
