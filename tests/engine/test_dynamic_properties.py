"""Property tests for a machine that changes while it runs: whatever nodes leave and come
back, whatever the power cap does, every dispatcher's run passes the audit (capacity on
usable nodes, every job accounted for, durations by the work model, power at starts),
and both capacity sweeps of the audit agree."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload, simulate
from dispatchlab.engine.scenario import Change, Scenario
from dispatchlab.metrics.audit import _check_capacity

DISPATCHERS = ["fifo", "easy", "sjf", "conservative", "easy-sjf", "fifo-nonstrict",
               "order=fifo,select=easy,alloc=best-fit"]


@st.composite
def dynamic_runs(draw: st.DrawFn) -> tuple[Workload, Platform, Scenario, str, str]:
    n_nodes = draw(st.integers(1, 4))
    cores = draw(st.integers(1, 3))
    plat = Platform.homogeneous(n_nodes, {"cores": cores})
    n = draw(st.integers(1, 25))
    submit = np.cumsum(draw(st.lists(st.sampled_from([0, 0, 1, 3, 10]), min_size=n,
                                     max_size=n)))
    wall = draw(st.lists(st.integers(1, 30), min_size=n, max_size=n))
    run = [draw(st.integers(0, w + 5)) for w in wall]
    units = draw(st.lists(st.integers(1, n_nodes * cores), min_size=n, max_size=n))
    ckpt = draw(st.lists(st.sampled_from([0, 0, 3, 7]), min_size=n, max_size=n))
    power = draw(st.lists(st.sampled_from([5.0, 10.0, 25.0]), min_size=n, max_size=n))
    wl = Workload.from_columns(submit=submit, walltime=wall, runtime=run, units=units,
                               req={"cores": [1] * n}, checkpoint=ckpt, power=power)
    rows = []
    for _ in range(draw(st.integers(0, 6))):
        t = draw(st.integers(0, int(submit[-1]) + 40))
        node = f"n{draw(st.integers(0, n_nodes - 1))}"
        rows.append(Change(t, draw(st.sampled_from(["node_down", "node_up"])), target=node))
    if draw(st.booleans()):
        for _ in range(draw(st.integers(1, 3))):
            rows.append(Change(draw(st.integers(0, 60)), "power_cap",
                               float(draw(st.sampled_from([30, 60, 1000])))))
    # every node is back at the end so that every job can finish
    end = int(submit[-1]) + 50
    rows += [Change(end, "node_up", target=f"n{k}") for k in range(n_nodes)]
    rows.append(Change(end, "power_cap", float("inf")))
    return (wl, plat, Scenario(rows), draw(st.sampled_from(DISPATCHERS)),
            draw(st.sampled_from(["requeue", "fail"])))


@settings(max_examples=120, deadline=None)
@given(dynamic_runs())
def test_every_dynamic_run_passes_the_audit(run: tuple[Workload, Platform, Scenario, str,
                                                       str]) -> None:
    wl, plat, scen, dispatcher, on_abort = run
    res = simulate(wl, plat, dispatcher, scenario=scen, on_abort=on_abort,
                   on_infeasible="reject")  # audited
    rec = res.recorder
    assert rec is not None
    _check_capacity(rec, compiled=True)
    _check_capacity(rec, compiled=False)
    j = res.jobs
    assert len(j) == wl.n_jobs
    ran = ~j["rejected"]
    assert (j.loc[ran, "end"] >= j.loc[ran, "start"]).all()
    if res.summary.get("power"):
        assert res.summary["power"]["peak_w"] <= max(1000.0, float(wl.power.max())) + 1e-9


@pytest.mark.parametrize("dispatcher", DISPATCHERS)
def test_alive_count_walk_on_a_real_slice(dispatcher: str) -> None:
    """A seeded random walk of the alive node count over a KTH slice: audited, jobs
    restarted, utilization measured against what was alive."""
    from dispatchlab.engine.scenario_gen import generate_scenario
    from dispatchlab.workload import SwfOptions, load_swf
    from tests.conftest import shared_trace

    wl = load_swf(shared_trace("KTH-SP2-1996-2.1-cln.swf.gz"), SwfOptions(limit=400))
    span = int(wl.submit[-1])
    scen = generate_scenario(f"gen:random-walk:mean=80,range=20,step=5,period=3600,"
                             f"until={span},seed=4")
    scen = scen.merged(Scenario([Change(span + 1, "alive_nodes", 100.0)]))
    # (the general loop: test_fastpath_scenario.py compares the compiled one with it)
    res = simulate(wl, "nodes=100,cores=1", dispatcher, scenario=scen, loop="general")
    assert res.summary["loop"] == "general"
    assert 0 < res.summary["utilization"] <= 1
    assert res.jobs["end"].min() >= 0
