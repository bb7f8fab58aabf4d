"""sacct --json exports (both data-parser shapes) and PBS/Torque accounting logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dispatchlab.errors import WorkloadError
from dispatchlab.workload.accounting import AccountingOptions
from dispatchlab.workload.load import detect_format, load_workload
from dispatchlab.workload.pbs_accounting import load_pbs, parse_pbs_duration
from dispatchlab.workload.slurm_sacct_json import load_sacct_json

DATA = Path(__file__).parent / "data"


def test_sacct_json_sample() -> None:
    wl = load_sacct_json(DATA / "sacct.json")
    rep = wl.meta["load_report"]
    assert wl.job_id.tolist() == [2001, 2004, 2005]
    assert wl.runtime.tolist() == [3600, 60, 120]
    assert wl.walltime.tolist() == [7200, 60, 120]  # infinite limits: the run time
    assert wl.units.tolist() == [16, 2, 2]
    assert rep["steps_skipped"] == 2
    assert rep["dropped_cancelled_before_start"] == 1 and rep["dropped_unfinished"] == 1
    assert rep["kept_failed"] == 1 and rep["unlimited_walltime"] == 2
    # the two array tasks now differ in walltime (each its own run time): kept apart
    assert rep["array_groups_unmarked"] == 1
    assert detect_format(DATA / "sacct.json") == "sacct-json"


def test_sacct_json_older_plain_numbers(tmp_path: Path) -> None:
    doc = {"jobs": [{"job_id": 5, "partition": "p", "user": "u", "name": "n",
                     "state": {"current": "COMPLETED", "reason": "None"},
                     "time": {"submission": 100, "start": 110, "end": 170, "elapsed": 60,
                              "limit": 2},
                     "required": {"CPUs": 3}, "allocation_nodes": 1,
                     "array": {"job_id": 0, "task_id": None},
                     "het": {"job_id": 0, "job_offset": None}, "steps": []}]}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    wl = load_workload(path)
    assert (wl.runtime.tolist(), wl.walltime.tolist(), wl.units.tolist()) == ([60], [120], [3])


def _plain_job(job_id: int, limit: object, **time: object) -> dict[str, object]:
    """A job in the Slurm 21–22 shape (plain numbers) with time limit ``limit``."""
    return {"job_id": job_id, "partition": "p", "user": "u", "name": "n",
            "state": "COMPLETED",
            "time": {"submission": 100, "start": 110, "end": 170, "elapsed": 60,
                     "limit": limit, **time},
            "required": {"CPUs": 2}, "allocation_nodes": 1,
            "array": {"job_id": 0, "task_id": 4294967294},
            "het": {"job_id": 0, "job_offset": 4294967294}, "steps": []}


@pytest.mark.parametrize("fmt", ["sacct", "sacct-json"])
def test_slurm_markers_in_limits_read_as_sacct_spells_them(tmp_path: Path, fmt: str) -> None:
    """INFINITE (0xFFFFFFFF) as a plain number or inside an object is sacct's ``UNLIMITED``;
    NO_VAL (0xFFFFFFFE) is a missing limit: the same workload and report from both readers."""
    sacct_limits = ["UNLIMITED", "UNLIMITED", "", "", "00:03:00"]
    json_limits: list[object] = [
        4294967295, {"set": True, "infinite": False, "number": 4294967295},
        4294967294, {"set": True, "infinite": False, "number": 4294967294}, 3]
    if fmt == "sacct":
        head = "JobID|Submit|Start|End|Elapsed|Timelimit|AllocCPUS|NNodes|State|Partition"
        lines = [head] + [f"{k + 1}|1970-01-01T00:01:40|1970-01-01T00:01:50|"
                          f"1970-01-01T00:02:50|00:01:00|{lim}|2|1|COMPLETED|p"
                          for k, lim in enumerate(sacct_limits)]
        path = tmp_path / "log.txt"
        path.write_text("\n".join(lines) + "\n")
    else:
        path = tmp_path / "log.json"
        path.write_text(json.dumps(
            {"jobs": [_plain_job(k + 1, lim) for k, lim in enumerate(json_limits)]}))
    wl = load_workload(path, format=fmt)
    rep = wl.meta["load_report"]
    # unlimited and missing limits both become the run time; only UNLIMITED is counted so
    assert wl.walltime.tolist() == [60, 60, 60, 60, 180]
    assert rep["unlimited_walltime"] == 2 and rep["estimate_from_runtime"] == 4


def test_sacct_json_markers_elsewhere_and_hostile_values(tmp_path: Path) -> None:
    """NO_VAL in a start time is "not happened"; the 64-bit markers are understood; a
    huge limit is a real limit up to the workload time limit (1e11 s), an error beyond (as
    one just below the markers); a marker spelled as a string is an error."""
    jobs = [{**_plain_job(1, 10, start=4294967294), "state": "CANCELLED"},  # never started
            _plain_job(2, 18446744073709551615),  # INFINITE64
            _plain_job(3, 1_000_000_000)]  # a huge but real limit (~1,900 years)
    path = tmp_path / "log.json"
    path.write_text(json.dumps({"jobs": jobs}))
    wl = load_sacct_json(path)
    assert wl.job_id.tolist() == [2, 3]
    assert wl.walltime.tolist() == [60, 1_000_000_000 * 60]
    rep = wl.meta["load_report"]
    assert rep["unlimited_walltime"] == 1 and rep["dropped_cancelled_before_start"] == 1
    path.write_text(json.dumps({"jobs": [_plain_job(3, 4294967293)]}))
    with pytest.raises(WorkloadError, match="beyond 1e11") as err:
        load_sacct_json(path)
    assert err.value.field == "walltime" and err.value.job == 3
    path.write_text(json.dumps({"jobs": [_plain_job(4, "4294967295")]}))
    with pytest.raises(WorkloadError) as err:
        load_sacct_json(path)
    assert err.value.field == "jobs[0].time.limit" and err.value.job == 4


def test_sacct_json_errors_name_job_and_field(tmp_path: Path) -> None:
    doc = json.loads((DATA / "sacct.json").read_text())
    doc["jobs"][2]["time"]["start"] = "soon"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(WorkloadError) as err:
        load_sacct_json(path)
    assert err.value.job == 2004 and err.value.field == "jobs[2].time.start"
    assert load_sacct_json(path, AccountingOptions(skip_bad_lines=True)).meta[
        "load_report"]["bad_lines_skipped"] == 1
    path.write_text('{"jobs": [')
    with pytest.raises(WorkloadError, match="invalid JSON") as err:
        load_sacct_json(path)
    assert err.value.line == 1


def test_pbs_sample() -> None:
    wl = load_pbs(DATA / "pbs_accounting.log")
    rep = wl.meta["load_report"]
    assert wl.job_id.tolist() == [101, 103, 106, 107, 105]
    assert wl.submit.tolist() == [0, 600, 1000, 1000, 1700]
    assert wl.runtime.tolist() == [3600, 1800, 300, 360, 600]
    assert wl.walltime.tolist() == [7200, 1800, 600, 600, 3600]
    # ncpus; select chunks; ncpus; ncpus; Torque nodes=2:ppn=2
    assert wl.units.tolist() == [8, 16, 2, 2, 4]
    assert wl.array.tolist() == [-1, -1, 104, 104, -1]
    assert rep["dropped_cancelled_before_start"] == 1  # 102: deleted, never ended
    assert rep["kept_timeout"] == 1 and rep["kept_failed"] == 1
    assert rep["other_records_skipped"] == 5  # Q, S, Q, D and the array's summary
    assert rep["job_ids_assigned"] == 2
    assert detect_format(DATA / "pbs_accounting.log") == "pbs"
    assert [q.name for q in wl.queues] == ["batch", "long", "workq"]


@pytest.mark.parametrize(("text", "seconds"), [("01:00:00", 3600), ("3600", 3600),
                                               ("05:30", 330), ("00:00:01.5", 2)])
def test_pbs_durations(text: str, seconds: int) -> None:
    assert parse_pbs_duration(text) == seconds


E = ("03/01/2024 09:00:10;E;{id};user=a queue=q qtime=1709280000 start=1709280010 "
     "end=1709283610 Resource_List.ncpus=8 Resource_List.walltime={wall} Exit_status={st} "
     "resources_used.walltime=01:00:00")


@pytest.mark.parametrize(("line", "field", "message"), [
    ("03/01/2024 09:00:10;E;7.s;user=a", "qtime", "without qtime"),
    (E.format(id="7.s", wall="ages", st=0), "Resource_List.walltime", "not a PBS duration"),
    (E.format(id="7.s", wall="02:00:00", st="oops"), "Exit_status", "unreadable exit"),
    (E.format(id="7.s", wall="02:00:00", st=0).replace("start=1709280010",
                                                       "start=today"), "start", "unreadable"),
    ("03/01/2024 09:00:10;E", None, "not a PBS accounting record"),
])
def test_pbs_hostile_lines(tmp_path: Path, line: str, field: str | None, message: str) -> None:
    path = tmp_path / "20240301"
    path.write_text(E.format(id="6.s", wall="02:00:00", st=0) + "\n" + line + "\n")
    with pytest.raises(WorkloadError, match=message) as err:
        load_pbs(path)
    assert (err.value.line, err.value.field, err.value.source) == (2, field, str(path))
    skipped = load_pbs(path, AccountingOptions(skip_bad_lines=True))
    assert skipped.n_jobs == 1 and skipped.meta["load_report"]["bad_lines_skipped"] == 1


def test_pbs_rerun_job_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "log"
    line = E.format(id="6.s", wall="02:00:00", st=0)
    path.write_text(f"{line}\n{line}\n")
    with pytest.raises(WorkloadError, match="appears twice") as err:
        load_pbs(path)
    assert err.value.line == 2
