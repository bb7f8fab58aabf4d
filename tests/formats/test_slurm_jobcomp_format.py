"""Slurm's job completion log as a first-class format: detection, cleaning, CLI, hostile lines.

``data/slurm_jobcomp.log`` is a real log written by Slurm 22.05 (``jobcomp/filetxt``) on
the local cluster of ``tools/slurm-local`` (see ``data/make_slurm_jobcomp.sh``): nine jobs,
times in UTC: completed ones (1, 2, 5, 9; job 2 on two nodes, job 5 asked ``-t 0-00:03:30``
which Slurm logs as ``TimeLimit=4``), ``UNLIMITED`` (4), failed (3), timed out (6),
cancelled while running (8) and a held job cancelled before it started (7).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from dispatchlab.cli.main import app
from dispatchlab.errors import WorkloadError
from dispatchlab.workload.accounting import AccountingOptions
from dispatchlab.workload.load import detect_format, load_workload
from dispatchlab.workload.slurm_jobcomp import load_jobcomp, read_jobcomp
from dispatchlab.workload.slurm_spellings import machine_timezone

DATA = Path(__file__).parent / "data"
LOG = DATA / "slurm_jobcomp.log"
runner = CliRunner()


def _lines() -> list[str]:
    return LOG.read_text().splitlines()


def test_detected_by_content_whatever_the_name(tmp_path: Path) -> None:
    assert detect_format(LOG) == "jobcomp"
    renamed = tmp_path / "history.txt"
    renamed.write_text(LOG.read_text())
    assert detect_format(renamed) == "jobcomp"
    assert load_workload(renamed).meta["format"] == "jobcomp"


def test_real_log_cleaned_by_the_accounting_rules() -> None:
    wl = load_workload(LOG)
    by_id = dict(zip(wl.job_id.tolist(), range(wl.n_jobs), strict=True))
    assert sorted(by_id) == [1, 2, 3, 4, 5, 6, 8, 9]  # 7: cancelled while held
    rep = wl.meta["load_report"]
    assert (rep["records"], rep["dropped_cancelled_before_start"], rep["kept_failed"],
            rep["kept_timeout"], rep["kept_cancelled_running"], rep["unlimited_walltime"],
            rep["runtime_over_request"], rep["jobs"]) == (9, 1, 1, 1, 1, 1, 1, 8)
    assert rep["states"] == {"CANCELLED": 1, "COMPLETED": 5, "FAILED": 1, "TIMEOUT": 1}
    row = {j: i for j, i in by_id.items()}
    assert wl.runtime[row[6]] == 87 and wl.walltime[row[6]] == 60  # killed past its limit
    assert wl.walltime[row[5]] == 240 and wl.walltime[row[4]] == wl.runtime[row[4]] == 2
    assert wl.units[row[2]] == 6 and wl.logged_wait[row[9]] == 1
    assert wl.origin_unix == 1_795_758_188 and wl.timezone == "UTC"  # 2026-11-27T05:43:08
    nodes = load_workload(LOG, format="jobcomp", units="nodes")
    k = nodes.job_id.tolist().index(2)
    assert (nodes.units[k], nodes.req_of("cores")[k]) == (2, 3)


def test_read_jobcomp_keeps_every_record_with_its_node_list() -> None:
    recs = read_jobcomp(LOG, timezone="UTC")
    assert [r.job_id for r in recs] == [3, 5, 4, 1, 7, 8, 2, 9, 6]
    held = recs[4]
    assert (held.state, held.node_list, held.procs, held.start == held.end) == (
        "CANCELLED", "(null)", 0, True)
    assert recs[2].time_limit == -1 and recs[6].node_list == "n[1-2]"


def test_partition_filter_is_counted(tmp_path: Path) -> None:
    log = tmp_path / "jobcomp.log"
    log.write_text(LOG.read_text().replace("Partition=main", "Partition=debug", 2))
    wl = load_jobcomp(log, AccountingOptions(), partition="main")
    assert wl.meta["load_report"]["dropped_other_partition"] == 2
    assert wl.n_jobs == 6
    with pytest.raises(WorkloadError, match="no job that ran in partition 'gpu'"):
        load_jobcomp(log, AccountingOptions(), partition="gpu")


def test_trace_info_on_a_completion_log() -> None:
    result = runner.invoke(app, ["trace-info", str(LOG), "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert (info["format"], info["jobs"]) == ("jobcomp", 8)
    assert info["cleaning"]["dropped_cancelled_before_start"] == 1
    assert info["cleaning"]["kept_timeout"] == 1


@pytest.mark.parametrize("args", [[], ["--from", "jobcomp"]])
def test_convert_from_a_completion_log(tmp_path: Path, args: list[str]) -> None:
    out = tmp_path / "w.swf"
    result = runner.invoke(app, ["convert", str(LOG), str(out), *args])
    assert result.exit_code == 0, result.output
    assert "8 jobs (jobcomp) written" in result.output
    assert "dropped_cancelled_before_start=1" in result.output
    back, orig = load_workload(out), load_workload(LOG)
    assert back.job_id.tolist() == orig.job_id.tolist()
    assert back.runtime.tolist() == orig.runtime.tolist()
    assert back.walltime.tolist() == orig.walltime.tolist()


def _hostile(tmp_path: Path, line: int, old: str, new: str) -> Path:
    lines = _lines()
    assert old in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new)
    log = tmp_path / "jobcomp.log"
    log.write_text("\n".join(lines) + "\n")
    return log


@pytest.mark.parametrize(("old", "new", "message"), [
    ("JobState=COMPLETED", "JobState=EXPLODED", r":2, job 5, field 'JobState'.*unknown job "
     r"state 'EXPLODED'"),
    ("TimeLimit=4", "TimeLimit=soon", r":2, field 'TimeLimit'.*'soon' \(expected whole"),
    ("TimeLimit=4", "TimeLimit=1:99:00", r":2, field 'TimeLimit'.*'1:99:00'"),
    ("StartTime=2026-11-27T05:43:10", "StartTime=yesterday", r":2, field 'StartTime'"),
    ("ProcCnt=1 ", "ProcCnt=one ", r":2, field 'ProcCnt'.*'one'"),
    ("JobId=5 ", "JobId=\u00b2 ", r":2, field 'JobId'"),
    ("ProcCnt=1 ", "", r":2, field 'ProcCnt'.*incomplete jobcomp/filetxt record"),
    ("EndTime=2026-11-27T05:43:12", "EndTime=2026-11-27T05:43:01",
     r":2, job 5, field 'EndTime'.*end before start"),
])
def test_hostile_line_is_an_error_naming_file_line_and_field(
        tmp_path: Path, old: str, new: str, message: str) -> None:
    log = _hostile(tmp_path, 2, old, new)
    with pytest.raises(WorkloadError, match=r"jobcomp\.log" + message):
        load_workload(log)
    result = runner.invoke(app, ["convert", str(log), str(tmp_path / "w.swf")])
    assert result.exit_code == 2


def test_truncated_line_fails_or_is_skipped_and_counted(tmp_path: Path) -> None:
    lines = _lines()
    log = tmp_path / "jobcomp.log"
    mid_value = lines[2].index("SubmitTime=") + 20  # the writer died inside the last time
    log.write_text("\n".join([*lines[:2], lines[2][:mid_value]]) + "\n")
    with pytest.raises(WorkloadError, match=r"jobcomp\.log:3, field 'SubmitTime'.*"
                       r"'2026-11-2'"):
        load_workload(log)
    cut = lines[2].index("EndTime=")
    log.write_text("\n".join([*lines[:2], lines[2][:cut]]) + "\n")
    with pytest.raises(WorkloadError, match=r"jobcomp\.log:3, field 'EndTime'.*truncated"):
        load_workload(log)
    wl = load_workload(log, skip_bad_lines=True)
    assert wl.meta["load_report"]["bad_lines_skipped"] == 1 and wl.n_jobs == 2
    assert "bad_lines_skipped=1" in runner.invoke(
        app, ["convert", str(log), str(tmp_path / "w.swf"), "--skip-bad-lines"]).output


@pytest.mark.parametrize(("limit", "walltime", "partition_limits", "unlimited"), [
    ("Partition_Limit", 2, 1, 1), ("UNLIMITED", 2, 0, 2), ("0-01:00:00", 3600, 0, 1),
    ("90", 5400, 0, 1)])
def test_odd_time_limits(tmp_path: Path, limit: str, walltime: int, partition_limits: int,
                         unlimited: int) -> None:
    wl = load_workload(_hostile(tmp_path, 2, "TimeLimit=4", f"TimeLimit={limit}"))
    assert wl.walltime[wl.job_id.tolist().index(5)] == walltime
    rep = wl.meta["load_report"]  # job 4 of the log is UNLIMITED already
    assert (rep["partition_limit_walltime"], rep["unlimited_walltime"]) == (
        partition_limits, unlimited)
    assert rep["estimate_from_runtime"] == partition_limits + unlimited


def test_machine_timezone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", ":Europe/Stockholm")
    assert machine_timezone() == "Europe/Stockholm"
    monkeypatch.setenv("TZ", "Not/AZone")
    assert machine_timezone() != "Not/AZone"


LINE = ("JobId={id} UserId=u(1) GroupId=g(1) Name=j JobState={state} Partition=main "
        "TimeLimit={limit} StartTime=2026-01-01T{start} EndTime=2026-01-01T{end} NodeList=n1 "
        "NodeCnt=1 ProcCnt=2 SubmitTime=2026-01-01T00:00:00")


def _clock(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30_000), st.integers(0, 30_000),
                          st.one_of(st.integers(1, 600).map(str), st.just("UNLIMITED")),
                          st.sampled_from(["COMPLETED", "FAILED", "TIMEOUT"])),
                min_size=1, max_size=6))
def test_runtime_and_limit_follow_the_log(tmp_path_factory: pytest.TempPathFactory,
                                          jobs: list[tuple[int, int, str, str]]) -> None:
    log = tmp_path_factory.mktemp("jc") / "jobcomp.log"
    log.write_text("\n".join(LINE.format(id=k + 1, state=state, limit=limit,
                                         start=_clock(wait), end=_clock(wait + run))
                             for k, (wait, run, limit, state) in enumerate(jobs)) + "\n")
    wl = load_workload(log, format="jobcomp")
    assert wl.runtime.tolist() == [run for _, run, _, _ in jobs]
    assert wl.walltime.tolist() == [max(run, 1) if limit == "UNLIMITED" else int(limit) * 60
                                    for _, run, limit, _ in jobs]
    assert wl.logged_wait.tolist() == [wait for wait, _, _, _ in jobs]
    assert wl.meta["load_report"]["unlimited_walltime"] == sum(
        limit == "UNLIMITED" for _, _, limit, _ in jobs)


def test_local_times_read_in_the_timezone_option(tmp_path: Path) -> None:
    log = tmp_path / "jobcomp.log"  # 02:30 happens twice in Stockholm on 2026-10-25
    log.write_text(LINE.format(id=1, state="COMPLETED", limit="5", start="00:00:10",
                               end="00:01:10").replace("2026-01-01T", "2026-10-25T")
                   .replace("SubmitTime=2026-10-25T00:00:00", "SubmitTime=2026-10-25T02:30:00")
                   .replace("T00:00:10", "T02:30:10").replace("T00:01:10", "T02:31:10") + "\n")
    utc = load_workload(log, format="jobcomp")
    here = load_workload(log, format="jobcomp", timezone="Europe/Stockholm")
    assert utc.origin_unix is not None and here.origin_unix is not None
    assert utc.origin_unix - here.origin_unix == 2 * 3600  # the first, summer-time, 02:30
    assert here.meta["load_report"]["ambiguous_local_times"] == 1
    assert here.runtime.tolist() == [60] and here.logged_wait.tolist() == [10]


def test_simulate_and_trace_info_errors_on_a_completion_log(tmp_path: Path) -> None:
    result = runner.invoke(app, ["simulate", "-w", str(LOG), "-p", "nodes=4,cores=4",
                                 "-d", "easy"])
    assert result.exit_code == 0, result.output
    bad = _hostile(tmp_path, 5, "JobState=CANCELLED", "JobState=VANISHED")
    result = runner.invoke(app, ["trace-info", str(bad)])
    assert result.exit_code == 2
    assert "jobcomp.log:5" in result.output and "JobState" in result.output


def test_log_from_before_slurm_17_11_has_no_submit_times(tmp_path: Path) -> None:
    """Slurm before 17.11 ended each record at ``WorkDir=`` (the shape of a 16.05 line:
    ``… NodeCnt=1 ProcCnt=12 WorkDir=/home/walter/…``): no ``SubmitTime``, so each job
    arrives at its start, counted; it is no truncated line."""
    old = tmp_path / "jobcomp-16.05.log"
    old.write_text("".join(line[:line.index(" ReservationName=")] + "\n"
                           for line in _lines()))
    wl = load_workload(old)
    new = load_workload(LOG)
    assert wl.job_id.tolist() == new.job_id.tolist()
    assert wl.runtime.tolist() == new.runtime.tolist()
    assert wl.units.tolist() == new.units.tolist()
    assert (wl.logged_wait == 0).all()
    rep = wl.meta["load_report"]
    assert rep["submit_from_start"] == 9  # every record with a start, kept or not
    assert rep["dropped_cancelled_before_start"] == 1
    mixed = tmp_path / "mixed.log"  # a 17.11+ log with one line cut before SubmitTime
    lines = _lines()
    mixed.write_text("\n".join([lines[0][:lines[0].index(" ReservationName=")],
                                *lines[1:]]) + "\n")
    with pytest.raises(WorkloadError, match=r"mixed\.log:1, field 'SubmitTime'.*truncated"):
        load_workload(mixed)
