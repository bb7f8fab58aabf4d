"""The power meter asked over many profile segments at once answers exactly as the meter
asked one segment at a time (``conservative-power``'s profile relies on it)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload
from dispatchlab.dispatchers.rule_based.segment_power import BLOCK, SegmentMeter
from dispatchlab.dispatchers.rule_based.segment_power_kernels import _pairwise_sum
from dispatchlab.engine.power_meter import MachinePower
from dispatchlab.engine.simulator import map_requests
from dispatchlab.engine.state import SystemView
from dispatchlab.platform.node_states import OFF, ON
from dispatchlab.platform.power import NodePowerSpec

watts = st.floats(0, 400, allow_nan=False).map(lambda w: round(w, 3))


@st.composite
def cases(draw: st.DrawFn) -> tuple[MachinePower, SystemView, np.ndarray, int]:
    """A machine of 1–140 nodes (cores, GPUs) with drawn node models and states, a meter
    in node mode, and random free capacity over a few segments."""
    n = draw(st.integers(1, 140))
    cores = draw(st.integers(1, 4))
    gpus = draw(st.integers(0, 2))
    spec = NodePowerSpec(idle=draw(watts), core_first=draw(watts), core=draw(watts),
                         gpu=draw(watts), off=draw(watts))
    res = ("cores", "gpu") if gpus else ("cores",)
    cap = np.array([[cores, gpus][:len(res)]] * n, dtype=np.int64)
    plat = Platform(res, cap, tuple(f"n{k}" for k in range(n))).with_node_model(spec)
    wl = Workload.from_columns(submit=[0], runtime=[5], walltime=[5], units=[1],
                               req={r: [1] for r in res})
    req = map_requests(wl, plat)
    view = SystemView(wl, plat, req)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    view.node_state[:] = np.where(rng.random(n) < 0.1, OFF, ON)
    meter = MachinePower(view, req, plat.power_table, None,
                         count_idle=draw(st.booleans()))
    segments = draw(st.integers(1, 5))
    free = rng.integers(0, cap + 1, size=(segments, *cap.shape)).astype(np.int64)
    return meter, view, free, int(rng.integers(0, 2**31))


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(cases())
def test_segments_answer_as_the_meter_does(case: tuple[MachinePower, SystemView,
                                                       np.ndarray, int]) -> None:
    meter, _view, free, seed = case
    seg = SegmentMeter(meter)
    power = seg.nodes_power(free)
    assert power.tolist() == [meter.nodes_power(f) for f in free]
    rng = np.random.default_rng(seed)
    n = free.shape[1]
    for size in {1, min(n, 8), min(n, 9), min(n, BLOCK), n}:
        nodes = np.sort(rng.choice(n, size=size, replace=False)).astype(np.int64)
        room = free[:, nodes, 0].min(axis=0)
        counts = np.maximum(rng.integers(0, room + 1), 1).astype(np.int64)
        got = seg.start_deltas(0, nodes, counts, free)
        assert got is not None
        assert got.tolist() == [meter.start_delta(0, nodes, counts, free=f) for f in free]


def test_the_compiled_row_sum_is_numpys() -> None:
    rng = np.random.default_rng(3)
    for n in range(1, BLOCK + 1):
        a = rng.random(n) * 10.0 ** rng.integers(-3, 5, n)
        assert _pairwise_sum(a, n) == a.sum()
