"""sacct --parsable2 exports: job-level records, steps, arrays, het jobs, hostile input."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from dispatchlab.errors import WorkloadError
from dispatchlab.workload.accounting import AccountingOptions
from dispatchlab.workload.load import detect_format, load_workload
from dispatchlab.workload.slurm_sacct import load_sacct

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "sacct_parsable2.txt"
HEADER = ("JobID|JobIDRaw|Submit|Start|End|Elapsed|Timelimit|NCPUS|NNodes|ReqMem|Partition|"
          "QOS|User|JobName|State")
GOOD = ("7|7|2024-03-01T08:00:00|2024-03-01T08:00:05|2024-03-01T09:00:05|01:00:00|02:00:00|"
        "16|1|4000M|batch|normal|alice|sim|COMPLETED")


def write(tmp_path: Path, *lines: str, header: str = HEADER) -> Path:
    path = tmp_path / "export.txt"
    path.write_text("\n".join([header, *lines]) + "\n")
    return path


def test_sample_export_jobs_and_report() -> None:
    wl = load_sacct(SAMPLE)
    rep = wl.meta["load_report"]
    # steps 1001.batch/.extern/.0 and 1005_2.batch belong to their jobs
    assert rep["steps_skipped"] == 4
    assert rep["dropped_cancelled_before_start"] == 1  # 1003, Start Unknown
    assert rep["dropped_unfinished"] == 2  # 1005_[3-5] pending, 1013 running
    assert rep["kept_failed"] == 1 and rep["kept_timeout"] == 1
    assert rep["kept_cancelled_running"] == 1  # 1012 ran 10 min, then was cancelled
    assert rep["unlimited_walltime"] == 1 and rep["partition_limit_walltime"] == 1
    # the kept jobs' states (1003, 1005_[3-5] and 1013 are in the dropped_* counts)
    assert rep["states"] == {"CANCELLED": 1, "COMPLETED": 5, "FAILED": 1, "TIMEOUT": 1}
    assert wl.job_id.tolist() == [1001, 1002, 1004, 1006, 1007, 1010, 1011, 1012]
    assert wl.submit.tolist() == [0, 600, 1260, 1800, 1800, 3600, 3600, 5400]
    assert wl.runtime.tolist() == [3600, 93784, 30, 600, 480, 600, 600, 600]
    # UNLIMITED and Partition_Limit: the run time stands for the request
    assert wl.walltime.tolist() == [7200, 172800, 30, 1800, 1800, 3600, 3600, 600]
    assert wl.units.tolist() == [16, 64, 8, 2, 2, 32, 4, 1]
    assert wl.array.tolist() == [-1, -1, -1, 1005, 1005, -1, -1, -1]
    assert wl.hetjob.tolist() == [-1, -1, -1, -1, -1, 1010, 1010, -1]
    assert wl.logged_wait.tolist() == [5, 1200, 60, 10, 60, 300, 300, 60]
    assert wl.origin_unix == 1709280000 and wl.timezone == "UTC"
    assert [q.name for q in wl.queues] == ["batch", "debug", "long"]
    assert detect_format(SAMPLE) == "sacct"
    assert load_workload(SAMPLE, limit=3).n_jobs == 3


def test_time_zone_moves_the_origin_not_the_relative_times() -> None:
    utc = load_sacct(SAMPLE)
    rome = load_sacct(SAMPLE, AccountingOptions(timezone="Europe/Rome"))
    assert rome.origin_unix == utc.origin_unix - 3600
    assert np.array_equal(rome.submit, utc.submit)
    assert rome.timezone == "Europe/Rome"


def test_parsable_trailing_pipe_and_gzip(tmp_path: Path) -> None:
    text = "\n".join(line + "|" for line in SAMPLE.read_text().splitlines()) + "\n"
    path = tmp_path / "export.psv.gz"
    path.write_bytes(gzip.compress(text.encode()))
    wl = load_sacct(path)
    assert np.array_equal(wl.job_id, load_sacct(SAMPLE).job_id)


def test_without_jobidraw_tasks_and_components_get_fresh_ids(tmp_path: Path) -> None:
    lines = [line.split("|") for line in SAMPLE.read_text().splitlines()]
    text = "\n".join("|".join(f[:1] + f[2:]) for f in lines)
    path = tmp_path / "noraw.txt"
    path.write_text(text)
    wl = load_sacct(path)
    assert wl.meta["load_report"]["job_ids_assigned"] == 4  # 1005_1, 1005_2, 1010+0, 1010+1
    assert wl.job_id.tolist()[:3] == [1001, 1002, 1004]
    assert len(set(wl.job_id.tolist())) == wl.n_jobs


@pytest.mark.parametrize(("line", "field", "message"), [
    ("7|7|2024-03-01T08:00:00|2024-03-01T08:00:05", None, "expected 15"),  # truncated
    (GOOD.replace("COMPLETED", "EXPLODED"), "State", "unknown job state 'EXPLODED'"),
    (GOOD.replace("|01:00:00|", "|1:75:00|"), "Elapsed", "unreadable duration"),
    (GOOD.replace("|02:00:00|", "|forever|"), "Timelimit", "unreadable time limit"),
    (GOOD.replace("2024-03-01T08:00:05|2024", "yesterday|2024"), "Start",
     "unreadable date-time"),
    (GOOD.replace("|16|1|", "|sixteen|1|"), "NCPUS", "unreadable CPU count"),
    (GOOD.replace("08:00:00|2024-03-01T08:00:05|", "08:00:00|Unknown|"), "Start",
     "finished job without a start"),
    (GOOD.replace("|2024-03-01T09:00:05|", "|2024-03-01T07:00:05|"), "End",
     "end before start"),
    (GOOD.replace("7|7|", "7abc|7|"), "JobID", "unreadable job id"),
])
def test_hostile_lines_name_file_line_and_field(tmp_path: Path, line: str, field: str | None,
                                                message: str) -> None:
    path = write(tmp_path, GOOD.replace("7|7|", "6|6|"), line)
    with pytest.raises(WorkloadError) as err:
        load_sacct(path)
    assert err.value.source == str(path)
    assert err.value.line == 3
    assert err.value.field == field
    assert message in str(err.value)


def test_bad_lines_can_be_skipped_and_are_counted(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD, "8|8|2024-03-01T08:00:00|2024", "",
                 GOOD.replace("7|7|", "9|9|").replace("|01:00:00|", "|1:75:00|"),
                 GOOD.replace("7|7|", "10|10|"))
    wl = load_sacct(path, AccountingOptions(skip_bad_lines=True))
    assert wl.job_id.tolist() == [7, 10]
    assert wl.meta["load_report"]["bad_lines_skipped"] == 2


def test_missing_column_and_duplicate_ids(tmp_path: Path) -> None:
    no_state = write(tmp_path, "7|2024-03-01T08:00:00|2024-03-01T08:00:05|"
                     "2024-03-01T09:00:05|16", header="JobID|Submit|Start|End|NCPUS")
    with pytest.raises(WorkloadError, match="lacks a State column"):
        load_sacct(no_state)
    twice = write(tmp_path, GOOD, GOOD)
    with pytest.raises(WorkloadError, match="appears twice, also on line 2") as err:
        load_sacct(twice)
    assert err.value.line == 3


def test_ambiguous_local_times_are_counted(tmp_path: Path) -> None:
    line = GOOD.replace("2024-03-01T08:00:00", "2024-10-27T02:10:00").replace(
        "2024-03-01T08:00:05", "2024-10-27T02:20:00").replace(
        "2024-03-01T09:00:05", "2024-10-27T03:20:00")
    wl = load_sacct(write(tmp_path, line), AccountingOptions(timezone="Europe/Rome"))
    assert wl.meta["load_report"]["ambiguous_local_times"] == 1
    gap = line.replace("2024-10-27T02:10:00", "2024-03-31T02:10:00")
    with pytest.raises(WorkloadError, match="daylight-saving gap") as err:
        load_sacct(write(tmp_path, gap), AccountingOptions(timezone="Europe/Rome"))
    assert err.value.field == "Submit"


def test_state_codes_and_cancelled_by(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("COMPLETED", "CD"),
                 GOOD.replace("7|7|", "8|8|").replace("COMPLETED", "CANCELLED by 42"),
                 GOOD.replace("7|7|", "9|9|").replace("COMPLETED", "OOM"))
    rep = load_sacct(path).meta["load_report"]
    assert rep["states"] == {"CANCELLED": 1, "COMPLETED": 1, "OUT_OF_MEMORY": 1}
    assert rep["kept_failed"] == 1 and rep["kept_cancelled_running"] == 1


def test_whole_node_units(tmp_path: Path) -> None:
    wl = load_sacct(SAMPLE, AccountingOptions(units="nodes"))
    assert wl.units.tolist() == [1, 2, 1, 1, 1, 1, 1, 1]
    assert wl.req[:, 0].tolist() == [16, 32, 8, 2, 2, 32, 4, 1]
    wide = load_sacct(SAMPLE, AccountingOptions(units="nodes", cores_per_node=64))
    assert (wide.req[:, 0] == 64).all()


def test_header_only_empty_and_truncated_gzip(tmp_path: Path) -> None:
    assert load_sacct(write(tmp_path)).n_jobs == 0
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(WorkloadError, match="no header line"):
        load_sacct(empty)
    cut = tmp_path / "cut.txt.gz"
    cut.write_bytes(gzip.compress(SAMPLE.read_bytes())[:200])
    with pytest.raises(WorkloadError, match="damaged gzip data") as err:
        load_sacct(cut)
    assert err.value.source == str(cut)


def test_duplicates_export_keeps_the_last_run_of_a_requeued_job(tmp_path: Path) -> None:
    # sacct --duplicates: the first run of job 7 ended REQUEUED, the second completed
    first = GOOD.replace("COMPLETED", "REQUEUED").replace("2024-03-01T09:00:05",
                                                          "2024-03-01T08:10:00")
    wl = load_sacct(write(tmp_path, first, GOOD))
    assert wl.job_id.tolist() == [7] and wl.runtime.tolist() == [3600]
    assert wl.meta["load_report"]["dropped_unfinished"] == 1


def test_width_is_the_allocation_with_the_request_as_fallback(tmp_path: Path) -> None:
    """sacct's manual: NCPUS = AllocCPUS, the CPUs allocated; ReqCPUS the request, used
    (and counted) only where no allocation is recorded."""
    path = tmp_path / "s.txt"
    path.write_text(
        "JobID|Submit|Start|End|AllocCPUS|ReqCPUS|State\n"
        "1|2024-03-01T08:00:00|2024-03-01T08:00:05|2024-03-01T09:00:05|32|8|COMPLETED\n"
        "2|2024-03-01T08:00:00|2024-03-01T08:00:05|2024-03-01T09:00:05|0|4|COMPLETED\n")
    wl = load_sacct(path)
    assert wl.units.tolist() == [32, 4]
    rep = wl.meta["load_report"]
    assert (rep["width_from_allocation"], rep["width_from_request"]) == (1, 1)
    assert load_sacct(SAMPLE).meta["load_report"]["width_from_request"] == 0


#: The ``--format`` Open XDMoD's Slurm notes ask for (``sacct --parsable2 --noheader``).
XDMOD_FORMAT = ("jobid,jobidraw,cluster,partition,account,group,gid,user,uid,submit,"
                "eligible,start,end,elapsed,exitcode,state,nnodes,ncpus,reqcpus,reqmem,"
                "reqgres,reqtres,timelimit,nodelist,jobname")


def test_headerless_export_read_with_its_columns(tmp_path: Path) -> None:
    path = DATA / "sacct" / "xdmod_noheader.txt"
    with pytest.raises(WorkloadError):  # its first record is no header
        load_sacct(path)
    wl = load_sacct(path, AccountingOptions(columns=XDMOD_FORMAT))
    assert wl.job_id.tolist() == [4001, 4002, 4004]  # JobIDRaw of array task 4003_1
    assert wl.units.tolist() == [64, 8, 16]  # NCPUS, not ReqCPUS (4 for job 4002)
    assert wl.runtime.tolist() == [3600, 1200, 3605]
    rep = wl.meta["load_report"]
    assert rep["records"] == 4 and rep["dropped_cancelled_before_start"] == 1
    assert (rep["kept_failed"], rep["kept_timeout"]) == (1, 1)
    parsable = tmp_path / "p.txt"  # sacct --parsable: a '|' ends every line
    parsable.write_text("".join(f"{line}|\n" for line in path.read_text().splitlines()))
    assert load_sacct(parsable, AccountingOptions(columns=XDMOD_FORMAT)).n_jobs == 3
    with pytest.raises(WorkloadError, match="columns given") as err:
        load_sacct(path, AccountingOptions(columns="JobID,Submit,Start,End,NCPUS,State"))
    assert err.value.line == 1


def test_steps_with_their_own_raw_ids_warn_nothing(tmp_path: Path) -> None:
    """sacct writes a step's JobIDRaw as ``1001.batch`` (no number): skipping the steps
    must not cast NaN ids (numpy's RuntimeWarning on an ordinary export)."""
    import warnings

    path = tmp_path / "steps.txt"
    lines = SAMPLE.read_text().splitlines()
    path.write_text("\n".join(
        "|".join([f[0], f[0], *f[2:]]) if "." in f[0] else line
        for line, f in ((line, line.split("|")) for line in lines)) + "\n")
    assert "1001.batch|1001.batch|" in path.read_text()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wl = load_sacct(path)
    assert wl.job_id.tolist() == load_sacct(SAMPLE).job_id.tolist()


def test_swf_written_from_sacct_keeps_failed_and_cancelled_statuses(tmp_path: Path) -> None:
    """SWF field 11 (Parallel Workloads Archive): 1 completed, 0 failed, 5 cancelled."""
    from dispatchlab.workload.swf_writer import write_swf

    wl = load_sacct(SAMPLE)
    path = write_swf(wl, tmp_path / "w.swf")
    rows = [line.split() for line in path.read_text().splitlines()
            if line.strip() and not line.startswith(";")]
    status = {int(r[0]): int(r[10]) for r in rows}
    assert status[1004] == 0 and status[1002] == 0  # FAILED, TIMEOUT
    assert status[1012] == 5  # cancelled while running
    assert {status[j] for j in (1001, 1006, 1007, 1010, 1011)} == {1}


def test_columns_apply_to_sacct_only() -> None:
    with pytest.raises(WorkloadError, match="headerless sacct") as err:
        load_workload(DATA / "pbs_accounting.log", columns="JobID,State")
    assert err.value.field == "columns"
