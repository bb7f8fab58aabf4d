"""The free unit slots per node of a slot machine, kept by the machine itself.

When every job's unit asks the same resource vector, node ``n`` hosts ``k_n`` units
whatever runs beside them, so first-fit needs only each node's count of free slots: the
lowest-index nodes with a free slot, filled in order. Kept in Python lists (a sorted list
of the nodes with a free slot, the count per node), a start takes a prefix of that list
and an end puts its nodes back: no scratch copy of the free matrix and no compiled call
per start, with the same placements as :func:`~dispatchlab.dispatchers.allocators.first_fit`
on the view's free matrix minus the starts of the call.
"""

from __future__ import annotations

from bisect import insort

import numpy as np

from dispatchlab.arrays import IntArray
from dispatchlab.engine.decisions import Start
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import DispatchlabError
from dispatchlab.platform.platform import units_fitting


class FreeSlots:
    """Free slots per node (``free``; not kept when no node hosts two units), the nodes
    with one or more in index order (``avail``), what each running job holds (``held``);
    read from the view's free matrix at creation and whenever nodes changed state
    (:meth:`sync`)."""

    __slots__ = ("avail", "changes", "free", "held", "one", "req")

    def __init__(self, view: SystemView, req: IntArray, most: int):
        self.req = req
        self.one = most <= 1  # no node hosts two units: every placement is one unit per node
        self.held: dict[int, tuple[list[int], list[int]]] = {}
        self.free: list[int] = []
        self.avail: list[int] = []
        self.changes = -1
        self.sync(view)

    def sync(self, view: SystemView) -> None:
        """Free slots per node as the view's free matrix has them now."""
        self.free = units_fitting(view.free, self.req).tolist()
        self.avail = [n for n, f in enumerate(self.free) if f > 0]
        self.changes = view.node_changes

    def take(self, job: int, units: int) -> Start:
        """First-fit: ``job``'s ``units`` on the lowest-index nodes with free slots, as many
        per node as it has; the Start decision."""
        avail, free = self.avail, self.free
        if self.one:  # (the nodes listed are the free ones: ``free`` is not kept)
            nodes = avail[:units]
            del avail[:units]
            counts = [1] * len(nodes)
            placed = len(nodes)
        else:
            nodes, counts = [], []
            placed = 0
            for nd in avail:
                f = free[nd]
                c = f if f < units - placed else units - placed
                nodes.append(nd)
                counts.append(c)
                free[nd] = f - c
                placed += c
                if placed == units:
                    break
            del avail[:len(nodes) if nodes and free[nodes[-1]] == 0 else len(nodes) - 1]
        if placed != units:  # pragma: no cover - guarded by the slot count
            raise DispatchlabError(f"slot accounting broke: job {job} does not fit")
        self.held[job] = (nodes, counts)
        return Start(job, np.array(nodes, np.int64), np.array(counts, np.int64))

    def give_back(self, job: int) -> None:
        """``job`` stopped running: its slots are free again."""
        held = self.held.pop(job, None)
        if held is None:
            return
        free, avail = self.free, self.avail
        if self.one:
            nodes = held[0]
            if len(nodes) > 2:  # (one merge of two sorted runs beats three insertions)
                avail += nodes
                avail.sort()
            else:
                for nd in nodes:
                    insort(avail, nd)
            return
        for nd, c in zip(*held, strict=True):
            if not free[nd]:
                insort(avail, nd)
            free[nd] += c
