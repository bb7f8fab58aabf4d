"""``<policy>+poweroff`` on a machine that changes, in the compiled loop, gives exactly the
general loop's run.

A power cap varying with a scenario's ``power_cap`` rows (waited for when it falls); nodes
leaving and coming back (``node_down`` / ``node_up`` / ``alive_nodes``) whatever their power
state — a node off, booting or shutting down goes ``down`` (its boot or shutdown dropped,
whose end is still a decision point) and comes back on and idle; jobs on a leaving node
aborted and re-queued (from zero or a checkpoint) or failed; ``easy-power`` under a fixed or
varying cap; the dynamic orderings ``wfp3``, ``uni``, ``slowdown``. Every record is compared
(segments, node log, samples with the power, decision points, planned starts, dispatcher
statistics, summary with its energy).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Workload, simulate
from dispatchlab.dispatchers.rule_based.compiled.kernel import AVAILABLE
from dispatchlab.engine.recorder import ABORTED
from dispatchlab.engine.scenario import Change, Scenario
from dispatchlab.errors import ConfigError, DispatchlabError
from dispatchlab.platform.node_states import BOOTING, DOWN, OFF, ON, SHUTTING_DOWN
from dispatchlab.platform.power import GENERIC
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.workload import SwfOptions, load_swf
from tests.conftest import shared_trace
from tests.engine.test_fastpath import assert_same
from tests.engine.test_fastpath_poweroff import AT_ONCE, SPEC, instances, two_jobs

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="Numba disabled")


def node_rows(*rows: tuple[int, str, str]) -> Scenario:
    """``(time, node_down | node_up, node)`` rows as a scenario."""
    return Scenario([Change(t, what, 0.0, node) for t, what, node in rows], source="rows")


def states_of(res: object, node: int) -> list[tuple[int, int]]:
    """``(time, state)`` of ``node`` in the run's node log."""
    log = np.asarray(res.recorder.node_log).reshape(-1, 3)  # type: ignore[attr-defined]
    return [(int(t), int(s)) for t, n, s in log.tolist() if n == node]


# two_jobs() on two 4-core nodes, timeout 60 s (boot 10 s, shutdown 2 s): node 1 shuts down
# at 60 (off at 62), node 0 at 160 (off at 162), both boot at 500 for job 1 (on at 510)
HAND = {
    "shutting-down": node_rows((61, "node_down", "n1"), (300, "node_up", "n1")),
    "off": node_rows((200, "node_down", "n1"), (505, "node_up", "n1")),
    "booting": node_rows((505, "node_down", "n0"), (600, "node_up", "n0")),
    "running": node_rows((50, "node_down", "n0"), (70, "node_up", "n0")),
    "down-and-up-at-once": node_rows((30, "node_down", "n1"), (30, "node_up", "n1")),
    "alive": Scenario([Change(61, "alive_nodes", 1.0), Change(505, "alive_nodes", 0.0),
                       Change(507, "alive_nodes", 2.0)], source="alive"),
}


@pytest.mark.parametrize("case", sorted(HAND))
@pytest.mark.parametrize("inner", ["fifo", "easy"])
def test_a_node_leaves_in_each_power_state(case: str, inner: str) -> None:
    plat = Platform.homogeneous(2, {"cores": 4}).with_node_model(SPEC)
    for spec, abort in ((SPEC, "requeue"), (AT_ONCE, "fail")):
        plat = Platform.homogeneous(2, {"cores": 4}).with_node_model(spec)
        res = assert_same(two_jobs(), plat, f"{inner}+poweroff:60", scenario=HAND[case],
                          on_abort=abort)
        assert res.summary["loop"] == "compiled"


def test_the_states_a_leaving_node_goes_through() -> None:
    """The general loop's rule, which the compiled loop follows: a shutting-down, off or
    booting node goes down (its transition dropped), and comes back on."""
    plat = Platform.homogeneous(2, {"cores": 4}).with_node_model(SPEC)
    res = assert_same(two_jobs(), plat, "fifo+poweroff:60", scenario=HAND["shutting-down"])
    assert states_of(res, 1)[:4] == [(60, SHUTTING_DOWN), (61, DOWN), (300, ON),
                                     (360, SHUTTING_DOWN)]
    res = assert_same(two_jobs(), plat, "fifo+poweroff:60", scenario=HAND["booting"])
    assert states_of(res, 0)[-3:] == [(500, BOOTING), (505, DOWN), (600, ON)]
    assert 510 in list(res.recorder.decision_at)  # the dropped boot's end: a decision point
    res = assert_same(two_jobs(), plat, "fifo+poweroff:60", scenario=HAND["off"])
    assert (200, DOWN) in states_of(res, 1) and (162, OFF) in states_of(res, 0)


def test_checkpoints_and_a_fixed_cap_with_nodes_leaving() -> None:
    wl = dataclasses.replace(two_jobs(), checkpoint=np.array([30, 0], np.int64))
    plat = Platform.homogeneous(2, {"cores": 4}).with_node_model(SPEC)
    for inner in ("fifo", "easy", "easy-power"):
        res = assert_same(wl, plat, f"{inner}+poweroff:60", scenario=HAND["running"],
                          power_cap=60.0)
        seg = res.recorder.segments  # type: ignore[union-attr]
        first = [(int(seg.t0[k]), int(seg.t1[k]), int(seg.outcome[k]), int(seg.lost[k]))
                 for k in range(len(seg)) if seg.job[k] == 0]
        assert first[0] == (0, 50, ABORTED, 20) and len(first) == 2  # 30 s kept


@pytest.fixture(scope="module")
def kth() -> Workload:
    return load_swf(shared_trace("KTH-SP2-1996-2.1-cln.swf.gz"), SwfOptions(limit=700))


def _low(kth: Workload) -> float:
    """The idle machine plus the widest job (generic node, 100 one-core nodes)."""
    return 100 * GENERIC.idle + int(kth.units.max()) * GENERIC.core_first + 3.0


WALK = ("gen:random-walk:what=alive_nodes,mean=90,range=10,step=3,period=3600,"
        "until=9000000,seed=5")


def _cap_walk(kth: Workload) -> str:
    return (f"gen:random-walk:what=power_cap,mean={_low(kth) + 700},range=700,step=350,"
            "period=7200,until=9000000,seed=2")


@pytest.mark.parametrize("inner", ["fifo", "easy"])
def test_kth_slice_cap_walk(kth: Workload, inner: str) -> None:
    """1. a varying cap: boots and shutdowns held back when the cap in force is low."""
    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    res = assert_same(kth, plat, f"{inner}+poweroff:60", scenario=_cap_walk(kth))
    assert res.summary["dispatcher_stats"]["power_offs"] > 0
    day_night = f"gen:day-night:day={_low(kth)},night={_low(kth) + 1200},days=60"
    assert_same(kth, plat, f"{inner}+poweroff:900", scenario=day_night, count_idle=False)


@pytest.mark.parametrize("inner", ["fifo", "easy", "order=sjf,select=easy,depth=3"])
def test_kth_slice_node_walk(kth: Workload, inner: str) -> None:
    """2. nodes leaving and coming back, whatever their power state."""
    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    res = assert_same(kth, plat, f"{inner}+poweroff:60", scenario=WALK)
    log = np.asarray(res.recorder.node_log).reshape(-1, 3)  # type: ignore[union-attr]
    assert (log[:, 2] == DOWN).any() and (log[:, 2] == OFF).any()
    assert_same(kth, plat, f"{inner}+poweroff:900", scenario=[WALK, _cap_walk(kth)],
                on_abort="fail")


def test_kth_slice_node_walk_checkpoints_two_core_nodes(kth: Workload) -> None:
    rng = np.random.default_rng(3)
    ck = np.where(rng.random(kth.n_jobs) < 0.5, rng.integers(60, 3600, kth.n_jobs), 0)
    wl = dataclasses.replace(kth, checkpoint=ck.astype(np.int64))
    walk = WALK.replace("mean=90,range=10", "mean=44,range=6")
    plat = dataclasses.replace(resolve_platform("nodes=50,cores=2"),
                               boot_time=rng.integers(0, 3, 50) * 30, shutdown_time=5)
    for inner in ("fifo", "easy"):
        assert_same(wl, plat, f"{inner}+poweroff:30", scenario=walk)
    assert_same(wl, plat, "easy+poweroff:0", scenario=walk, walltime_kill=False)


@pytest.mark.parametrize("order", ["wfp3", "uni", "slowdown"])
def test_kth_slice_dynamic_orders(kth: Workload, order: str) -> None:
    """3. the queue sorted by the score at every decision, the power-on for its head."""
    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    assert_same(kth, plat, f"order={order},select=easy+poweroff:60")
    assert_same(kth, plat, f"order={order},select=strict+poweroff:900", scenario=WALK)
    assert_same(kth, plat, f"order={order},select=easy-power+poweroff:60",
                scenario=[WALK, _cap_walk(kth)])


def test_kth_slice_easy_power_under_a_cap(kth: Workload) -> None:
    """3. ``easy-power``'s reservation in power, node states and boots included."""
    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    for timeout in (0, 900):
        assert_same(kth, plat, f"easy-power+poweroff:{timeout}", power_cap=_low(kth) + 900.0)
    assert_same(kth, plat, "easy-power+poweroff:60", scenario=_cap_walk(kth))
    assert_same(kth, plat, "easy-power+poweroff:60", power_cap=_low(kth) - 3000.0,
                count_idle=False)


@st.composite
def changing_runs(draw: st.DrawFn) -> tuple[Workload, Platform, Scenario | None, dict[str, object]]:
    """A random run of :func:`tests.engine.test_fastpath_poweroff.instances` with node rows
    (each node down or up, ``alive_nodes``) and, under a node model, a fixed cap or cap
    rows; at 400 every node is back and the cap high, so every job can run in the end."""
    wl, plat = draw(instances())
    n_nodes = plat.n_nodes
    kw: dict[str, object] = {"on_infeasible": "reject",
                             "on_abort": draw(st.sampled_from(["requeue", "requeue", "fail"]))}
    rows: list[Change] = []
    capped = draw(st.booleans())
    if capped:
        share = draw(st.floats(0.0, 1.0))
        plat = plat.with_node_model(dataclasses.replace(
            SPEC, booting=float(np.round(30.0 * share, 1)), shutting_down=12.0))
        busy = n_nodes * 10.0 + int(plat.capacity.sum()) * 10.0
        full = n_nodes * 24.0 + busy
        kw["count_idle"] = draw(st.booleans())
        if draw(st.booleans()):
            kw["power_cap"] = float(np.round(n_nodes * 12.0 + share * busy, 1))
        else:
            for _ in range(draw(st.integers(1, 4))):
                rows.append(Change(draw(st.integers(0, 300)), "power_cap",
                                   float(np.round(full * draw(st.floats(0.2, 1.0)), 1))))
            rows.append(Change(400, "power_cap", full + 100.0))
    for _ in range(draw(st.integers(0 if rows else 1, 8))):
        t = draw(st.integers(0, 150))
        kind = draw(st.sampled_from(["node_down", "node_up", "alive_nodes"]))
        if kind == "alive_nodes":
            rows.append(Change(t, kind, float(draw(st.integers(0, n_nodes)))))
        else:
            rows.append(Change(t, kind, 0.0, f"n{draw(st.integers(0, n_nodes - 1))}"))
    if any(c.what != "power_cap" for c in rows):
        rows.append(Change(400, "alive_nodes", float(n_nodes)))
    return wl, plat, Scenario(sorted(rows, key=lambda c: c.time), source="drawn"), kw


@pytest.mark.slow
@settings(max_examples=70, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changing_runs(), st.sampled_from(["fifo", "easy", "easy-sjf", "easy-power",
                                         "order=fifo,select=easy,depth=1",
                                         "order=wfp3,select=easy", "order=slowdown,select=strict",
                                         "order=uni,select=easy-power"]),
       st.sampled_from([0, 1, 7, 60]))
def test_random_changing_runs(case: tuple[Workload, Platform, Scenario, dict[str, object]],
                              inner: str, timeout: int) -> None:
    wl, plat, scen, kw = case
    disp = f"{inner}+poweroff:{timeout}"
    try:
        simulate(wl, plat, disp, loop="general", scenario=scen, **kw)  # type: ignore[arg-type]
    except DispatchlabError as err:  # stuck (the cap or the wrapper): the same error
        with pytest.raises(DispatchlabError) as auto:
            simulate(wl, plat, disp, scenario=scen, **kw)  # type: ignore[arg-type]
        assert str(auto.value) == str(err)
        return
    assert_same(wl, plat, disp, scenario=scen, **kw)


def test_what_stays_in_the_general_loop() -> None:
    """Conservative backfilling, informational scenario rows: the general loop runs, and
    ``loop="compiled"`` says why."""
    wl = two_jobs()
    plat = Platform.homogeneous(2, {"cores": 4}).with_node_model(SPEC)
    cases = [("easy+poweroff:60", {"scenario": Scenario([Change(100, "temperature", 30.0)])},
              "informational"),
             ("conservative+poweroff:60", {"scenario": HAND["off"]}, "strict and EASY")]
    for disp, kw, why in cases:
        assert simulate(wl, plat, disp, **kw).summary["loop"] == "general"  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match=why):
            simulate(wl, plat, disp, loop="compiled", **kw)  # type: ignore[arg-type]
