"""Issue 29 item 3: a job refused before the run under a fixed power cap can start on no
placement at all — checked against every placement of small random machines."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import Workload
from dispatchlab.engine.cap_feasibility import over_cap
from dispatchlab.engine.power_meter import MachinePower
from dispatchlab.engine.simulator import map_requests
from dispatchlab.engine.state import SystemView
from dispatchlab.platform.platform import Platform
from dispatchlab.platform.power import NodePowerSpec

watts = st.floats(0, 200, allow_nan=False)


@st.composite
def machines(draw: st.DrawFn) -> tuple[Platform, Workload, float, bool]:
    n = draw(st.integers(1, 3))
    cores = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    cap = np.array(cores, dtype=np.int64)[:, None]
    specs = tuple(NodePowerSpec(idle=draw(watts), core_first=draw(watts), core=draw(watts))
                  for _ in range(n))
    plat = Platform(("cores",), cap, tuple(f"n{k}" for k in range(n))).with_node_model(specs)
    units = draw(st.integers(1, sum(cores)))
    power = draw(st.one_of(st.just(float("nan")), watts))
    wl = Workload.from_columns(submit=[0], runtime=[5], walltime=[5], units=[units],
                               req={"cores": [1]}, power=[power])
    return plat, wl, draw(st.floats(1, 1500, allow_nan=False)), draw(st.booleans())


def _placements(cap: list[int], units: int) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for counts in itertools.product(*(range(c + 1) for c in cap)):
        if sum(counts) == units:
            nodes = np.flatnonzero(np.array(counts))
            out.append((nodes.astype(np.int64), np.array(counts)[nodes].astype(np.int64)))
    return out


@settings(max_examples=150, deadline=None)
@given(machines())
def test_a_refused_job_fits_no_placement(case: tuple[Platform, Workload, float, bool]
                                         ) -> None:
    plat, wl, cap, job_mode = case
    req = map_requests(wl, plat)
    view = SystemView(wl, plat, req)
    from dispatchlab.energy.job_power import from_column

    jobs = from_column(wl, plat, "node") if job_mode else None
    meter = MachinePower(view, req, plat.power_table, jobs, count_idle=True)
    refused = dict(over_cap(meter, req, wl.min_units, cap, set()))
    if 0 in refused:
        cheapest = min(meter.start_delta(0, nodes, counts, view.capacity)
                       for nodes, counts in _placements(plat.capacity[:, 0].tolist(),
                                                        int(wl.units[0])))
        assert meter.nodes_total + cheapest > cap + 1e-6
