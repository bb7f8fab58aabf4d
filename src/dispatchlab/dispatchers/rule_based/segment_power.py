"""The engine's power meter evaluated over many availability segments at once.

:class:`~dispatchlab.dispatchers.rule_based.power_availability.PowerAvailability` asks, for every
segment of its availability, the IT power the nodes would draw with that segment's free
capacity, and for every segment of a job's window what its placement would add. Asked one
segment at a time through :class:`~dispatchlab.engine.power_meter.MachinePower` that is a
few numpy calls per segment and per node (the bulk of a ``conservative-power`` run); here
each question is one numpy pass over segments × nodes.

The figures are bit-for-bit the meter's: every element is computed with the meter's own
operations in the meter's order (numpy's elementwise float64 arithmetic is Python's), and
each sum runs over one contiguous row, which numpy reduces exactly as the 1-D array the
meter sums (``tests/power/test_segment_power.py`` checks both against the meter).
"""

from __future__ import annotations

import types

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.engine.power_meter import _VECTOR_FROM, MachinePower
from dispatchlab.platform.node_states import ON
from dispatchlab.platform.power import NodePowerTable

#: The most nodes the compiled delta sums (numpy's pairwise block, which it reproduces).
BLOCK = 128


def _active(table: NodePowerTable, nodes: IntArray, usage: IntArray) -> FloatArray:
    """:meth:`NodePowerTable.active` over segments: ``usage`` is segments × nodes ×
    resources; the result segments × nodes."""
    c, g, m = table._cols  # type: ignore[attr-defined]
    out = np.zeros(usage.shape[:2])
    if c is not None:
        cores = usage[:, :, c].astype(np.float64)
        out += np.where(cores > 0, table["core_first"][nodes]
                        + (cores - 1) * table["core"][nodes], 0.0)
    if g is not None:
        out += usage[:, :, g] * table["gpu"][nodes]
    if m is not None:
        out += usage[:, :, m] * table["mic"][nodes]
    return out


class SegmentMeter:
    """The meter's questions over segments; the node figures gathered once."""

    __slots__ = ("fig", "meter", "state_w")

    def __init__(self, meter: MachinePower) -> None:
        self.meter = meter
        table = meter.table
        self.state_w = table.state_table() if table is not None else None
        self.fig: FloatArray | None = None
        if table is not None and meter.node_mode:
            # per node: idle (0 without idle power), first core, further core, GPU, MIC
            idle = meter._idle if meter.count_idle else [0.0] * len(meter._idle)
            self.fig = np.array([idle, meter._first, meter._core, meter._gpu, meter._mic],
                                dtype=np.float64)

    def nodes_power(self, free: IntArray) -> FloatArray:
        """:meth:`MachinePower.nodes_power` of each segment of ``free`` (segments × nodes
        × resources), node states as now."""
        meter, table, state_w = self.meter, self.meter.table, self.state_w
        if table is None or state_w is None:
            return np.zeros(len(free))
        view = meter.view
        n = np.arange(free.shape[1])
        used = view.capacity[None, :, :] - free
        state = view.node_state.astype(np.int64)
        if meter.node_mode:
            active = _active(table, n, used)
            if not meter.count_idle:
                return np.where(state == ON, active, 0.0).sum(axis=1)
            base = state_w[n, state]
            return np.where(state == ON, base + active, base).sum(axis=1)
        base = state_w[n, state]
        busy = (state == ON) & (used > 0).any(axis=2)
        return np.where(busy, 0.0, base).sum(axis=1)

    def start_deltas(self, job: int, nodes: IntArray, counts: IntArray, free: IntArray
                     ) -> FloatArray | None:
        """:meth:`MachinePower.start_delta` of ``job`` on ``nodes`` × ``counts`` from each
        segment of ``free`` (segments × nodes × resources); ``None`` where the meter's
        answer is not reproduced here (job-power mode), for the caller to ask it."""
        meter, table, fig = self.meter, self.meter.table, self.fig
        if table is None or fig is None:
            return None
        view = meter.view
        req = meter.req[job]
        state = view.node_state
        nodes = np.asarray(nodes, dtype=np.int64)
        counts = np.asarray(counts, dtype=np.int64)
        used = view.capacity[nodes][None, :, :] - free[:, nodes]
        if len(nodes) > _VECTOR_FROM and (state[nodes] == ON).all():
            if len(nodes) > BLOCK:
                new = used + counts[:, None] * req
                return (_active(table, nodes, new) - _active(table, nodes, used)).sum(axis=1)
            return kernels().large_deltas(used, nodes, counts, req, fig, *meter._cols)
        return kernels().small_deltas(used, nodes, counts, req, state, fig, *meter._cols)


_kernels: list[types.ModuleType] = []


def kernels() -> types.ModuleType:
    """The kernels module (imported on first use: importing Numba costs ~0.5 s)."""
    if not _kernels:
        from dispatchlab.dispatchers.rule_based import segment_power_kernels

        _kernels.append(segment_power_kernels)
    return _kernels[0]
