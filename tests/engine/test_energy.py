"""Energy accounting from the segment and node-state logs, computed by hand."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.energy import StatePowerModel, node_energy
from dispatchlab.engine.decisions import Decision, PowerOff, PowerOn, Start, WakeAt
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView


class Script(BaseDispatcher):
    """n1: off at 0 (shutdown 6 s), on at 100 (boot 150 s), runs job 0 from 250 to 350,
    idles, off again at 400 (shutdown 6 s). n0 runs job 1 from 450 to 460."""

    name = "script"

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        t = view.now
        if t == 0:
            return [PowerOff((1,)), WakeAt(100)]
        if t == 100:
            return [PowerOn((1,))]
        if t == 250:
            return [Start(0, np.array([1]), np.array([1])), WakeAt(400)]
        if t == 400:
            return [PowerOff((1,))]
        return [Start(j, np.array([0]), np.array([1])) for j in view.queue if j != 0]


def test_energy_of_a_server_that_boots_computes_idles_and_shuts_down() -> None:
    wl = Workload.from_columns(submit=[0, 450], runtime=[100, 10], walltime=[200, 20],
                               units=[1, 1], req={"cores": [1, 1]})
    base = Platform.homogeneous(2, {"cores": 4})
    plat = Platform(base.resources, base.capacity, base.node_names, boot_time=150,
                    shutdown_time=6)
    res = simulate(wl, plat, Script())
    model = StatePowerModel()  # idle 95, busy 190.74, off 9.75, boot 125.17, down 101
    e = node_energy(res.recorder, model, 0, 500)
    n1 = (6 * 101.0 + 94 * 9.75 + 150 * 125.17 + 100 * 190.74 + 50 * 95.0 + 6 * 101.0
          + 94 * 9.75)
    n0 = 490 * 95.0 + 10 * 190.74
    assert e.per_node.tolist() == pytest.approx([n0, n1])
    assert e.total == pytest.approx(n0 + n1)
    assert e.per_state["busy"] == pytest.approx(110 * 190.74)
    assert e.per_state["booting"] == pytest.approx(150 * 125.17)
    assert e.per_state["shutting_down"] == pytest.approx(12 * 101.0)
    assert e.per_state["off"] == pytest.approx(188 * 9.75)
    assert e.per_state["idle"] == pytest.approx(490 * 95.0 + 50 * 95.0)
    # IT power steps: both idle-ish pieces summed
    at = dict(zip(e.times.tolist(), e.power.tolist(), strict=True))
    assert at[0] == pytest.approx(95 + 101) and at[6] == pytest.approx(95 + 9.75)
    assert at[250] == pytest.approx(95 + 190.74) and at[350] == pytest.approx(95 + 95)
    assert at[450] == pytest.approx(190.74 + 9.75)
    assert e.peak == pytest.approx(95 + 190.74)
    # integrating the IT power series gives the total
    dt = np.diff(np.r_[e.times, 500])
    assert float((e.power * dt).sum()) == pytest.approx(e.total)


def test_shared_node_counts_once() -> None:
    # Two jobs share one 2-core node from 0 to 10, then one runs alone to 20.
    wl = Workload.from_columns(submit=[0, 0], runtime=[10, 20], walltime=[50, 50],
                               units=[1, 1], req={"cores": [1, 1]})
    res = simulate(wl, "nodes=1,cores=2", "fifo")
    e = node_energy(res.recorder, StatePowerModel(idle=10.0, busy=30.0))
    assert e.total == pytest.approx(20 * 30.0)
