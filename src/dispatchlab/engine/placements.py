"""Where jobs ran, as the per-job tables read it: each job's last segment's nodes and counts.

The recorder keeps every segment's placement in one flat array
(:class:`~dispatchlab.engine.recorder.Segments`); :class:`Placements` shows it per job
without copying, and :func:`flat_placements` gathers the selected jobs' placements in job
order for vectorised consumers (the per-job table).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, overload

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import IntArray, with_zero

if TYPE_CHECKING:
    from dispatchlab.engine.recorder import Recorder

Int32Array = npt.NDArray[np.int32]


class Placements(Sequence["Int32Array | None"]):
    """Read-only per-job view of a flat array: job ``j`` owns ``flat[lo[j]:hi[j]]``
    (``None`` for a job that never started: ``lo[j] < 0``)."""

    __slots__ = ("flat", "hi", "lo")

    def __init__(self, flat: Int32Array, lo: IntArray, hi: IntArray):
        self.flat = flat
        self.lo = lo
        self.hi = hi

    def __len__(self) -> int:
        return len(self.lo)

    @overload
    def __getitem__(self, job: int) -> Int32Array | None: ...

    @overload
    def __getitem__(self, job: slice) -> list[Int32Array | None]: ...

    def __getitem__(self, job: int | slice) -> Int32Array | list[Int32Array | None] | None:
        if isinstance(job, slice):
            return [self[j] for j in range(*job.indices(len(self)))]
        lo = int(self.lo[job])
        return None if lo < 0 else self.flat[lo:int(self.hi[job])]

    def __iter__(self) -> Iterator[Int32Array | None]:
        flat = self.flat
        for lo, hi in zip(self.lo.tolist(), self.hi.tolist(), strict=True):
            yield None if lo < 0 else flat[lo:hi]


def last_segment_bounds(rec: Recorder) -> tuple[IntArray, IntArray]:
    """Per job the flat range of its last segment's placement (``-1, -1``: never ran)."""
    seg = rec.segments
    k = rec.last_seg
    lo = np.full(len(k), -1, np.int64)
    hi = np.full(len(k), -1, np.int64)
    ok = k >= 0
    lo[ok] = seg.offsets[k[ok]]
    hi[ok] = seg.offsets[k[ok] + 1]
    return lo, hi


def job_placements(rec: Recorder) -> tuple[Placements, Placements]:
    """Nodes and unit counts of each job's last segment."""
    lo, hi = last_segment_bounds(rec)
    return Placements(rec.segments.nodes, lo, hi), Placements(rec.segments.counts, lo, hi)


def placement_sizes(rec: Recorder) -> IntArray:
    """Per job the number of nodes of its last segment (0: never started)."""
    lo, hi = last_segment_bounds(rec)
    return hi - lo


def gather(flat: npt.NDArray[np.int32], lo: IntArray, hi: IntArray) -> Int32Array:
    """``flat[lo[0]:hi[0]] ++ flat[lo[1]:hi[1]] ++ …`` without a Python loop."""
    sizes = hi - lo
    if len(sizes) == 0 or int(sizes.sum()) == 0:
        return np.empty(0, np.int32)
    if len(lo) > 1 and (lo[1:] == hi[:-1]).all():  # contiguous already (one run, in order)
        return flat[int(lo[0]):int(hi[-1])]
    start = np.repeat(lo - with_zero(np.cumsum(sizes)[:-1]), sizes)
    return flat[start + np.arange(int(sizes.sum()))]


def flat_placements(rec: Recorder, jobs: npt.NDArray[np.bool_] | None = None
                    ) -> tuple[IntArray, Int32Array, Int32Array]:
    """Per job the number of nodes of its last segment (0: never started), and the nodes
    and unit counts of the selected ``jobs`` (default: all) concatenated in job order."""
    lo, hi = last_segment_bounds(rec)
    sizes = hi - lo
    pick = sizes > 0 if jobs is None else jobs & (sizes > 0)
    seg = rec.segments
    return sizes, gather(seg.nodes, lo[pick], hi[pick]), gather(seg.counts, lo[pick], hi[pick])


def end_nodes(rec: Recorder, jobs: IntArray) -> tuple[Int32Array, Int32Array]:
    """First and last node of each (started) job's last segment."""
    lo, hi = last_segment_bounds(rec)
    nodes = rec.segments.nodes
    return nodes[lo[jobs]], nodes[hi[jobs] - 1]
