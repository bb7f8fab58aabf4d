"""Operator rules enforced by the engine: queue windows, stops, limits, node sets,
reservations, heterogeneous jobs and job arrays — schedules computed by hand."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.engine.decisions import Decision, Start
from dispatchlab.engine.events import Events
from dispatchlab.engine.local_time import Clock, WindowCalendar
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError, InvalidDecision, WorkloadError
from dispatchlab.platform.platform import Platform
from dispatchlab.platform.queues import DailyWindow, QueueConfig
from dispatchlab.platform.reservations import Reservation
from dispatchlab.simulation import simulate
from dispatchlab.workload.workload import Workload

ROME = "Europe/Rome"
ORIGIN = int(datetime(2014, 4, 1, tzinfo=ZoneInfo(ROME)).timestamp())  # a Tuesday, 00:00
H = 3600
ALL = ["fifo", "easy", "conservative", "fifo-nonstrict", "sjf"]


def night() -> QueueConfig:
    return QueueConfig("np", windows=(DailyWindow.parse("18:00-08:00"),))


def wl(submit: Sequence[int], wall: Sequence[int], run: Sequence[int], units: Sequence[int],
       queue: Sequence[str], **kw: Any) -> Workload:
    req = kw.pop("req", {"cores": [1] * len(submit)})
    return Workload.from_columns(submit=submit, walltime=wall, runtime=run, units=units,
                                 req=req, queue=queue, origin_unix=ORIGIN, timezone=ROME, **kw)


def starts(res: Any) -> list[int]:
    return [int(v) for v in res.jobs.sort_values("job_id")["start"]]


@pytest.mark.parametrize("disp", ALL)
def test_non_prime_time_job_waits_for_18h_and_does_not_block_others(disp: str) -> None:
    plat = Platform.homogeneous(2, {"cores": 1}).with_rules(queues={"np": night()})
    w = wl([10 * H, 10 * H], [H, H], [60, 60], [1, 1], ["np", "batch"])
    res = simulate(w, plat, disp)
    assert starts(res) == [18 * H, 10 * H]
    assert res.jobs.sort_values("job_id")["start_at"].iloc[0] == "2014-04-01T18:00:00+02:00"


@pytest.mark.parametrize("disp", ALL)
def test_job_submitted_at_night_starts_at_once(disp: str) -> None:
    plat = Platform.homogeneous(1, {"cores": 1}).with_rules(queues={"np": night()})
    w = wl([2 * H, 23 * H], [H, H], [60, 60], [1, 1], ["np", "np"])
    assert starts(simulate(w, plat, disp)) == [2 * H, 23 * H]


def test_weekday_windows_and_daylight_saving() -> None:
    clock = Clock(int(datetime(2014, 3, 29, tzinfo=ZoneInfo(ROME)).timestamp()), ROME)
    cal = WindowCalendar((DailyWindow.parse("18:00-08:00"),), clock)
    # 2014-03-30 has 23 hours in Rome: its 18:00 is 18 h after its midnight (24 + 18 − 1)
    assert cal.next_open(24 * H + 12 * H) == 24 * H + 17 * H
    weekend = WindowCalendar((DailyWindow.parse("sat-sun 00:00-24:00"),), clock)
    assert weekend.is_open(10 * H)  # Saturday
    assert not weekend.is_open(2 * 24 * H - H + 10 * H)  # Monday 10:00 (after DST)
    with pytest.raises(ConfigError, match="window"):
        DailyWindow.parse("18-08")
    with pytest.raises(ConfigError, match="unknown day"):
        DailyWindow.parse("mon-fry 08:00-18:00")


@pytest.mark.parametrize("disp", ALL)
def test_stopped_queue_resumes(disp: str) -> None:
    plat = Platform.homogeneous(2, {"cores": 1}).with_rules(
        queues={"q": QueueConfig("q", stopped=((100, 500), ("2014-04-01T10:00", 36500)))})
    w = wl([150, 200, 36100], [50, 50, 50], [10, 10, 10], [1, 1, 1], ["q", "other", "q"])
    assert starts(simulate(w, plat, disp)) == [500, 200, 36500]


def test_queue_limits_and_unhostable_jobs_are_rejected_with_reasons() -> None:
    plat = Platform.homogeneous(4, {"cores": 4, "gpu": 1}).with_rules(queues={
        "debug": QueueConfig("debug", max_units=3, max_walltime=1800, max_total={"gpu": 1},
                             nodes=("n0",)),
        "par": QueueConfig("par", max_nodes=2)})
    w = wl([0] * 8, [600, 3600, 600, 600, 600, 600, 600, 600], [10] * 8,
           [1, 1, 4, 2, 2, 8, 9, 3], ["debug"] * 5 + ["par"] * 3,
           req={"cores": [1, 1, 1, 1, 4, 1, 1, 4], "gpu": [0, 0, 0, 1, 0, 0, 0, 0]})
    res = simulate(w, plat, "easy")
    jobs = res.jobs.sort_values("job_id")
    assert jobs["rejected"].tolist() == [False, True, True, True, True, False, True, True]
    reasons = jobs["reject_reason"].tolist()
    assert "1800 s of wall-time" in reasons[1]
    assert "at most 3 units" in reasons[2]
    assert "at most 1 gpu in all" in reasons[3]
    assert "nodes of queue 'debug'" in reasons[4]
    # 8 one-core units pack on 2 four-core nodes; 9 need 3; 3 four-core units need 3
    assert "at most 2 nodes, job needs at least 3" in reasons[6]
    assert "at most 2 nodes, job needs at least 3" in reasons[7]
    assert res.summary["rejected"] == 6


@pytest.mark.parametrize("disp", ALL)
def test_queue_node_restriction(disp: str) -> None:
    plat = Platform.homogeneous(3, {"cores": 1}).with_rules(
        queues={"debug": QueueConfig("debug", nodes=("n0",))})
    w = wl([0, 0], [100, 100], [50, 50], [1, 1], ["debug", "debug"])
    res = simulate(w, plat, disp)
    assert starts(res) == [0, 50]
    assert set(res.jobs["node_list"]) == {"n0"}


def reserved_platform(**kw: Any) -> Platform:
    return Platform.homogeneous(2, {"cores": 1}).with_rules(
        reservations=[Reservation("R", ("n1",), kw.pop("start", 1000), kw.pop("duration", 500),
                                  **kw)])


@pytest.mark.parametrize("disp", ALL)
def test_reservation_blocks_long_jobs_and_hosts_its_own(disp: str) -> None:
    # job 1 (2 nodes, wall 2000) would run into R on n1: waits for R's end at 1500
    # job 2 (1 node, wall 400) is R's: starts when R starts, on n1
    # job 3 (1 node, wall 900) ends before R starts: may use n1 at once
    plat = reserved_platform()
    w = wl([0, 0, 0], [2000, 400, 900], [100, 100, 100], [2, 1, 1], ["batch", "R", "batch"])
    res = simulate(w, plat, disp)
    got = dict(zip(res.jobs["job_id"], res.jobs["start"], strict=True))
    assert got[2] == 1000
    assert res.jobs.set_index("job_id").loc[2, "node_list"] == "n1"
    assert got[1] == 1500
    assert got[3] == (1600 if disp == "fifo" else 0)  # strict FIFO: behind job 1


@pytest.mark.parametrize("disp", ["easy", "conservative"])
def test_backfilled_job_never_runs_into_a_reservation(disp: str) -> None:
    # head (2 nodes) waits for job 1 (ends at 600); job 3 (wall 300) could backfill on n1
    # before the head's start but would run into R (from 700) only if wall > 700 − start
    plat = reserved_platform(start=700, duration=100)
    w = wl([0, 1, 2, 3], [600, 1000, 300, 800], [600, 10, 10, 10], [1, 2, 1, 1],
           ["batch"] * 4)
    res = simulate(w, plat, disp)
    got = dict(zip(res.jobs["job_id"], res.jobs["start"], strict=True))
    assert got[3] == 2  # ends by 302 < 700: backfilled on n1 at once
    assert got[2] == 800  # 2 nodes for 1000 s: after R
    assert got[4] >= 800 or got[4] + 800 <= 700
    for _, row in res.jobs.iterrows():
        if "n1" in row["node_list"].split():
            assert row["start"] + row["requested"] <= 700 or row["start"] >= 800


def test_reservation_jobs_that_cannot_fit_are_rejected_or_withdrawn() -> None:
    plat = reserved_platform()  # R: n1 over [1000, 1500)
    w = wl([0, 1200, 0, 0, 0], [600, 400, 100, 400, 400], [10, 10, 10, 400, 10],
           [1, 1, 2, 1, 1], ["R"] * 5)
    out = simulate(w, plat, "fifo")
    res = out.jobs.set_index("job_id")
    assert "exceeds reservation 'R'" in res.loc[1, "reject_reason"]
    assert "ends before the job could finish" in res.loc[2, "reject_reason"]
    assert "can host at most 1 of its 2 units" in res.loc[3, "reject_reason"]
    assert res.loc[4, "start"] == 1000
    # job 5 would start at 1400 but cannot end by 1500: withdrawn when R ends
    assert "ended before the job could start" in res.loc[5, "reject_reason"]
    assert out.summary["rejected"] == 4


@pytest.mark.parametrize("disp", ALL)
def test_standing_reservation_repeats(disp: str) -> None:
    plat = reserved_platform(start=1000, duration=500, period=10_000, count=3)
    w = wl([1200, 1300], [400, 600], [10, 10], [1, 1], ["R", "batch"])
    res = simulate(w, plat, disp)
    got = dict(zip(res.jobs["job_id"], res.jobs["start"], strict=True))
    assert got[1] == 11_000  # 1200 + 400 > 1500: the next occurrence
    assert got[2] == 1300  # on n0


def test_reservation_feasibility_is_validated() -> None:
    plat = Platform.homogeneous(2, {"cores": 1}).with_rules(reservations=[
        Reservation("A", ("n1",), 100, 100), Reservation("B", ("n0", "n1"), 150, 10)])
    w = wl([0], [10], [10], [1], ["batch"])
    with pytest.raises(ConfigError, match="both hold node n1"):
        simulate(w, plat, "fifo")
    with pytest.raises(ConfigError, match="neither a node nor a group"):
        Platform.homogeneous(2, {"cores": 1}).with_rules(
            reservations=[Reservation("A", ("n7",), 100, 100)])


def het_platform() -> Platform:
    cap = np.array([[4, 0], [4, 0], [4, 1]])
    return Platform(resources=("cores", "gpu"), capacity=cap, node_names=("c0", "c1", "g0"))


@pytest.mark.parametrize("disp", ALL)
def test_heterogeneous_job_starts_all_components_together(disp: str) -> None:
    # job 1 holds c0 until 100; the het job (GPU unit + 2 full CPU nodes) needs c0 too
    w = wl([0, 10, 10], [100, 50, 50], [100, 50, 50], [1, 1, 2], ["q"] * 3,
           req={"cores": [4, 1, 4], "gpu": [0, 1, 0]}, hetjob=[-1, 7, 7])
    res = simulate(w, het_platform(), disp).jobs.set_index("job_id")
    assert res.loc[2, "start"] == res.loc[3, "start"] == 100
    assert res.loc[2, "node_list"] == "g0"
    assert res.loc[3, "node_list"] == "c0 c1"


class OneComponent(BaseDispatcher):
    """Starts only the first queued job: breaks a heterogeneous job apart."""

    name = "one"

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        for j in view.queue:
            return [Start(j, np.array([2]), np.array([1]))]
        return []


def test_engine_refuses_a_partial_heterogeneous_start() -> None:
    w = wl([0, 0], [50, 50], [50, 50], [1, 1], ["q"] * 2,
           req={"cores": [1, 1], "gpu": [1, 0]}, hetjob=[3, 3])
    with pytest.raises(InvalidDecision, match="all components start together"):
        simulate(w, het_platform(), OneComponent())


class Eager(BaseDispatcher):
    """Starts every queued job on node 0 at once, rules or not."""

    name = "eager"

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        return [Start(j, np.array([1]), np.array([1])) for j in list(view.queue)[:1]]


def test_engine_refuses_starts_that_break_rules() -> None:
    plat = Platform.homogeneous(2, {"cores": 1}).with_rules(queues={"np": night()})
    w = wl([10 * H], [H], [60], [1], ["np"])
    with pytest.raises(InvalidDecision, match=r"queue 'np' may not start jobs .*Tue 10:00"):
        simulate(w, plat, Eager())
    w = wl([0], [2000], [60], [1], ["batch"])
    with pytest.raises(InvalidDecision, match="would run into reservation 'R'"):
        simulate(w, reserved_platform(), Eager())


def test_heterogeneous_components_must_agree() -> None:
    with pytest.raises(WorkloadError, match="heterogeneous job 4: walltime differs"):
        wl([0, 0], [50, 60], [50, 50], [1, 1], ["q"] * 2, hetjob=[4, 4])


def test_job_arrays_share_their_request_and_are_reported() -> None:
    with pytest.raises(WorkloadError, match="job array 2: req differs"):
        wl([0, 0], [50, 50], [5, 5], [1, 1], ["q"] * 2, req={"cores": [1, 2]}, array=[2, 2])
    w = wl([0, 0, 0], [50, 50, 50], [5, 6, 7], [1, 1, 1], ["q"] * 3, array=[2, 2, 2])
    res = simulate(w, Platform.homogeneous(1, {"cores": 1}), "fifo")
    assert res.jobs["array"].tolist() == [2, 2, 2]
    assert res.summary["job_arrays"] == {"count": 1, "mean_completion": 18.0}


def test_platform_toml_with_queues_and_reservations(tmp_path: Any) -> None:
    path = tmp_path / "site.toml"
    path.write_text('extends = "nodes=4,cores=8"\n[queues.np]\nwindows = ["18:00-08:00"]\n'
                    'max_nodes = 2\n[[reservations]]\nname = "maint"\nnodes = ["n3"]\n'
                    'start = "2014-04-01T09:00"\nduration = "02:00:00"\n')
    from dispatchlab.platform.resolve import resolve_platform

    plat = resolve_platform(str(path))
    assert plat.queues["np"].max_nodes == 2 and plat.reservations[0].duration == 7200
    w = wl([8 * H], [2 * H], [60], [4], ["batch"], req={"cores": [8]})
    assert starts(simulate(w, plat, "fifo")) == [11 * H]
    path.write_text('extends = "nodes=4,cores=8"\n[queues.np]\nwindow = "x"\n')
    with pytest.raises(ConfigError, match=r"site.toml: field 'queues.np.window'"):
        resolve_platform(str(path))


def test_array_and_hetjob_columns_round_trip_through_tables(tmp_path: Any) -> None:
    from dispatchlab.workload.native import load_csv, load_parquet, write_csv, write_parquet

    w = wl([0, 0, 5], [50, 50, 60], [5, 5, 7], [1, 2, 1], ["q"] * 3,
           req={"cores": [1, 2, 1]}, hetjob=[9, 9, -1], array=[-1, -1, 4])
    for back in (load_parquet(write_parquet(w, tmp_path / "w.parquet")),
                 load_csv(write_csv(w, tmp_path / "w.csv"))):
        assert back.hetjob.tolist() == [9, 9, -1]
        assert back.array.tolist() == [-1, -1, 4]


def test_queue_priority_ordering() -> None:
    plat = Platform.homogeneous(1, {"cores": 1}).with_rules(queues={
        "low": QueueConfig("low", priority=1), "high": QueueConfig("high", priority=5)})
    w = wl([0, 0, 0, 0], [100] * 4, [100] * 4, [1] * 4, ["none", "low", "high", "low"])
    assert starts(simulate(w, plat, "order=queue,select=easy")) == [300, 100, 0, 200]
    assert starts(simulate(w, plat, "fifo")) == [0, 100, 200, 300]
