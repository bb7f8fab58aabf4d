"""Hand-computed runs of the malleable-job model: run times and reconfiguration costs, the
energy of servers that boot, compute, idle and shut down, the code's semantics."""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np
import pytest

from dispatchlab import Workload, simulate
from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.dispatchers.malleable.config import CODE, PAPER, GreedyConfig
from dispatchlab.dispatchers.malleable.cost import malleable_platform, run_metrics
from dispatchlab.dispatchers.malleable.greedy import MalleableGreedy
from dispatchlab.dispatchers.malleable.job_set_sim import JobSetJobs, run_job_set
from dispatchlab.engine.decisions import Decision, Reconfigure, Start, WakeAt
from dispatchlab.engine.events import Events
from dispatchlab.engine.recorder import COMPLETED, RECONFIGURED
from dispatchlab.engine.state import SystemView
from dispatchlab.workload.generators.mejri import JobSet

ARR = np.array


class Moves(BaseDispatcher):
    """Starts job 0 on ``first`` nodes at 0, moves it onto ``then`` nodes at ``at``."""

    name = "moves"

    def __init__(self, first: int, then: int, at: int):
        self.first, self.then, self.at = first, then, at

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        if view.now == 0:
            return [Start(0, ARR(range(self.first)), np.ones(self.first, np.int64)),
                    WakeAt(self.at)]
        if view.now == self.at:
            return [Reconfigure(0, ARR(range(self.then)), np.ones(self.then, np.int64))]
        return []


def _job(**kw: object) -> Workload:
    # mass 600 s on one server, α = 0.5: 300 s on its own 4 units (600 / 4^0.5), D = 45
    return Workload.from_columns(submit=[0], runtime=[300], walltime=[300], units=[4],
                                 req={"cores": [1]}, min_units=[2], max_units=[9],
                                 alpha=[0.5], data=[45.0], **kw)  # type: ignore[arg-type]


def _segments(res: object) -> list[tuple[int, int, int]]:
    seg = res.recorder.segments  # type: ignore[attr-defined]
    return list(zip(seg.t0.tolist(), seg.t1.tolist(), seg.outcome.tolist(), strict=True))


def test_a_job_started_on_more_units_than_it_asks_runs_faster() -> None:
    # 600 / 9^0.5 = 200 s on 9 servers (it asks for 4: 300 s there)
    res = simulate(_job(), "nodes=9,cores=1", Moves(9, 9, 10_000), walltime_kill=False)
    assert _segments(res) == [(0, 200, COMPLETED)]


def test_grow_run_time_and_reconfiguration_cost() -> None:
    # 4 → 9 at t=100: done 100 · 4^0.5 = 200 of 600; pause (D/m)(ceil(m/n) − 1) = (45/9)·2
    # = 10 s; the remaining 400 take 400 / 9^0.5 = 133.3 s, rounded up: ends 100 + 10 + 134
    res = simulate(_job(), "nodes=9,cores=1", Moves(4, 9, 100), walltime_kill=False)
    assert _segments(res) == [(0, 100, RECONFIGURED), (100, 244, COMPLETED)]


def test_shrink_run_time_and_reconfiguration_cost() -> None:
    # 9 → 4 at t=60: done 60 · 3 = 180 of 600; pause (D/n)(ceil(n/m) − 1) = (45/9)·2 = 10 s;
    # the remaining 420 take 420 / 4^0.5 = 210 s: ends 60 + 10 + 210 = 280
    res = simulate(_job(), "nodes=9,cores=1", Moves(9, 4, 60), walltime_kill=False)
    assert _segments(res) == [(0, 60, RECONFIGURED), (60, 280, COMPLETED)]


def test_energy_of_servers_that_boot_compute_idle_and_shut_down() -> None:
    # Two servers, Table 1 (delays in whole seconds: boot 152, shutdown 7), FIFO-Poff 900 s.
    # Job 0 (1 server, 100 s) starts on s0 at 0; s1 is idle with an empty queue: off at 0
    # (shutting down 0–7, off 7–748, booting 748–900). Job 1 (2 servers, 50 s) comes at 10
    # and waits; s0 idles 100–900 (a job is queued: no power-off); at 900 job 1 runs on
    # both until 950; then both go off (at the window's end: no energy in it).
    wl = Workload.from_columns(submit=[0, 10], runtime=[100, 50], walltime=[100, 50],
                               units=[1, 2], req={"cores": [1, 1]}, alpha=[1.0, 1.0],
                               min_units=[1, 2], max_units=[1, 2])
    cfg = GreedyConfig(power_off=True, t1=900.0)
    res = simulate(wl, malleable_platform(2), MalleableGreedy(cfg), walltime_kill=False)
    busy, idle, boot, down, off = 190.74, 95.0, 125.17, 101.0, 9.75
    s0 = 100 * busy + 800 * idle + 50 * busy
    s1 = 7 * down + 741 * off + 152 * boot + 50 * busy
    stretch = (100 / 100 + (950 - 10) / 100) / 2  # mass = run time × units^α
    norm = (s0 + s1) / 950 / (2 * idle)
    m = run_metrics(res.recorder)  # type: ignore[arg-type]
    assert m["energy_j"] == pytest.approx(s0 + s1, rel=1e-12)
    assert m["mean_stretch"] == pytest.approx(stretch, rel=1e-12)
    assert m["norm_power"] == pytest.approx(norm, rel=1e-12)
    assert m["cost"] == pytest.approx(stretch * norm, rel=1e-12)
    assert (m["reconfigs"], m["poweroffs"]) == (0, 3)
    k = run_job_set(JobSetJobs.from_workload(wl, 2), cfg)
    assert k.cost == pytest.approx(m["cost"], rel=1e-12) and k.poweroffs == 3


def _two_jobs() -> JobSet:
    return JobSet(submit=ARR([5.0, 12.0]), mass=ARR([400.0, 600.0]), alpha=ARR([1.0, 0.5]),
                  data=ARR([40.0, 10.0]), min_servers=ARR([1, 1]), max_servers=ARR([2, 4]),
                  servers=4)


def test_code_semantics_ten_second_steps_and_its_reconfiguration_time() -> None:
    # Decisions every 10 s. A (sub 5) starts at 10 on 2 servers: ends 10 + 400/2 = 210.
    # B (sub 12) starts at 20 on the other 2: would end 20 + 600/√2. At 210 A is done:
    # B grows 2 → 4; done (210 − 20)·√2, the code's pause D/m·floor(m/n) = 10/4·2 = 5 s,
    # the rest at 4^0.5 = 2 per s from 215.
    rest = 600 - (210 - 20) * 2 ** 0.5
    b_end = 215 + rest / 4 ** 0.5
    stretch = ((210 - 5) / 400 + (b_end - 12) / 600) / 2
    area = 200 * 2 + 190 * 2 + 5 * 4 + (b_end - 215) * 4
    span = b_end - 10
    energy = 191 * area + 95 * (span * 4 - area)  # the code's rounded constants
    norm = energy / (95 * span * 4)
    cfg = GreedyConfig(reconfigure=True, semantics=CODE)
    k = run_job_set(JobSetJobs.from_jobset(_two_jobs()), cfg, code_random=random.Random(0))
    assert k.ends == pytest.approx([210.0, b_end], rel=1e-15)
    assert k.reconfigs == 1
    assert k.cost == pytest.approx(stretch * norm, rel=1e-12)


def test_paper_semantics_in_continuous_time_uses_eq3() -> None:
    # Events, not steps: A starts at 5 (ends 205), B at 12 on 2 servers; at 205 B grows
    # 2 → 4 with the pause (D/m)(ceil(m/n) − 1) = 10/4 · 1 = 2.5 s.
    from dataclasses import replace

    sem = replace(PAPER, clock="float")
    k = run_job_set(JobSetJobs.from_jobset(_two_jobs()),
                   GreedyConfig(reconfigure=True, semantics=sem))
    rest = 600 - (205 - 12) * 2 ** 0.5
    assert k.ends == pytest.approx([205.0, 205 + 2.5 + rest / 2], rel=1e-15)
