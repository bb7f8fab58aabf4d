"""A dispatcher's scratch copy of free resources while it builds one round of decisions."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from dispatchlab.engine.decisions import Start
from dispatchlab.engine.state import SystemView

IntArray = npt.NDArray[np.int64]


class Workspace:
    """Free capacity as it will be after the starts decided so far in this call.

    The node matrix is copied lazily, on the first start, so calls that start nothing
    cost no copy.
    """

    __slots__ = ("_copied", "free", "free_total", "view")

    def __init__(self, view: SystemView):
        self.view = view
        self.free: IntArray = view.free
        self.free_total: list[int] = list(view.free_total)
        self._copied = False

    def fits_total(self, job: int) -> bool:
        """Necessary condition: the job's demand fits the pooled free capacity."""
        u = int(self.view.jobs.units[job])
        return all(u * r <= f for r, f in zip(self.view.req_rows[job], self.free_total,
                                              strict=True))

    def take(self, job: int, nodes: IntArray, counts: IntArray) -> Start:
        """Record a start of ``job`` on ``nodes``/``counts`` and return the decision."""
        if not self._copied:
            self.free = self.free.copy()
            self._copied = True
        req = self.view.req[job]
        self.free[nodes] -= counts[:, None] * req
        u = int(counts.sum())
        self.free_total = [f - u * r for r, f in zip(self.view.req_rows[job], self.free_total,
                                                      strict=True)]
        return Start(job, np.asarray(nodes, dtype=np.int64), np.asarray(counts, dtype=np.int64))
