"""Property-based tests: random workloads and platforms, invariants on every run."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload, simulate
from dispatchlab.engine.kernels import (
    _check_and_take_py,
    _first_fit_py,
    check_and_take,
    first_fit_nodes,
)
from dispatchlab.metrics.audit import audit


@st.composite
def platforms(draw: st.DrawFn) -> Platform:
    n = draw(st.integers(1, 6))
    cores = draw(st.lists(st.integers(1, 8), min_size=n, max_size=n))
    gpus = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    cap = np.column_stack([cores, gpus])
    return Platform(resources=("cores", "gpu"), capacity=cap,
                    node_names=tuple(f"n{i}" for i in range(n)))


@st.composite
def workloads(draw: st.DrawFn, plat: Platform) -> Workload:
    n = draw(st.integers(1, 25))
    rows = []
    for _ in range(n):
        # pick a node type the platform has, so every job is feasible
        node = draw(st.integers(0, plat.n_nodes - 1))
        cores = draw(st.integers(1, int(plat.capacity[node, 0])))
        gpu = draw(st.integers(0, int(plat.capacity[node, 1])))
        fit = plat.max_units([cores, gpu])
        units = draw(st.integers(1, max(1, fit)))
        rows.append((draw(st.integers(0, 50)), draw(st.integers(0, 40)),
                     draw(st.integers(1, 40)), units, cores, gpu))
    sub, rt, wt, units, cores, gpu = (list(c) for c in zip(*rows, strict=True))
    return Workload.from_columns(submit=sub, runtime=rt, walltime=wt, units=units,
                                 req={"cores": cores, "gpu": gpu})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fifo_invariants_on_random_instances(data: st.DataObject) -> None:
    plat = data.draw(platforms())
    wl = data.draw(workloads(plat))
    res = simulate(wl, plat, "fifo")  # audits capacity, accounting and kills
    assert res.recorder is not None
    audit(res.recorder)
    j = res.jobs
    assert (j["start"] >= j["submit"]).all()
    assert (j["end"] == j["start"] + np.minimum(j["actual_runtime"], j["requested"])).all()
    assert (j["killed"] == (j["actual_runtime"] > j["requested"])).all()
    # strict FIFO: starts are non-decreasing in submission order
    assert (np.diff(j["start"].to_numpy()) >= 0).all()
    # a second run is identical, bit for bit
    again = simulate(wl, plat, "fifo")
    assert again.jobs.drop(columns=[]).equals(res.jobs)


@settings(max_examples=200, deadline=None)
@given(
    free=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 3)), min_size=1, max_size=8),
    req=st.tuples(st.integers(0, 3), st.integers(0, 2)).filter(lambda r: r[0] + r[1] > 0),
    units=st.integers(1, 12),
)
def test_compiled_kernels_match_numpy_twins(
    free: list[tuple[int, int]], req: tuple[int, int], units: int
) -> None:
    f = np.array(free, dtype=np.int64)
    r = np.array(req, dtype=np.int64)
    a_nodes, a_counts = first_fit_nodes(f.copy(), r, units)
    b_nodes, b_counts = _first_fit_py(f.copy(), r, units)
    assert a_nodes.tolist() == b_nodes.tolist()
    assert a_counts.tolist() == b_counts.tolist()
    if len(a_nodes):
        f1, f2 = f.copy(), f.copy()
        assert check_and_take(f1, a_nodes, a_counts, r, units) == 0
        assert _check_and_take_py(f2, a_nodes, a_counts, r, units) == 0
        assert (f1 == f2).all() and (f1 >= 0).all()
        # asking for one unit more than placed is refused by both, leaving free untouched
        g1, g2 = f.copy(), f.copy()
        assert check_and_take(g1, a_nodes, a_counts, r, units + 1) != 0
        assert _check_and_take_py(g2, a_nodes, a_counts, r, units + 1) != 0
        assert (g1 == f).all() and (g2 == f).all()
