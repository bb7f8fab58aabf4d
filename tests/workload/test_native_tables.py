"""Parquet and CSV workload tables: exact round trips, foreign tables, errors."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings

from dispatchlab.errors import WorkloadError
from dispatchlab.workload import (
    generate,
    load_csv,
    load_eurora,
    load_parquet,
    load_swf,
    load_workload,
    save_workload,
    write_csv,
    write_parquet,
)
from dispatchlab.workload.native import METADATA_KEY, csv_sidecar
from dispatchlab.workload.workload import Workload
from tests.workload.conftest import DATA, assert_same_workload
from tests.workload.strategies import workloads


def round_trip(wl: Workload, fmt: str) -> Workload:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"w.{fmt}"
        save_workload(wl, path)
        back = load_workload(path)
        assert back.source == str(path)
        return back


@settings(max_examples=60, deadline=None)
@given(workloads())
def test_parquet_round_trip_is_exact(wl: Workload) -> None:
    assert_same_workload(wl, round_trip(wl, "parquet"))


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(workloads())
def test_csv_round_trip_is_exact(wl: Workload) -> None:
    assert_same_workload(wl, round_trip(wl, "csv"))


@pytest.mark.parametrize("fmt", ["parquet", "csv", "csv.gz"])
def test_real_workloads_round_trip(fmt: str) -> None:
    for wl in (
        load_eurora(DATA / "eurora" / "sample.log_crypt"),
        load_swf(DATA / "swf" / "tiny.swf"),
        generate("gen:eurora-like:jobs=300,seed=4"),
    ):
        back = round_trip(wl, fmt)
        assert_same_workload(wl, back)
        assert back.meta["load_report" if "load_report" in wl.meta else "params"] is not None


def test_tables_are_readable_by_plain_tools(tmp_path: Path) -> None:
    wl = load_eurora(DATA / "eurora" / "sample.log_crypt")
    write_parquet(wl, tmp_path / "w.parquet")
    write_csv(wl, tmp_path / "w.csv")
    frame = pd.read_parquet(tmp_path / "w.parquet")
    assert list(frame.columns) == [
        "job_id",
        "submit",
        "walltime",
        "runtime",
        "units",
        "req_cores",
        "req_mem",
        "req_gpu",
        "req_mic",
        "queue",
        "user",
        "app",
        "power",
        "est",
        "lst",
        "logged_wait",
    ]
    assert frame["queue"].tolist() == pd.read_csv(tmp_path / "w.csv")["queue"].tolist()
    header = json.loads(pq.read_schema(tmp_path / "w.parquet").metadata[METADATA_KEY])
    assert header["queues"][1] == {"name": "parallel", "ewt": 21600}
    side = json.loads(csv_sidecar(tmp_path / "w.csv").read_text())
    assert side == header
    assert csv_sidecar(tmp_path / "w.csv").name == "w.csv.meta.json"


def test_foreign_csv_without_sidecar(tmp_path: Path) -> None:
    path = tmp_path / "jobs.csv"
    pd.DataFrame(
        {
            "job_id": [7, 3],
            "submit": [10, 0],
            "requested": [100, 50],
            "actual_runtime": [80, 60],
            "req_cores": [4, 1],
            "req_gpu": [1, 0],
            "queue": ["long", "short"],
            "ewt": [7200, 600],
            "user": ["ann", "bob"],
            "slowdown": [1.0, 2.0],
        }
    ).to_csv(path, index=False)
    wl = load_csv(path)
    assert wl.job_id.tolist() == [3, 7]
    assert wl.walltime.tolist() == [50, 100]
    assert wl.runtime.tolist() == [60, 80]
    assert wl.units.tolist() == [1, 1]
    assert wl.resources == ("cores", "gpu")
    assert {q.name: q.ewt for q in wl.queues} == {"long": 7200, "short": 600}
    assert wl.meta["ignored_columns"] == ["slowdown"]


def test_results_jobs_table_loads_as_workload(tmp_path: Path) -> None:
    from dispatchlab import simulate

    wl = generate("gen:eurora-like:jobs=40,seed=2")
    res = simulate(wl, "eurora", "fifo")
    res.jobs.to_parquet(tmp_path / "jobs.parquet", index=False)
    back = load_parquet(tmp_path / "jobs.parquet")
    assert np.array_equal(back.submit, wl.submit)
    assert np.array_equal(back.runtime, wl.runtime)
    assert np.array_equal(back.req, wl.req)
    assert back.ewt().tolist() == wl.ewt().tolist()


FOREIGN_ERRORS = [
    ({"submit": [0], "walltime": [1]}, "runtime", "required column"),
    ({"submit": [0], "walltime": [1], "runtime": [1]}, "req_cores", "per-unit request"),
    (
        {"submit": ["soon"], "walltime": [1], "runtime": [1], "req_cores": [1]},
        "submit",
        "not an integer",
    ),
    (
        {"submit": [0.5], "walltime": [1], "runtime": [1], "req_cores": [1]},
        "submit",
        "not an integer",
    ),
    (
        {"submit": [-3], "walltime": [1], "runtime": [1], "req_cores": [1]},
        "submit",
        "negative submit",
    ),
]


@pytest.mark.parametrize(("columns", "field", "message"), FOREIGN_ERRORS)
def test_foreign_table_errors(
    tmp_path: Path, columns: dict[str, list[object]], field: str, message: str
) -> None:
    path = tmp_path / "bad.csv"
    pd.DataFrame(columns).to_csv(path, index=False)
    with pytest.raises(WorkloadError) as info:
        load_csv(path)
    assert message in str(info.value)
    assert info.value.field == field


def test_damaged_native_tables(tmp_path: Path) -> None:
    wl = generate("gen:eurora-like:jobs=5,seed=1")
    path = write_csv(wl, tmp_path / "w.csv")
    side = csv_sidecar(path)
    doc = json.loads(side.read_text())

    side.write_text(json.dumps({**doc, "format_version": 99}))
    with pytest.raises(WorkloadError, match="version 99"):
        load_csv(path)
    side.write_text("{not json")
    with pytest.raises(WorkloadError, match="not valid JSON"):
        load_csv(path)
    side.write_text(json.dumps({**doc, "queues": [{"name": "debug", "ewt": 1}]}))
    with pytest.raises(WorkloadError, match="not in the queue table"):
        load_csv(path)
    side.write_text(json.dumps({**doc, "resources": ["cores", "disk"]}))
    with pytest.raises(WorkloadError, match="req_disk"):
        load_csv(path)
    side.write_text(json.dumps(doc))
    frame = pd.read_csv(path)
    frame.iloc[::-1].to_csv(path, index=False)
    with pytest.raises(WorkloadError, match="not in submit order"):
        load_csv(path)
    (tmp_path / "x.parquet").write_text("PAR1 but not really")
    with pytest.raises(WorkloadError, match="not a readable Parquet"):
        load_parquet(tmp_path / "x.parquet")
    with pytest.raises(WorkloadError, match="file not found"):
        load_parquet(tmp_path / "none.parquet")
    with pytest.raises(WorkloadError, match="file not found"):
        load_csv(tmp_path / "none.csv")


def test_duplicate_names_cannot_be_stored(tmp_path: Path) -> None:
    wl = generate("gen:eurora-like:jobs=5,seed=1")
    from dataclasses import replace

    twin = replace(wl, users=("-", "-"))
    with pytest.raises(WorkloadError, match="appears twice"):
        write_parquet(twin, tmp_path / "w.parquet")
