"""Idle-node power-off around any dispatcher, computed by hand: timeouts, switch-on when
jobs wait, boot delay, and the energy of the transitions."""

from __future__ import annotations

import pytest

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.energy.accounting import run_energy
from dispatchlab.errors import ConfigError
from dispatchlab.platform.power import NodePowerSpec

SPEC = NodePowerSpec(idle=10.0, core_first=8.0, core=2.0, off=1.0, booting=20.0,
                     shutting_down=5.0, boot_time=10, shutdown_time=2)


def run(disp: str, first_cores: int = 4, spec: NodePowerSpec = SPEC,
        **kw: object):  # type: ignore[no-untyped-def]
    wl = Workload.from_columns(submit=[0, 500], runtime=[100, 50], walltime=[100, 50],
                               units=[1, 2], req={"cores": [first_cores, 4]})
    plat = Platform.homogeneous(2, {"cores": 4}).with_node_model(spec)
    return simulate(wl, plat, disp, **kw)  # type: ignore[arg-type]


def test_nodes_go_off_after_the_timeout_and_boot_for_waiting_jobs() -> None:
    res = run("fifo+poweroff:60")
    # node 1 idle from 0 → off at 60 (off at 62); node 0 idle from 100 → off at 160;
    # job 1 at 500 needs both: both boot 500–510, it starts at 510
    assert res.jobs["start"].tolist() == [0, 510]
    e = run_energy(res.recorder)
    n0 = 100 * 24.0 + 60 * 10.0 + 2 * 5.0 + 338 * 1.0 + 10 * 20.0 + 50 * 24.0
    n1 = 60 * 10.0 + 2 * 5.0 + 438 * 1.0 + 10 * 20.0 + 50 * 24.0
    assert e.per_node.tolist() == pytest.approx([n0, n1])
    assert e.per_state["booting"] == pytest.approx(400.0)
    assert e.per_state["shutting_down"] == pytest.approx(20.0)
    stats = res.summary["dispatcher_stats"]
    assert stats["power_offs"] == 2 and stats["power_ons"] == 2
    # without power-off: nodes idle at 10 W instead; the wait is shorter
    plain = run("fifo")
    assert plain.jobs["start"].tolist() == [0, 500]
    assert run_energy(plain.recorder).total > e.total


def test_a_cap_holds_back_a_boot() -> None:
    # booting at 40 W, cap 50 W: job 0 (one core) on node 0 → 10 + 8 + 10 = 28 W; node 1
    # goes off at once. At 500 both are off (2 W): booting both would draw 80 W, so node 0
    # boots alone (41 W); once it is on (11 W) node 1 boots (50 W) at 510; job 1 (2 × 24 W
    # = 48 W) starts at 520
    spec = NodePowerSpec(idle=10.0, core_first=8.0, core=2.0, off=1.0, booting=40.0,
                         shutting_down=5.0, boot_time=10, shutdown_time=2)
    res = run("fifo+poweroff:0", first_cores=1, spec=spec, power_cap=50.0)
    assert res.jobs["start"].tolist() == [0, 520]
    assert res.summary["power"]["over_cap_seconds"] == 0.0
    assert res.summary["power"]["peak_w"] == pytest.approx(50.0)


def test_a_boot_counts_the_starts_of_its_round() -> None:
    # cap 50 W, two one-core nodes: idle 10, busy 40, off 1, booting 20 W. Job 0 starts at
    # 0 (50 W); node 1 goes off at 1. At 10 job 0 ends, jobs 1 and 2 arrive: job 1 starts
    # on node 0 (11 + 30 = 41 W), so booting node 1 (+19 W) would reach 60 W: it stays off
    # and job 2 starts on node 0 at 20. (The wrapper once counted only the power in use
    # before the round's starts and the engine refused its power-on.)
    spec = NodePowerSpec(idle=10.0, core_first=30.0, core=0.0, off=1.0, booting=20.0,
                         shutting_down=10.0, boot_time=5, shutdown_time=2)
    wl = Workload.from_columns(submit=[0, 10, 10], runtime=[10, 10, 10],
                               walltime=[10, 10, 10], units=[1, 1, 1], req={"cores": [1, 1, 1]})
    plat = Platform.homogeneous(2, {"cores": 1}).with_node_model(spec)
    res = simulate(wl, plat, "fifo+poweroff:0", power_cap=50.0)
    assert res.jobs["start"].tolist() == [0, 10, 20]
    assert res.summary["power"]["peak_w"] == pytest.approx(50.0)
    assert res.summary["power"]["over_cap_seconds"] == 0.0


def test_spec_errors() -> None:
    with pytest.raises(ConfigError, match="whole seconds"):
        get_dispatcher("easy+poweroff:soon")
    with pytest.raises(ConfigError, match="name the dispatcher"):
        get_dispatcher("+poweroff")
    assert get_dispatcher("order=sjf,select=easy+poweroff:30").name.endswith("+poweroff:30")
