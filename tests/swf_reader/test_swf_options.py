"""SWF reading: options, cleaning reports and errors that name file and line."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from dispatchlab.errors import WorkloadError
from dispatchlab.workload import SwfOptions, load_swf

HEADER = """; Version: 2.2
; UnixStartTime: 1000000000
; TimeZoneString: Europe/Stockholm
; MaxNodes: 4
; MaxProcs: 16
"""
#   id submit wait run alloc cpu mem reqp reqt reqm st u g exe q part prec think
ROWS = [
    "1 100 5 50 4 -1 -1 4 60 -1 1 1 1 1 1 -1 -1 -1",
    "2 110 0 0 2 -1 -1 2 60 -1 1 2 1 2 1 -1 -1 -1",       # zero run time
    "3 120 1 70 -1 -1 -1 8 60 -1 1 1 1 1 2 -1 -1 -1",     # allocated unknown -> requested
    "4 130 1 30 -1 -1 -1 -1 60 -1 1 3 1 1 1 -1 -1 -1",    # no processors at all
    "5 140 2 -1 2 -1 -1 2 60 -1 0 1 1 1 1 -1 -1 -1",      # unknown run time
    "6 150 3 40 6 -1 -1 6 -1 -1 1 1 1 1 1 -1 -1 -1",      # requested time missing
    "7 145 3 40.4 5 -1 -1 5 100 -1 1 1 1 1 1 -1 -1 -1",   # out of order, fractional
]


def write(tmp_path: Path, rows: list[str], name: str = "t.swf", header: str = HEADER) -> Path:
    text = header + "\n".join(rows) + "\n"
    path = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    return path


def test_default_cleaning_is_reported(tmp_path: Path) -> None:
    wl = load_swf(write(tmp_path, ROWS))
    rep = wl.meta["load_report"]
    assert rep["records"] == 7
    assert rep["dropped_no_procs"] == 1
    assert rep["dropped_unknown_runtime"] == 1
    assert rep["procs_fallback"] == 1
    assert rep["estimate_from_runtime"] == 1
    assert rep["jobs"] == 5
    # sorted by submit time, rebased to the first job, origin moved along
    assert wl.job_id.tolist() == [1, 2, 3, 7, 6]
    assert wl.submit.tolist() == [0, 10, 20, 45, 50]
    assert wl.origin_unix == 1000000100
    assert wl.timezone == "Europe/Stockholm"
    assert wl.units.tolist() == [4, 2, 8, 5, 6]
    assert wl.runtime.tolist() == [50, 0, 70, 41, 40]   # fractional seconds round up
    assert wl.walltime.tolist() == [60, 60, 60, 100, 40]
    assert wl.logged_wait.tolist() == [5, 0, 1, 3, 3]
    assert rep["runtime_over_request"] == 1               # job 3: 70 s > 60 s


def test_gzip_and_plain_give_the_same_jobs(tmp_path: Path) -> None:
    a = load_swf(write(tmp_path, ROWS, "a.swf"))
    b = load_swf(write(tmp_path, ROWS, "b.swf.gz"))
    assert a.job_id.tolist() == b.job_id.tolist()
    assert np.array_equal(a.runtime, b.runtime)


def test_options_change_what_is_kept(tmp_path: Path) -> None:
    path = write(tmp_path, ROWS)
    wl = load_swf(path, SwfOptions(drop_zero_runtime=True))
    assert 2 not in wl.job_id.tolist()
    assert wl.meta["load_report"]["dropped_zero_runtime"] == 1
    wl = load_swf(path, SwfOptions(procs="requested"))
    assert wl.units.tolist()[0] == 4
    wl = load_swf(path, SwfOptions(skip=1, limit=2))
    assert wl.job_id.tolist() == [2, 3]
    rep = wl.meta["load_report"]
    assert (rep["skipped"], rep["limited"]) == (1, 2)


def test_whole_node_mode(tmp_path: Path) -> None:
    wl = load_swf(write(tmp_path, ROWS), SwfOptions(units="nodes"))
    # header: 16 procs on 4 nodes -> 4 cores per node; 5 procs -> 2 whole nodes
    assert wl.units.tolist() == [1, 1, 2, 2, 2]
    assert wl.req_of("cores").tolist() == [4] * 5


def test_strict_options_name_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, ROWS)
    with pytest.raises(WorkloadError, match=r"t.swf:9, job 4, field 'alloc_procs'"):
        load_swf(path, SwfOptions(drop_invalid=False))
    with pytest.raises(WorkloadError, match=r"t.swf:11, job 6, field 'req_time'"):
        load_swf(path, SwfOptions(missing_estimate="reject"))


def test_malformed_line_is_named(tmp_path: Path) -> None:
    bad = [*ROWS[:2], "3 120 1 70 4 -1 -1 4 60", *ROWS[3:]]
    path = write(tmp_path, bad)
    with pytest.raises(WorkloadError, match=r"t.swf:8: malformed SWF record: expected 18"):
        load_swf(path)
    wl = load_swf(path, SwfOptions(skip_bad_lines=True))
    assert wl.meta["load_report"]["bad_lines_skipped"] == 1


def test_non_numeric_field_is_named(tmp_path: Path) -> None:
    bad = [*ROWS[:1], ROWS[1].replace(" 60 ", " sixty ", 1)]
    with pytest.raises(WorkloadError, match=r"t.swf:7: .*field 'req_time' is not a number"):
        load_swf(write(tmp_path, bad))


def test_negative_times_are_errors(tmp_path: Path) -> None:
    bad = [ROWS[0], ROWS[1].replace("2 110 0 0", "2 -110 0 0", 1)]
    with pytest.raises(WorkloadError, match=r"t.swf:7, job 2, field 'submit': negative"):
        load_swf(write(tmp_path, bad))


def test_missing_file() -> None:
    with pytest.raises(WorkloadError, match="file not found"):
        load_swf("/nonexistent/trace.swf")
