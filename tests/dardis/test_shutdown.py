"""DARDIS with node shutdown on a 4-node machine with a step profile, by hand.

Node figures: idle 100 W, first core +50 W, off 10 W, booting 200 W for 100 s, shutting
down 150 W for 20 s; break-even = max(20 + 100, ceil((20·140 + 100·190) / 90)) = 243 s.
Profile: share 1, 0.5 from 2 h to 6 h, 1 after. DARDIS50 parks
floor(0.5 · 0.5 · 4) = 1 node, DARDIS70 floor(0.3 · 0.5 · 4) = 0.
"""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab.dispatchers.dardis.presets import PRESETS
from dispatchlab.dispatchers.dardis.shutdown import DardisShutdown, parked_counts
from dispatchlab.engine.decisions import WakeAt
from dispatchlab.engine.scenario import Change, Scenario
from dispatchlab.platform.node_states import BOOTING, OFF, ON, SHUTTING_DOWN
from dispatchlab.platform.power import NodePowerSpec
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.simulation import simulate
from dispatchlab.workload.workload import Workload

SPEC = NodePowerSpec(idle=100, core_first=50, core=0, off=10, booting=200,
                     shutting_down=150, boot_time=100, shutdown_time=20)
PLATFORM = resolve_platform("nodes=4,cores=4").with_node_model(SPEC)
STEP = Scenario([Change(0, "desired_utilization", 1.0),
                 Change(7200, "desired_utilization", 0.5),
                 Change(21600, "desired_utilization", 1.0)])


def jobs(*rows: tuple[int, int, int]) -> Workload:
    """(submit, units of 1 core, wall-time = run time) per job; queue wait 600 s."""
    sub, units, wt = (np.array(c) for c in zip(*rows, strict=True))
    return Workload.from_columns(submit=sub, walltime=wt, runtime=wt, units=units,
                                 req={"cores": np.ones(len(rows), int)},
                                 queues={"q": 600})


def node_log(res) -> list[tuple[int, int, int]]:  # type: ignore[no-untyped-def]
    log = list(res.recorder.node_log)
    return [tuple(log[i:i + 3]) for i in range(0, len(log), 3)]  # type: ignore[misc]


def energy_j(res) -> float:  # type: ignore[no-untyped-def]
    return float(res.summary["energy"]["total_j"])


def test_parked_counts_floor_of_the_unused_share() -> None:
    assert parked_counts(np.array([1.0, 0.5, 0.0, 0.84]), 300, 0.3).tolist() == [
        0, 45, 90, 14]
    assert parked_counts(np.array([0.5]), 4, 0.5).tolist() == [1]


def test_dardis50_parks_the_highest_idle_node_and_boots_it_ahead() -> None:
    wl = jobs((0, 1, 30_000))
    res = simulate(wl, PLATFORM, "dardis50", seed=1, scenario=STEP)
    assert res.summary["audited"]
    assert node_log(res) == [(7200, 3, SHUTTING_DOWN), (7220, 3, OFF),
                             (21500, 3, BOOTING), (21600, 3, ON)]
    st = res.summary["dispatcher_stats"]
    assert st["power_offs"] == 1 and st["power_ons"] == 1
    base = simulate(wl, PLATFORM, "dardis100", seed=1, scenario=STEP)
    assert node_log(base) == []
    # node 3 idle 7200–21600 (100 W) against shutting down 20 s (150 W), off 14,280 s
    # (10 W), booting 100 s (200 W)
    saved = 100 * 14_400 - (20 * 150 + 14_280 * 10 + 100 * 200)
    assert energy_j(base) - energy_j(res) == pytest.approx(saved)


def test_dardis70_keeps_every_node_on_when_its_share_is_under_a_node() -> None:
    res = simulate(jobs((0, 1, 30_000)), PLATFORM, "dardis70", seed=1, scenario=STEP)
    assert node_log(res) == []


def test_a_job_that_needs_the_parked_node_brings_it_back() -> None:
    # node 0 keeps one core busy; at 3 h a 15-core job asks for more than the three
    # nodes left on (11 cores). Node 3 is off: on again at the first slot after
    # now + boot (10,800 + 100 → slot 37 = 11,100), switched on at 11,000.
    wl = jobs((0, 1, 30_000), (10_800, 15, 3600))
    res = simulate(wl, PLATFORM, "dardis50", seed=1, scenario=STEP)
    assert res.summary["audited"]
    assert res.jobs["start"].tolist() == [0, 11_100]
    assert node_log(res) == [(7200, 3, SHUTTING_DOWN), (7220, 3, OFF),
                             (11_000, 3, BOOTING), (11_100, 3, ON)]
    assert res.summary["dispatcher_stats"]["released_for_jobs"] == 1
    # with every node on, the job takes the capacity round at once
    base = simulate(wl, PLATFORM, "dardis100", seed=1, scenario=STEP)
    assert base.jobs["start"].tolist() == [0, 10_800]


def test_a_span_shorter_than_break_even_is_not_parked() -> None:
    short = Scenario([Change(0, "desired_utilization", 1.0),
                      Change(7200, "desired_utilization", 0.5),
                      Change(7200 + 240, "desired_utilization", 1.0)])
    res = simulate(jobs((0, 1, 30_000)), PLATFORM, DardisShutdown(0.5, slot=60), seed=1,
                   scenario=short)
    assert node_log(res) == []
    assert res.summary["dispatcher_stats"]["levels_too_short"] == 1


def test_busy_nodes_are_not_parked_and_jobs_use_nodes_after_they_return() -> None:
    # four 4-core jobs fill the machine until 3 h: nothing is idle at 2 h, so no node
    # goes off then (the level stays unfilled until the next change)
    wl = jobs((0, 16, 10_800), (22_000, 16, 600))
    res = simulate(wl, PLATFORM, "dardis50", seed=1, scenario=STEP)
    assert node_log(res) == []
    assert res.summary["dispatcher_stats"]["levels_unfilled"] == 1
    assert res.jobs["start"].tolist() == [0, 22_000]


@pytest.mark.parametrize("name", ["dardis100", "dardis70", "dardis50"])
def test_presets_are_registered_and_reproducible(name: str) -> None:
    assert name in PRESETS
    rng = np.random.default_rng(3)
    n = 60
    wt = rng.integers(600, 3 * 3600, n)
    wl = Workload.from_columns(submit=np.sort(rng.integers(0, 10 * 3600, n)),
                               walltime=wt, runtime=(wt * 0.6).astype(int),
                               units=rng.integers(1, 8, n),
                               req={"cores": np.ones(n, int)}, queues={"q": 1800})
    a = simulate(wl, PLATFORM, name, seed=4, scenario=STEP)
    b = simulate(wl, PLATFORM, name, seed=4, scenario=STEP)
    assert a.summary["audited"] and a.summary["jobs_run"] == n
    assert a.jobs["start"].tolist() == b.jobs["start"].tolist()


def test_a_node_with_a_later_reservation_is_parked_until_it() -> None:
    # job C (15 cores) may start from 4 h: planned at submission on nodes 0–3 from 4 h;
    # at 2 h every idle node is free until 4 h, so node 3 is parked [2 h, 4 h) and
    # booted at 4 h − 100 s; C starts on time
    wl = Workload.from_columns(
        submit=np.array([0, 0]), walltime=np.array([30_000, 3600]),
        runtime=np.array([30_000, 3600]), units=np.array([1, 15]),
        req={"cores": np.ones(2, int)}, est=np.array([0, 14_400]),
        lst=np.array([600, 15_000]))
    res = simulate(wl, PLATFORM, "dardis50", seed=1, scenario=STEP)
    assert res.summary["audited"]
    assert res.jobs["start"].tolist() == [0, 14_400]
    assert node_log(res) == [(7200, 3, SHUTTING_DOWN), (7220, 3, OFF),
                             (14_300, 3, BOOTING), (14_400, 3, ON)]


class Announcing(DardisShutdown):
    """Announces a first profile at 1 h and more of it at 3 h (as the hybrid pipeline
    does, at run time)."""

    def __init__(self, first: tuple[list[int], list[float]],
                 second: tuple[list[int], list[float]]) -> None:
        super().__init__(0.5)
        self.first, self.second = first, second
        self.parts = [first, second]  # run state: popped as announced

    def decide(self, view, events):  # type: ignore[no-untyped-def]
        due = {0: 3600, 1: 10_800}
        more = False
        if self.parts and view.now >= due[2 - len(self.parts)]:
            self.add_profile(view, *self.parts.pop(0))  # before deciding, as documented
            more = bool(self.parts)
        out = super().decide(view, events)
        return [*out, WakeAt(10_800)] if more else out


def test_a_profile_announced_later_extends_or_cuts_a_parking() -> None:
    # 0.5 from 2 h with no end yet: held one more day (to 2 h + 24 h); at 3 h the
    # profile says 0.5 until 33 h: node 3 stays off until then
    wl = jobs((0, 1, 130_000), (3600, 1, 60))
    res = simulate(wl, PLATFORM, Announcing(([7200], [0.5]), ([50_000, 118_800],
                                                              [0.5, 1.0])), seed=1)
    assert node_log(res) == [(7200, 3, SHUTTING_DOWN), (7220, 3, OFF),
                             (118_700, 3, BOOTING), (118_800, 3, ON)]
    # ... or that it rises at 9 h: node 3 is booted for 9 h
    res = simulate(wl, PLATFORM, Announcing(([7200], [0.5]), ([32_400], [1.0])), seed=1)
    assert node_log(res) == [(7200, 3, SHUTTING_DOWN), (7220, 3, OFF),
                             (32_300, 3, BOOTING), (32_400, 3, ON)]
