"""Node power model and energy accounting, computed by hand: shared nodes, idle and off
periods, a booting node, a job killed at its wall-time."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.energy.accounting import run_energy
from dispatchlab.engine.decisions import Decision, PowerOff, PowerOn, Start, WakeAt
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView
from dispatchlab.platform.power import GENERIC, NodePowerSpec
from dispatchlab.platform.resolve import resolve_platform

SPEC = NodePowerSpec(idle=10.0, core_first=8.0, core=2.0, off=1.0, booting=20.0,
                     shutting_down=5.0, boot_time=10, shutdown_time=2)


class Script(BaseDispatcher):
    """Jobs 0 (2 cores) and 1 (1 core) share node 0 from 0; node 1 goes off at 0 (2 s) and
    boots at 60 (10 s); job 2 runs on node 1 from 80."""

    name = "script"

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        one = np.array([1])
        if view.now == 0:
            return [Start(0, np.array([0]), one), Start(1, np.array([0]), one),
                    PowerOff((1,)), WakeAt(60)]
        if view.now == 60:
            return [PowerOn((1,))]
        if view.now == 80:
            return [Start(2, np.array([1]), one)]
        return []


def workload() -> Workload:
    # job 1 asks 50 s but would run 300: killed at 50
    return Workload.from_columns(submit=[0, 0, 80], runtime=[100, 300, 10],
                                 walltime=[200, 50, 20], units=[1, 1, 1],
                                 req={"cores": [2, 1, 1]})


def platform() -> Platform:
    return Platform.homogeneous(2, {"cores": 4}).with_node_model(SPEC)


def test_energy_per_node_state_job_and_run_by_hand() -> None:
    res = simulate(workload(), platform(), Script())
    assert res.jobs["killed"].tolist() == [False, True, False]
    e = run_energy(res.recorder)
    assert (e.t0, e.t1) == (0, 100)
    # node 0: 3 cores [0,50): 10 + 8 + 2·2 = 22 W; 2 cores [50,100): 20 W
    n0 = 50 * 22.0 + 50 * 20.0
    # node 1: shutting down 2 s at 5 W, off 58 s at 1 W, booting 10 s at 20 W, idle 10 s,
    # one core 10 s (18 W), idle 10 s
    n1 = 2 * 5.0 + 58 * 1.0 + 10 * 20.0 + 10 * 10.0 + 10 * 18.0 + 10 * 10.0
    assert e.per_node.tolist() == pytest.approx([n0, n1])
    assert e.total == pytest.approx(n0 + n1)
    assert e.kwh == pytest.approx((n0 + n1) / 3.6e6)
    assert e.per_state == pytest.approx({"idle": 200.0, "busy": n0 + 180.0, "off": 58.0,
                                         "booting": 200.0, "shutting_down": 10.0,
                                         "down": 0.0})
    # shared node 0 split by use: job 0 holds 2 of the 3 busy cores until job 1's kill
    job0 = 50 * 22.0 * 2 / 3 + 50 * 20.0
    job1 = 50 * 22.0 / 3
    assert e.per_job is not None
    assert e.per_job.tolist() == pytest.approx([job0, job1, 180.0])
    assert e.per_job.sum() == pytest.approx(e.per_state["busy"])
    assert e.peak == pytest.approx(20.0 + 20.0)  # node 0 with 2 cores, node 1 booting
    assert e.edp == pytest.approx((n0 + n1) * 100)
    s = res.summary["energy"]
    assert s["total_j"] == pytest.approx(n0 + n1) and s["edp_js"] == pytest.approx(e.edp)
    assert s["jobs_j"] == pytest.approx(job0 + job1 + 180.0)
    assert res.jobs["energy_j"].tolist() == pytest.approx([job0, job1, 180.0])


def test_the_engine_meter_agrees_with_the_accounting() -> None:
    """Under a loose cap the engine's running IT power equals the integrated model."""
    res = simulate(workload(), platform(), Script(), power_cap=1000.0)
    ts = res.timeseries.set_index("time")
    e = run_energy(res.recorder)
    series = dict(zip(e.times.tolist(), e.power.tolist(), strict=True))
    for t in (0, 50, 60, 80, 90):
        assert ts.loc[t, "power_used"] == pytest.approx(series[t]), t


def test_generic_defaults_are_spec_section_8() -> None:
    assert GENERIC.busy(1) == pytest.approx(190.74) and GENERIC.busy(16) == pytest.approx(190.74)
    assert (GENERIC.idle, GENERIC.off, GENERIC.booting, GENERIC.shutting_down) == (
        95.0, 9.75, 125.17, 101.0)
    plat = Platform.homogeneous(3, {"cores": 8}).with_node_model(GENERIC)
    assert plat.boot_time.tolist() == [152] * 3 and plat.shutdown_time.tolist() == [7] * 3


def test_eurora_presets_have_the_eurora_figures() -> None:
    plat = resolve_platform("eurora-8")
    table = plat.power_table
    assert table is not None
    n = np.arange(plat.n_nodes)
    full = table.power(n, np.zeros(plat.n_nodes, np.int64), plat.capacity)
    gpu = plat.groups["gpu"]
    mic = plat.groups["mic"]
    # idle 2 × 20 W (+ 2 × 12 W per GPU node); first core 26.25 W, next 15 × 6.25 W
    assert full[gpu].tolist() == pytest.approx([64 + 26.25 + 15 * 6.25 + 2 * 50] * len(gpu))
    assert full[mic].tolist() == pytest.approx([40 + 26.25 + 15 * 6.25 + 2 * 115] * len(mic))
    assert table["idle"][gpu].tolist() == [64.0] * len(gpu)
    assert "power_model" in plat.describe()
