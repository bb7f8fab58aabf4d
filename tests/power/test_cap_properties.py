"""Property: under any fixed cap, every dispatcher keeps the IT power (idle nodes included)
within it at every instant, and the independent audit agrees."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload, simulate
from dispatchlab.metrics.power_audit import it_power
from dispatchlab.platform.power import NodePowerSpec
from tests.power.capped_workloads import draw_jobs, hungriest_job_w

DISPATCHERS = ["fifo", "easy", "conservative", "prb-power", "sjf", "fifo-nonstrict", "easy-power",
               "conservative-power",
               "easy+poweroff:20", "prb-power+poweroff:0"]


@st.composite
def cases(draw: st.DrawFn) -> tuple[Workload, Platform, float, str]:
    n_nodes = draw(st.integers(2, 4))
    cores = draw(st.sampled_from([2, 4]))
    idle = draw(st.sampled_from([0.0, 10.0, 50.0]))
    # transitions draw no more than idle, so a node can always be switched back on
    spec = NodePowerSpec(idle=idle, core_first=draw(st.sampled_from([5.0, 30.0])),
                         core=draw(st.sampled_from([0.0, 2.0, 7.5])), off=idle / 10,
                         booting=idle, shutting_down=idle, boot_time=draw(st.sampled_from(
                             [0, 5])), shutdown_time=2)
    plat = Platform.homogeneous(n_nodes, {"cores": cores}).with_node_model(spec)
    wl = draw_jobs(draw, n_nodes, cores, 12)
    base = n_nodes * spec.idle
    need = hungriest_job_w(wl, spec)
    cap = base + need + draw(st.floats(0.0, 200.0))
    return wl, plat, cap, draw(st.sampled_from(DISPATCHERS))


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_it_power_stays_under_any_fixed_cap(case: tuple[Workload, Platform, float, str]
                                            ) -> None:
    wl, plat, cap, disp = case
    res = simulate(wl, plat, disp, power_cap=cap, loop="general")  # audited
    _, watts = it_power(res.recorder)
    assert watts.max() <= cap + 1e-6
    assert res.summary["power"]["over_cap_seconds"] == 0.0
    assert int(res.jobs["start"].ge(0).sum()) == wl.n_jobs
    # the engine's running sum is the model's power at every decision point
    ts = res.timeseries
    t, w = it_power(res.recorder)
    k = np.searchsorted(t, ts["time"].to_numpy(), side="right") - 1
    assert np.allclose(ts["power_used"].to_numpy(), w[np.maximum(k, 0)])
