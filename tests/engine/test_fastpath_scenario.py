"""The compiled loop under a node scenario gives exactly the general loop's run.

Nodes leave and come back (``alive_nodes`` random walks, ``node_down``/``node_up`` rows);
jobs on a leaving node are aborted and re-queued (from zero or their last checkpoint) or
fail; FIFO, orderings, EASY with and without a depth limit. A power cap that varies with
the scenario (waited for when it falls) runs compiled too.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dispatchlab import Workload
from dispatchlab.dispatchers.rule_based.compiled.kernel import AVAILABLE
from dispatchlab.engine.scenario import Change, Scenario
from dispatchlab.platform.power import GENERIC
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.workload import SwfOptions, load_swf
from tests.conftest import shared_trace
from tests.engine.test_fastpath import assert_same

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="Numba disabled")

WALK = ("gen:random-walk:what=alive_nodes,mean=90,range=10,step=3,period=3600,"
        "until=9000000,seed=5")
DISPATCHERS = ["fifo", "easy", "easy-sjf", "order=sjf,select=easy,depth=3,estimate=real",
               "order=ljf,select=strict"]


@pytest.fixture(scope="module")
def kth() -> Workload:
    return load_swf(shared_trace("KTH-SP2-1996-2.1-cln.swf.gz"), SwfOptions(limit=1200))


@pytest.mark.parametrize("dispatcher", DISPATCHERS)
def test_node_walk_requeue(kth: Workload, dispatcher: str) -> None:
    assert_same(kth, "nodes=100,cores=1", dispatcher, scenario=WALK)


def test_node_walk_fail_and_no_kill(kth: Workload) -> None:
    assert_same(kth, "nodes=100,cores=1", "easy", scenario=WALK, on_abort="fail")
    assert_same(kth, "nodes=100,cores=1", "fifo", scenario=WALK, walltime_kill=False)


def test_checkpoints_and_two_core_nodes(kth: Workload) -> None:
    rng = np.random.default_rng(3)
    ck = np.where(rng.random(kth.n_jobs) < 0.5, rng.integers(60, 3600, kth.n_jobs), 0)
    wl = dataclasses.replace(kth, checkpoint=ck.astype(np.int64))
    walk = WALK.replace("mean=90,range=10", "mean=44,range=6")
    for dispatcher in ("fifo", "easy"):
        assert_same(wl, "nodes=50,cores=2", dispatcher, scenario=walk)


def test_node_down_and_up_rows(kth: Workload) -> None:
    day = 86400
    rows = []
    for k in range(40):
        rows.append(Change(k * day // 2 + 17, "node_down", 0.0, f"n{(7 * k) % 100:02d}"))
        rows.append(Change(k * day // 2 + day // 5, "node_up", 0.0, f"n{(7 * k) % 100:02d}"))
    rows.append(Change(3 * day, "alive_nodes", 70.0))
    rows.append(Change(5 * day, "alive_nodes", 100.0))
    scen = Scenario(rows, source="test rows")
    for dispatcher in ("fifo", "easy"):
        assert_same(kth, "nodes=100,cores=1", dispatcher, scenario=scen)


@pytest.mark.parametrize("dispatcher", ["easy", "fifo", "order=sjf,select=easy,estimate=real"])
def test_varying_cap(kth: Workload, dispatcher: str) -> None:
    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    # between the idle machine plus the widest job and the busy machine: it binds at times
    low = 100 * GENERIC.idle + int(kth.units.max()) * GENERIC.core_first + 3.0
    walk = (f"gen:random-walk:what=power_cap,mean={low + 700},range=700,step=350,"
            "period=7200,until=9000000,seed=2")
    res = assert_same(kth, plat, dispatcher, scenario=walk)
    assert res.summary["power"]["over_cap_seconds"] > 0  # it falls under running jobs
    day_night = f"gen:day-night:day={low},night={low + 1200},days=60"
    assert_same(kth, plat, dispatcher, scenario=day_night, count_idle=False)


def test_a_stall_under_a_varying_cap_names_the_cap_in_force(kth: Workload) -> None:
    """Both loops name the last cap (not the compiled loop's starting value, infinity)."""
    from dispatchlab.errors import DispatchlabError
    from dispatchlab.simulation import simulate

    plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
    scen = Scenario([Change(0, "power_cap", 100 * GENERIC.idle + 20.0)])
    messages = []
    for engine in ("compiled", "general"):
        with pytest.raises(DispatchlabError) as err:
            simulate(kth, plat, "easy", scenario=scen, loop=engine)
        messages.append(str(err.value))
    caps = [m.split("the power cap of ")[1].split(" W")[0] for m in messages]
    assert caps[0] == caps[1] == f"{100 * GENERIC.idle + 20.0:.6g}", messages
