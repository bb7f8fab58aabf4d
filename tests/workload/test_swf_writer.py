"""SWF writer: workloads and simulated schedules, read back by our reader and plain tools."""

from __future__ import annotations

import gzip
import re
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings

from dispatchlab.errors import WorkloadError
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.workload import (
    generate,
    load_eurora,
    load_swf,
    write_schedule_swf,
    write_swf,
)
from dispatchlab.workload.swf import FIELDS, read_header
from dispatchlab.workload.workload import Workload
from tests.workload.conftest import DATA, ROW_COLUMNS, assert_same_jobs, shared
from tests.workload.strategies import swf_workloads


def records(path: Path) -> pd.DataFrame:
    """Data lines the way evalys and the PWA tools read them."""
    return pd.read_csv(path, sep=r"\s+", comment=";", header=None, names=list(FIELDS))


def assert_same_columns(a: Workload, b: Workload) -> None:
    for name in ROW_COLUMNS:
        assert np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True), name
    assert (a.resources, a.queues, a.users, a.apps) == (b.resources, b.queues, b.users, b.apps)
    assert (a.origin_unix, a.timezone) == (b.origin_unix, b.timezone)


@pytest.mark.parametrize("name", ["lublin-256-a.swf", "KTH-SP2-1996-2.1-cln.swf.gz"])
def test_swf_workload_swf_round_trip(tmp_path: Path, name: str) -> None:
    first = load_swf(shared("swf", name))
    out = write_swf(first, tmp_path / "again.swf.gz")
    second = load_swf(out)
    assert_same_columns(first, second)
    again = load_swf(write_swf(second, tmp_path / "third.swf"))
    assert_same_columns(second, again)
    header = read_header(out)
    original = first.meta["load_report"]["header"]
    for key in ("MaxNodes", "MaxProcs", "TimeZoneString", "Computer"):
        if key in original:
            assert header[key] == original[key]
    assert header.get("UnixStartTime") == (
        None if first.origin_unix is None else str(first.origin_unix)
    )
    assert header["MaxJobs"] == str(len(first))


@settings(max_examples=60, deadline=None)
@given(swf_workloads())
def test_swf_round_trip_property(wl: Workload) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        back = load_swf(write_swf(wl, Path(tmp) / "w.swf"))
    assert_same_jobs(wl, back)
    assert (back.origin_unix, back.timezone) == (wl.origin_unix, wl.timezone)
    for name in ("job_id", "submit", "walltime", "runtime", "units", "req", "logged_wait"):
        assert np.array_equal(getattr(wl, name), getattr(back, name)), name


def test_named_labels_and_multi_resource_jobs(tmp_path: Path) -> None:
    wl = load_eurora(DATA / "eurora" / "sample.log_crypt")
    path = write_swf(
        wl,
        tmp_path / "eurora.swf",
        platform=resolve_platform("eurora"),
        notes=["converted for a test"],
    )
    header = read_header(path)
    assert header["MaxNodes"] == "64"
    assert header["MaxProcs"] == "1024"
    assert header["TimeZoneString"] == "Europe/Rome"
    assert header["StartTime"] == "Mon Mar 31 09:08:42 CEST 2014"
    assert header["MaxQueues"] == str(len(wl.queues))
    text = path.read_text()
    assert "; Queue: 5 reservation\n" in text
    assert "; Note: converted for a test\n" in text
    data = records(path)
    frame = wl.to_frame()
    assert data["req_procs"].tolist() == (frame["units"] * frame["req_cores"]).tolist()
    assert data["req_time"].tolist() == frame["walltime"].tolist()
    assert data["wait"].tolist() == frame["logged_wait"].tolist()
    big = data[data["job_id"] == 498519].iloc[0]  # 4 units × 16 cores × 14 GB
    assert (big["alloc_procs"], big["req_mem"]) == (64, 14336 * 1024 // 16)
    queues = [q.name for q in wl.queues]
    assert [queues[k - 1] for k in data["queue"]] == frame["queue"].tolist()
    assert set(data["user"]) == {1}  # 'yyy' is the first (and only) user


def test_gzip_output_is_deterministic(tmp_path: Path) -> None:
    wl = generate("gen:eurora-like:jobs=30,seed=5")
    a = write_swf(wl, tmp_path / "a.swf.gz").read_bytes()
    b = write_swf(wl, tmp_path / "b.swf.gz").read_bytes()
    assert a == b
    assert gzip.decompress(a).decode().startswith("; Version: 2.2\n")


def test_schedule_swf_by_hand(tmp_path: Path) -> None:
    wl = Workload.from_columns(
        job_id=[1, 2, 3, 4],
        submit=[0, 10, 20, 30],
        walltime=[100, 50, 100, 100],
        runtime=[60, 80, 10, 10],
        units=[2, 1, 1, 1],
        req={"cores": [4, 1, 1, 1]},
        origin_unix=1_000_000_000,
        timezone="UTC",
    )
    jobs = pd.DataFrame(
        {  # rows in another order than the workload
            "job_id": [4, 3, 2, 1],
            "start": [-1, 20, 15, 5],
            "end": [-1, -1, 65, 65],
            "killed": [False, False, True, False],
        }
    )
    path = write_schedule_swf(
        jobs, wl, tmp_path / "s.swf", platform=resolve_platform("nodes=2,cores=4")
    )
    data = records(path).set_index("job_id")
    assert data.loc[1, ["wait", "run_time", "alloc_procs", "status"]].tolist() == [5, 60, 8, 1]
    assert data.loc[2, ["wait", "run_time", "status"]].tolist() == [5, 50, 0]
    assert data.loc[3, ["wait", "run_time", "status"]].tolist() == [0, -1, -1]
    assert data.loc[4, ["wait", "run_time", "alloc_procs", "status"]].tolist() == [-1, -1, -1, 5]
    header = read_header(path)
    assert (header["MaxNodes"], header["MaxProcs"]) == ("2", "8")
    assert header["EndTime"] == "Sun Sep 09 01:47:45 UTC 2001"  # origin + 65 s
    dropped = records(write_schedule_swf(jobs, wl, tmp_path / "d.swf", drop_rejected=True))
    assert dropped["job_id"].tolist() == [1, 2, 3]
    assert read_header(tmp_path / "d.swf")["MaxJobs"] == "3"


def test_schedule_swf_of_a_simulation(tmp_path: Path) -> None:
    from dispatchlab import simulate

    wl = generate("gen:eurora-like:jobs=120,seed=7")
    res = simulate(wl, "eurora", "fifo")
    path = write_schedule_swf(res.jobs, wl, tmp_path / "sim.swf", platform="eurora")
    back = load_swf(path)
    assert np.array_equal(back.logged_wait, res.jobs["wait"].to_numpy())
    assert np.array_equal(back.runtime, res.jobs["run"].to_numpy())
    assert np.array_equal(back.job_id, wl.job_id)
    assert re.search(r"; UnixStartTime: (\d+)", path.read_text()).group(1) == str(wl.origin_unix)  # type: ignore[union-attr]


def test_schedule_mismatch_errors(tmp_path: Path) -> None:
    wl = generate("gen:eurora-like:jobs=3,seed=1")
    good = pd.DataFrame({"job_id": wl.job_id, "start": wl.submit, "end": wl.submit + 1})
    with pytest.raises(WorkloadError, match="lacks column 'end'"):
        write_schedule_swf(good.drop(columns="end"), wl, tmp_path / "x.swf")
    with pytest.raises(WorkloadError, match="2 rows, the workload 3"):
        write_schedule_swf(good.iloc[:2], wl, tmp_path / "x.swf")
    with pytest.raises(WorkloadError, match="job 99 is not in the workload"):
        write_schedule_swf(good.assign(job_id=[1, 2, 99]), wl, tmp_path / "x.swf")
    with pytest.raises(WorkloadError, match="duplicate job ids"):
        write_schedule_swf(good.assign(job_id=[1, 1, 2]), wl, tmp_path / "x.swf")
