"""``<policy>+poweroff`` in the compiled loop gives exactly the general loop's run.

Idle nodes switched off after the timeout, switched on (cheapest boot first) when jobs wait,
booting and shutting down for the platform's per-node delays (or at once), timers at the next
idle node's timeout and 1 s after a node with no boot delay came on: FIFO, orderings, EASY
with and without a depth limit (and ``easy-power``, EASY without a cap), timeouts 0, 1, 60
and 900 s, on hand-made cases, KTH slices and random workloads; every record is compared
(segments, node log, samples, decision points, planned starts, dispatcher statistics,
summary with its energy).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers.rule_based.compiled.kernel import AVAILABLE
from dispatchlab.errors import ConfigError, DispatchlabError
from dispatchlab.platform.power import GENERIC, NodePowerSpec
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.workload import SwfOptions, load_swf
from tests.conftest import shared_trace
from tests.engine.test_fastpath import assert_same

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="Numba disabled")

SPEC = NodePowerSpec(idle=10.0, core_first=8.0, core=2.0, off=1.0, booting=20.0,
                     shutting_down=5.0, boot_time=10, shutdown_time=2)
#: The same node switching at once (no boot or shutdown delay).
AT_ONCE = dataclasses.replace(SPEC, boot_time=0, shutdown_time=0)
TIMEOUTS = (0, 1, 60, 900)


def two_jobs(first_cores: int = 4) -> Workload:
    """A job at 0, a wider one at 500 (the hand-computed case of tests/power)."""
    return Workload.from_columns(submit=[0, 500], runtime=[100, 50], walltime=[100, 50],
                                 units=[1, 2], req={"cores": [first_cores, 4]})


@pytest.mark.parametrize("spec", [SPEC, AT_ONCE], ids=["delays", "at-once"])
@pytest.mark.parametrize("timeout", TIMEOUTS)
@pytest.mark.parametrize("inner", ["fifo", "easy"])
def test_hand_case(spec: NodePowerSpec, timeout: int, inner: str) -> None:
    plat = Platform.homogeneous(2, {"cores": 4}).with_node_model(spec)
    res = assert_same(two_jobs(), plat, f"{inner}+poweroff:{timeout}")
    assert res.summary["loop"] == "compiled"


def test_the_hand_computed_run_and_its_energy() -> None:
    """tests/power's figures (node 1 off at 60, both boot at 500) from the compiled loop."""
    from dispatchlab.energy.accounting import run_energy

    plat = Platform.homogeneous(2, {"cores": 4}).with_node_model(SPEC)
    res = assert_same(two_jobs(), plat, "fifo+poweroff:60")
    assert res.jobs["start"].tolist() == [0, 510]
    assert res.recorder is not None
    e = run_energy(res.recorder)
    n0 = 100 * 24.0 + 60 * 10.0 + 2 * 5.0 + 338 * 1.0 + 10 * 20.0 + 50 * 24.0
    n1 = 60 * 10.0 + 2 * 5.0 + 438 * 1.0 + 10 * 20.0 + 50 * 24.0
    assert e.per_node.tolist() == pytest.approx([n0, n1])
    stats = res.summary["dispatcher_stats"]
    assert stats["power_offs"] == 2 and stats["power_ons"] == 2


@pytest.fixture(scope="module")
def kth() -> Workload:
    return load_swf(shared_trace("KTH-SP2-1996-2.1-cln.swf.gz"), SwfOptions(limit=700))


@pytest.mark.parametrize("timeout", TIMEOUTS)
def test_kth_slice(kth: Workload, timeout: int) -> None:
    """KTH's first jobs on 100 one-core nodes with the generic node (boot 152 s, shutdown
    7 s), and switching at once."""
    slow = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    fast = resolve_platform("nodes=100,cores=1").with_node_model(
        dataclasses.replace(GENERIC, boot_time=0, shutdown_time=0))
    for inner in ("fifo", "easy"):
        res = assert_same(kth, slow, f"{inner}+poweroff:{timeout}")
        assert res.summary["dispatcher_stats"]["power_offs"] > 0
    assert_same(kth, fast, f"order=sjf,select=easy,estimate=real+poweroff:{timeout}")


def test_kth_slice_mixed_delays_and_depth(kth: Workload) -> None:
    """Nodes with different boot delays (the cheapest boots first, lowest index on ties),
    EASY with a depth limit, a strict LJF, no wall-time kill, two-core nodes."""
    rng = np.random.default_rng(4)
    plat = dataclasses.replace(resolve_platform("nodes=100,cores=1"),
                               boot_time=rng.integers(0, 4, 100) * 60,
                               shutdown_time=rng.integers(0, 3, 100) * 5)
    for disp in ("order=fifo,select=easy,depth=3+poweroff:300",
                 "order=ljf,select=strict+poweroff:60"):
        assert_same(kth, plat, disp)
    assert_same(kth, plat, "easy+poweroff:120", walltime_kill=False)
    # two-core nodes: a start leaves a slot free on its node, which the power-on rule does
    # not count for the first waiting job (nodes given a job in the round are left out)
    wide = dataclasses.replace(resolve_platform("nodes=50,cores=2"),
                               boot_time=rng.integers(0, 3, 50) * 30, shutdown_time=5)
    for disp in ("fifo+poweroff:30", "easy+poweroff:30", "easy-power+poweroff:0"):
        assert_same(kth, wide, disp)


@st.composite
def instances(draw: st.DrawFn) -> tuple[Workload, Platform]:
    """Small random runs: coinciding events, run time 0, kills, jobs wider than the
    machine (rejected), nodes with their own boot and shutdown delays (0 included)."""
    n_nodes = draw(st.integers(1, 4))
    cores = [draw(st.integers(1, 4)) for _ in range(n_nodes)]
    boot = [draw(st.sampled_from([0, 0, 1, 3, 20])) for _ in range(n_nodes)]
    down = [draw(st.sampled_from([0, 0, 1, 4])) for _ in range(n_nodes)]
    plat = Platform(resources=("cores",), capacity=np.array(cores)[:, None],
                    node_names=tuple(f"n{k}" for k in range(n_nodes)), name="random",
                    boot_time=np.array(boot), shutdown_time=np.array(down))
    n = draw(st.integers(1, 25))
    submit = np.cumsum(draw(st.lists(st.sampled_from([0, 0, 1, 2, 5, 30, 200]), min_size=n,
                                     max_size=n)))
    walltime = draw(st.lists(st.integers(1, 40), min_size=n, max_size=n))
    runtime = [draw(st.integers(0, w + 5)) for w in walltime]
    units = draw(st.lists(st.integers(1, 6), min_size=n, max_size=n))
    wl = Workload.from_columns(submit=submit, walltime=walltime, runtime=runtime,
                               units=units, req={"cores": [draw(st.integers(1, 2))] * n})
    return wl, plat


@settings(max_examples=80, deadline=None)
@given(instances(), st.sampled_from(["fifo", "easy", "sjf", "easy-sjf", "easy-power",
                                     "order=fifo,select=easy,depth=1"]),
       st.sampled_from([0, 1, 2, 7, 60]))
def test_random_workloads(instance: tuple[Workload, Platform], inner: str,
                          timeout: int) -> None:
    wl, plat = instance
    disp = f"{inner}+poweroff:{timeout}"
    try:
        simulate(wl, plat, disp, loop="general", on_infeasible="reject")
    except DispatchlabError as err:  # the wrapper may strand a queue (see below)
        with pytest.raises(ConfigError, match="queue is stuck"):
            simulate(wl, plat, disp, loop="compiled", on_infeasible="reject")
        with pytest.raises(DispatchlabError) as auto:  # the compiled loop hands it over
            simulate(wl, plat, disp, on_infeasible="reject")
        assert str(auto.value) == str(err)
        return
    assert_same(wl, plat, disp, on_infeasible="reject")


def test_power_on_follows_the_policys_head() -> None:
    """SJF's head (2 units) waits while the first job in arrival order asks 1 unit: the
    wrapper switches on what the head needs (switching on for the 1-unit job left the queue
    with no event, a bug of before), and both loops agree."""
    wl = Workload.from_columns(submit=[0] * 10 + [2, 2], walltime=[1] * 10 + [2, 1],
                               runtime=[0] * 12, units=[1] * 11 + [2],
                               req={"cores": [1] * 12})
    plat = Platform.homogeneous(4, {"cores": 1})
    res = assert_same(wl, plat, "sjf+poweroff:0")
    assert res.summary["jobs_run"] == 12


def test_what_the_compiled_loop_refuses() -> None:
    """Conservative backfilling: the general loop runs, and ``loop="compiled"`` says why
    (a scenario, ``easy-power`` under a cap and dynamic orderings run compiled:
    tests/engine/test_fastpath_poweroff_scenario.py)."""
    wl = two_jobs()
    plat = Platform.homogeneous(2, {"cores": 4}).with_node_model(SPEC)
    assert simulate(wl, plat, "conservative+poweroff:60").summary["loop"] == "general"
    with pytest.raises(ConfigError, match="strict and EASY"):
        simulate(wl, plat, "conservative+poweroff:60", loop="compiled")


# ---- under a fixed power cap ----

CAP_SPEC = dataclasses.replace(SPEC, booting=40.0)


@pytest.mark.parametrize("inner", ["fifo", "easy"])
def test_a_cap_holds_back_a_boot(inner: str) -> None:
    """tests/power's case: booting both nodes would exceed 50 W, node 0 boots alone, node 1
    once node 0 is on; job 1 starts at 520."""
    wl = Workload.from_columns(submit=[0, 500], runtime=[100, 50], walltime=[100, 50],
                               units=[1, 8], req={"cores": [1, 1]})  # (one core per unit)
    plat = Platform.homogeneous(2, {"cores": 4}).with_node_model(CAP_SPEC)
    res = assert_same(wl, plat, f"{inner}+poweroff:0", power_cap=50.0)
    assert res.jobs["start"].tolist() == [0, 520]


def test_a_boot_counts_the_starts_of_its_round() -> None:
    """tests/power's case: node 1 stays off because job 1's start (same round) leaves no
    room for its booting power."""
    spec = NodePowerSpec(idle=10.0, core_first=30.0, core=0.0, off=1.0, booting=20.0,
                         shutting_down=10.0, boot_time=5, shutdown_time=2)
    wl = Workload.from_columns(submit=[0, 10, 10], runtime=[10, 10, 10],
                               walltime=[10, 10, 10], units=[1, 1, 1], req={"cores": [1, 1, 1]})
    plat = Platform.homogeneous(2, {"cores": 1}).with_node_model(spec)
    for disp in ("fifo+poweroff:0", "easy+poweroff:0"):
        res = assert_same(wl, plat, disp, power_cap=50.0)
        assert res.jobs["start"].tolist() == [0, 10, 20]


@pytest.mark.parametrize("timeout", [0, 60, 900])
def test_kth_slice_under_a_cap(kth: Workload, timeout: int) -> None:
    """A binding cap on KTH's first jobs (generic node, idle counted or not): boots and
    shutdowns held back when their power does not fit."""
    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    low = 100 * GENERIC.idle + int(kth.units.max()) * GENERIC.core_first + 3.0
    for inner in ("fifo", "easy"):
        res = assert_same(kth, plat, f"{inner}+poweroff:{timeout}", power_cap=low + 900.0)
        assert res.summary["power"]["over_cap_seconds"] == 0.0
    assert_same(kth, plat, f"easy+poweroff:{timeout}", power_cap=low - 3000.0,
                count_idle=False)


@settings(max_examples=60, deadline=None)
@given(instances(), st.sampled_from(["fifo", "easy", "easy-sjf"]),
       st.sampled_from([0, 1, 7, 60]), st.floats(0.0, 1.0), st.booleans())
def test_random_workloads_under_a_cap(instance: tuple[Workload, Platform], inner: str,
                                      timeout: int, share: float, idle: bool) -> None:
    wl, plat = instance
    plat = plat.with_node_model(dataclasses.replace(
        SPEC, booting=float(np.round(30.0 * share, 1)), shutting_down=12.0))
    plat = dataclasses.replace(plat, boot_time=np.asarray(plat.boot_time) * 0 + 3)
    busy = plat.n_nodes * 10.0 + int(plat.capacity.sum()) * 10.0
    cap = float(np.round(plat.n_nodes * 12.0 + share * busy, 1))
    disp = f"{inner}+poweroff:{timeout}"
    kw = {"power_cap": cap, "count_idle": idle, "on_infeasible": "reject"}
    try:
        simulate(wl, plat, disp, loop="general", **kw)  # type: ignore[arg-type]
    except DispatchlabError as err:  # stuck (the cap or the wrapper): the same error
        with pytest.raises(DispatchlabError) as auto:
            simulate(wl, plat, disp, **kw)  # type: ignore[arg-type]
        assert str(auto.value) == str(err)
        return
    assert_same(wl, plat, disp, **kw)
