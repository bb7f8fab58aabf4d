"""PBS queues with limits and reservations as the twin's rules, on the real output of a
local OpenPBS 23.06.06 recorded in tests/live/data/pbs_rules/ (UTC; see its README).

The recorded server: 4 vnodes of 2 CPUs; queue ``small`` (max_run 1, resources_max
walltime 6 min, set after job 3 of 8 min was queued) running job 2 on vnode3; queue
``stopq`` stopped, with job 4 queued; ``workq`` running job 5 on vnode2 and queuing job 6
(2 CPUs, scattered, 1 h); reservation R0 running on vnode1 (job 7 inside), R1 confirmed on
vnode3 and vnode4 from about an hour later, R8 unconfirmed.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dispatchlab.live import pbs_state
from dispatchlab.live.adapter import JsonLog, LiveAdapter, live_dispatcher
from dispatchlab.live.pbs_client import PbsClient, PbsCommandError
from dispatchlab.live.pbs_rules import (
    RUNNING_QUEUE,
    parse_qmgr_queues,
    parse_queues,
    parse_rstat,
)
from dispatchlab.live.slurm_records import SlurmStateError
from dispatchlab.platform.resolve import resolve_platform

DATA = Path(__file__).parent / "data" / "pbs_rules"
NOW = json.loads((DATA / "qstat.json").read_text())["timestamp"]


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The recorded server ran in UTC: its local time stamps are read in UTC."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    pbs_state._hour_start.cache_clear()
    yield
    monkeypatch.undo()
    time.tzset()
    pbs_state._hour_start.cache_clear()


@dataclass
class RecordedPbs(PbsClient):
    """A PBS client reading the recorded output (``without``: commands answering as on a
    server with no queue rules or reservations); ``qrun`` is recorded, not run."""

    without: Sequence[str] = ()
    qruns: list[list[str]] = field(default_factory=list)

    def _run(self, args: Sequence[str]) -> str:
        if args[0] == "qrun":
            self.qruns.append(list(args))
            return ""
        if args[0] == "pbs_rstat":
            return "" if "pbs_rstat" in self.without else (DATA / "pbs_rstat.txt").read_text()
        if args[0] == "qmgr":
            return "" if "queues" in self.without else (DATA / "qmgr_queues.txt").read_text()
        name = "qstat.json" if args[0] == "qstat" else "pbsnodes.json"
        return (DATA / name).read_text()


def _client(queue: str, **kw: object) -> RecordedPbs:
    return RecordedPbs(queue=queue, clock=lambda: NOW, **kw)  # type: ignore[arg-type]


def _cycle(client: RecordedPbs, queue: str, spec: str = "easy") -> tuple[dict[int, list[str]],
                                                                          dict[int, str]]:
    cyc = LiveAdapter(client, queue, spec, log=JsonLog(io.StringIO())).cycle()
    return cyc.started, cyc.refused


def test_queues_and_reservations_are_read_from_the_server_output() -> None:
    queues = parse_qmgr_queues((DATA / "qmgr_queues.txt").read_text())
    assert queues == parse_queues(json.loads((DATA / "qstat_queues.json").read_text()))
    small = queues["small"]
    assert (small.max_walltime, small.max_ncpus, small.max_run, small.priority) == \
        (360, 2, 1, 50)
    assert not queues["stopq"].started and queues["workq"].started
    resv = {r.rid: r for r in parse_rstat((DATA / "pbs_rstat.txt").read_text())}
    assert resv["R0.pbshost"].holds and resv["R0.pbshost"].nodes == (("vnode1", 2),)
    assert resv["R0.pbshost"].end - resv["R0.pbshost"].start == 600
    assert resv["R1.pbshost"].holds and resv["R1.pbshost"].queue == "R1"
    assert [n for n, _ in resv["R1.pbshost"].nodes] == ["vnode3", "vnode4"]
    assert not resv["R8.pbshost"].holds  # unconfirmed: holds nothing


def test_reservations_keep_their_vnodes_from_other_jobs() -> None:
    # without the reservations, EASY starts job 6 at once on the free CPUs of
    # vnode1/3/4; with them every free CPU is reserved during its hour
    started, _ = _cycle(_client("workq", without=("pbs_rstat",)), "workq")
    assert list(started) == [6]
    client = _client("workq")
    started, refused = _cycle(client, "workq")
    assert started == {} and refused == {} and client.qruns == []
    twin = client.constrain(*_twin(client, "workq"))
    res = {r.name: r for r in twin.platform.reservations}
    assert res["R0.pbshost"].nodes == ("vnode1",) and res["R0.pbshost"].start == 0
    assert res["R1.pbshost"].nodes == ("vnode3", "vnode4")
    # the job running inside R0 is in R0's queue; the others are placed as running
    queue_of = {int(twin.workload.job_id[p.job]): twin.workload.queues[
        int(twin.workload.queue[p.job])].name for p in twin.placed}
    assert queue_of == {2: RUNNING_QUEUE, 5: RUNNING_QUEUE, 7: "R0"}


def test_a_stopped_queue_starts_nothing() -> None:
    started, _ = _cycle(_client("stopq", without=("queues",)), "stopq")
    assert list(started) == [4]  # the same state with the queue started
    client = _client("stopq")
    assert _cycle(client, "stopq") == ({}, {}) and client.qruns == []


def test_a_job_over_its_queues_limit_is_reported_not_started() -> None:
    client = _client("small")
    started, refused = _cycle(client, "small")
    assert started == {} and client.qruns == []
    assert "allows at most 360 s of wall-time, job asks 480 s" in refused[3]


def test_the_client_refuses_a_start_the_rules_forbid() -> None:
    client = _client("workq")
    client.read()
    with pytest.raises(PbsCommandError, match=r"vnode4 is held by reservation R1\.pbshost"):
        client.start(6, ["vnode4"], [2])
    client = _client("stopq")
    client.read()
    with pytest.raises(PbsCommandError, match="queue stopq is stopped"):
        client.start(4, ["vnode4"], [1])
    client = _client("small")
    client.read()
    with pytest.raises(PbsCommandError, match="its max_run is 1"):
        client.start(3, ["vnode4"], [2])
    assert client.qruns == []


def test_operator_rules_add_start_windows_and_limits() -> None:
    eurora = resolve_platform("eurora-pbs")
    rules = {"workq": eurora.queues["debug"]}  # at most 30 min of wall-time
    client = _client("workq", without=("pbs_rstat",), operator=rules)
    started, refused = _cycle(client, "workq")
    assert started == {} and "1800 s of wall-time, job asks 3600 s" in refused[6]
    window = {"workq": eurora.queues["np_longpar"]}  # starts 18:00-08:00 only
    hour = time.gmtime(NOW).tm_hour  # the recording was made at 01:34 UTC: open
    client = _client("workq", without=("pbs_rstat",), operator=window, timezone="UTC")
    assert list(_cycle(client, "workq")[0]) == ([6] if hour < 8 or hour >= 18 else [])
    client = _client("workq", without=("pbs_rstat",), operator=window,
                     timezone="Asia/Kolkata")  # 07:04 there: open
    assert list(_cycle(client, "workq")[0]) == [6]
    client = _client("workq", without=("pbs_rstat",), operator=window,
                     timezone="America/Los_Angeles")  # 17:04 there: closed
    assert _cycle(client, "workq")[0] == {}


def test_malformed_reservation_output_is_named() -> None:
    with pytest.raises(SlurmStateError, match="line 1"):
        parse_rstat("garbage\n")
    bad = "Resv ID: R3.pbshost\nreserve_start = tomorrow\n"
    with pytest.raises(SlurmStateError, match=r"reservation R3\.pbshost: field reserve_start"):
        parse_rstat(bad)
    with pytest.raises(SlurmStateError, match="queue q: "):
        parse_queues({"Queue": {"q": {"Priority": "high"}}})
    with pytest.raises(SlurmStateError, match="qmgr list queue: line 1"):
        parse_qmgr_queues("garbage\n")


def _twin(client: RecordedPbs, queue: str):  # type: ignore[no-untyped-def]
    from dispatchlab.live.twin import build_twin

    snap = client.read()
    return build_twin(snap, queue), snap


def test_queue_rules_option_is_checked_before_pbs_is_looked_at(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from dispatchlab.cli.main import app

    runner = CliRunner()
    res = runner.invoke(app, ["live", "slurm", "--partition", "main", "--queue-rules",
                              "eurora-pbs"], env={"PATH": str(tmp_path)})
    assert res.exit_code == 2 and "--queue-rules applies to PBS queues" in res.output
    res = runner.invoke(app, ["live", "pbs", "--partition", "workq", "--queue-rules",
                              str(tmp_path / "none.toml")], env={"PATH": str(tmp_path)})
    assert res.exit_code == 2 and "--queue-rules" in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_running_jobs_and_shared_vnodes_never_break_the_twin() -> None:
    from dataclasses import replace

    from dispatchlab.live.pbs_rules import PbsReservation, constrain

    client = _client("workq")
    twin, snap = _twin(client, "workq")
    # job 5 runs on vnode2 for 30 min: a reservation of vnode2+vnode4 from 10 min on
    # leaves vnode2 to it; one of vnode1 overlapping R0's window leaves vnode1 to R0
    extra = (PbsReservation("R20.pbshost", "R20", "RESV_CONFIRMED", NOW + 600, NOW + 1200,
                            (("vnode2", 2), ("vnode4", 2))),
             PbsReservation("R21.pbshost", "R21", "RESV_RUNNING", NOW - 60, NOW + 300,
                            (("vnode1", 1),)))
    rules = replace(client.rules, reservations=client.rules.reservations + extra)
    ruled = constrain(twin, snap, "workq", rules)
    res = {r.name: r.nodes for r in ruled.platform.reservations}
    assert res["R20.pbshost"] == ("vnode4",) and "R21.pbshost" not in res
    assert res["R0.pbshost"] == ("vnode1",)  # job 7 runs inside it: kept
    sim, decisions = ruled.decide(live_dispatcher("easy"))
    assert not sim.rec.rejected and all(type(d).__name__ != "Start" for d in decisions)
