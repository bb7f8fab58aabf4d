"""A dispatcher's scratch view of free resources while it builds one round of decisions."""

from __future__ import annotations

from dispatchlab.arrays import IntArray
from dispatchlab.engine import kernels
from dispatchlab.engine.budget import fits_cap
from dispatchlab.engine.decisions import Start
from dispatchlab.engine.state import SystemView


class Workspace:
    """Free capacity as it will be after the starts decided so far in this call.

    Pooled totals are updated at once; the node matrix is materialized lazily (copied and
    updated only when :attr:`free` is read after a start), so a call that starts one job
    or none copies nothing. Under a power budget, :attr:`power_left` is what the starts
    so far leave under the cap and :attr:`power_taken` what they add.
    """

    __slots__ = ("_free", "_pending", "free_total", "power_left", "power_taken", "view")

    def __init__(self, view: SystemView):
        self.view = view
        self._free: IntArray = view.free
        self._pending: list[Start] = []
        self.free_total: list[int] = list(view.free_total)
        b = view.budget
        self.power_left = float("inf") if b is None else b.cap - b.used
        self.power_taken = 0.0  # what the starts so far add (finite under any cap)

    def power_fits(self, job: int, nodes: IntArray, counts: IntArray) -> bool:
        """True when the job's power on this placement fits what the cap leaves."""
        if self.view.budget is None:
            return True
        return fits_cap(0.0, self.power_of(job, nodes, counts), self.power_left)

    def power_of(self, job: int, nodes: IntArray, counts: IntArray) -> float:
        """What the start would add to the power after the starts taken so far."""
        return self.view.power_of(job, nodes, counts, self.free if self._pending
                                  or self._free is not self.view.free else None)

    @property
    def free(self) -> IntArray:
        """Node × resource free capacity after the starts taken so far."""
        if self._pending:
            if self._free is self.view.free:
                self._free = self._free.copy()
            req = self.view.req
            for s in self._pending:
                kernels.check_and_take(self._free, s.nodes, s.counts, req[s.job],
                                       sum(s.counts.tolist()))  # (numpy's sum: ~5× slower)
            self._pending.clear()
        return self._free

    def fits_total(self, job: int) -> bool:
        """Necessary condition: the job's demand fits the pooled free capacity."""
        ft = self.free_total  # inlined loop: called for every queued job tried
        for r, amount in self.view.demand_nz[job]:
            if amount > ft[r]:
                return False
        return True

    def take(self, job: int, nodes: IntArray, counts: IntArray) -> Start:
        """Record a start of ``job`` on ``nodes``/``counts`` and return the decision."""
        start = Start(job, nodes, counts)
        if self.view.budget is not None:
            p = self.power_of(job, nodes, counts)
            self.power_left -= p
            self.power_taken += p
        self._pending.append(start)
        ft = self.free_total
        for r, amount in self.view.demand_nz[job]:
            ft[r] -= amount
        return start
