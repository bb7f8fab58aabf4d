"""Property tests: random workloads under random queue windows, stops, node sets,
reservations and heterogeneous jobs. Every dispatcher must finish without an invalid
decision (the engine validates each start), account for every job, and pass the
independent rules audit; the audit itself must catch a schedule that ignores the rules."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab.engine.simulator import Simulator
from dispatchlab.metrics.rules_audit import RulesAuditError, audit_rules
from dispatchlab.platform.platform import Platform
from dispatchlab.platform.queues import DailyWindow, QueueConfig
from dispatchlab.platform.reservations import Reservation
from dispatchlab.simulation import simulate
from dispatchlab.workload.workload import Workload

H = 3600


@st.composite
def ruled_instances(draw: st.DrawFn) -> tuple[Workload, Platform]:
    """Jobs over two days on 2–4 nodes; queues 'win' (a daily window), 'stop' (stopped
    intervals), 'few' (a node subset), 'R' (a reservation, maybe standing) and 'any'."""
    n_nodes = draw(st.integers(2, 4))
    cap = np.array([[draw(st.integers(1, 4)), draw(st.integers(0, 1))]
                    for _ in range(n_nodes)], dtype=np.int64)
    cap[0, 1] = 1  # at least one GPU node
    names = tuple(f"n{k}" for k in range(n_nodes))
    h0, h1 = draw(st.integers(0, 23)), draw(st.integers(0, 23))
    if h0 == h1:
        h1 = (h0 + 6) % 24
    a = draw(st.integers(0, 40)) * H // 2
    queues = {
        "win": QueueConfig("win", windows=(DailyWindow.parse(f"{h0:02d}:00-{h1:02d}:00"),)),
        "stop": QueueConfig("stop", stopped=((a, a + draw(st.integers(1, 20)) * 900),)),
        "few": QueueConfig("few", nodes=(names[-1],)),
    }
    r_start = draw(st.integers(0, 40)) * 1800
    r_dur = draw(st.integers(1, 8)) * 1800
    standing = draw(st.booleans())
    res = Reservation("R", (names[draw(st.integers(0, n_nodes - 1))],), r_start, r_dur,
                      period=r_dur + draw(st.integers(1, 16)) * 1800 if standing else None,
                      count=draw(st.integers(1, 4)) if standing else None)
    plat = Platform(resources=("cores", "gpu"), capacity=cap, node_names=names,
                    name="ruled").with_rules(queues=queues, reservations=[res])
    n = draw(st.integers(1, 18))
    submit = sorted(draw(st.lists(st.integers(0, 48), min_size=n, max_size=n)))
    submit = [s * 1800 for s in submit]
    wall = draw(st.lists(st.integers(1, 12), min_size=n, max_size=n))
    wall = [w * 900 for w in wall]
    run = [draw(st.integers(0, w + 600)) for w in wall]
    units = draw(st.lists(st.integers(1, 2), min_size=n, max_size=n))
    cores = draw(st.lists(st.integers(1, 2), min_size=n, max_size=n))
    gpu = draw(st.lists(st.sampled_from([0, 0, 1]), min_size=n, max_size=n))
    queue = draw(st.lists(st.sampled_from(["win", "stop", "few", "R", "any", "any"]),
                          min_size=n, max_size=n))
    hetjob = [-1] * n
    for k in range(n - 1):  # a few heterogeneous pairs: adjacent jobs made to agree
        if draw(st.integers(0, 5)) == 0 and hetjob[k] < 0:
            hetjob[k] = hetjob[k + 1] = k
            submit[k + 1], wall[k + 1], run[k + 1] = submit[k], wall[k], run[k]
            queue[k + 1] = queue[k]
    wl = Workload.from_columns(submit=submit, walltime=wall, runtime=run, units=units,
                               req={"cores": cores, "gpu": gpu}, queue=queue, hetjob=hetjob,
                               origin_unix=1396303200, timezone="Europe/Rome")
    return wl, plat


@pytest.mark.parametrize("disp", ["fifo", "easy", "conservative", "fifo-nonstrict",
                                  "order=sjf,select=easy,alloc=best-fit"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=ruled_instances())
def test_every_dispatcher_obeys_random_rules(disp: str, inst: Any) -> None:
    wl, plat = inst
    res = simulate(wl, plat, disp, on_infeasible="reject")  # audits, incl. the rules audit
    jobs = res.jobs
    assert len(jobs) == wl.n_jobs
    assert ((jobs["start"] >= 0) | jobs["rejected"]).all()


def test_rules_audit_catches_a_schedule_that_ignores_them() -> None:
    plain = Platform.homogeneous(2, {"cores": 1})
    wl = Workload.from_columns(submit=[10 * H], walltime=[H], runtime=[60], units=[1],
                               req={"cores": [1]}, queue=["np"], origin_unix=1396303200,
                               timezone="Europe/Rome")
    rec = Simulator(wl, plain, _policy("fifo")).run()
    audit_rules(rec)  # no rules: nothing to find
    rec.platform = plain.with_rules(queues={"np": QueueConfig(
        "np", windows=(DailyWindow.parse("18:00-08:00"),))})
    with pytest.raises(RulesAuditError, match="window closed at Tue 10:00"):
        audit_rules(rec)
    rec.platform = plain.with_rules(reservations=[Reservation("R", ("n0",), 10 * H + 60, 60)])
    with pytest.raises(RulesAuditError, match="overlaps reservation 'R'"):
        audit_rules(rec)


def _policy(name: str) -> Any:
    from dispatchlab.dispatchers.registry import get_dispatcher

    return get_dispatcher(name)
