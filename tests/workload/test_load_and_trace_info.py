"""Format detection, load options and slicing, ``trace_info``."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import numpy as np
import pytest

from dispatchlab.errors import WorkloadError
from dispatchlab.workload import (
    SwfOptions,
    detect_format,
    load_eurora,
    load_swf,
    load_workload,
    save_workload,
    trace_info,
    write_parquet,
)
from dispatchlab.workload.eurora import EuroraOptions
from dispatchlab.workload.trace_summary import human_duration
from tests.workload.conftest import DATA, assert_same_workload, shared

TINY = DATA / "swf" / "tiny.swf"
SAMPLE = DATA / "eurora" / "sample.log_crypt"


def test_detect_by_name_and_content(tmp_path: Path) -> None:
    assert detect_format(TINY) == "swf"
    assert detect_format(SAMPLE) == "eurora"
    plain = tmp_path / "trace"
    shutil.copy(TINY, plain)
    assert detect_format(plain) == "swf"
    no_header = tmp_path / "rows"
    no_header.write_text("\n".join(TINY.read_text().splitlines()[8:]))
    assert detect_format(no_header) == "swf"
    packed = tmp_path / "trace.gz"
    packed.write_bytes(gzip.compress(TINY.read_bytes()))
    assert detect_format(packed) == "swf"
    batch = tmp_path / "batch.txt"
    shutil.copy(SAMPLE, batch)
    assert detect_format(batch) == "eurora"
    table = tmp_path / "table.bin"
    write_parquet(load_eurora(SAMPLE), table)
    assert detect_format(table) == "parquet"
    assert load_workload(table).n_jobs == 7
    unknown = tmp_path / "notes.txt"
    unknown.write_text("hello\n")
    with pytest.raises(WorkloadError, match="cannot tell the format"):
        load_workload(unknown)


def test_load_errors(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match="file not found"):
        load_workload(tmp_path / "missing.swf")
    with pytest.raises(WorkloadError, match="is a folder"):
        load_workload(tmp_path)
    with pytest.raises(WorkloadError, match="unknown swf option") as info:
        load_workload(TINY, colour="red")
    assert info.value.field == "colour"
    with pytest.raises(WorkloadError, match="unknown eurora option"):
        load_workload(SAMPLE, procs="requested")
    with pytest.raises(WorkloadError, match="not both"):
        load_workload(TINY, swf=SwfOptions(), procs="requested")
    with pytest.raises(WorkloadError, match="not both"):
        load_workload(SAMPLE, eurora=EuroraOptions(), overrun="clip")
    path = save_workload(load_eurora(SAMPLE), tmp_path / "w.parquet")
    with pytest.raises(WorkloadError, match="take no options"):
        load_workload(path, overrun="clip")
    with pytest.raises(WorkloadError, match="unknown or unsupported format 'xls'"):
        load_workload(path, format="xls")
    with pytest.raises(WorkloadError, match="non-negative integer") as info:
        load_workload(TINY, skip=-1)
    assert info.value.field == "skip"
    with pytest.raises(WorkloadError, match="cannot tell the output format"):
        save_workload(load_eurora(SAMPLE), tmp_path / "w.xlsx")


def test_reader_options_and_objects() -> None:
    by_keyword = load_workload(TINY, drop_zero_runtime=True)
    by_object = load_workload(TINY, swf=SwfOptions(drop_zero_runtime=True))
    assert by_keyword.job_id.tolist() == by_object.job_id.tolist() == [1, 3, 6, 7]
    # the CLI passes swf= whatever the format; it is ignored for other formats
    eu = load_workload(SAMPLE, format=None, swf=SwfOptions(), overrun="clip")
    assert eu.meta["options"]["overrun"] == "clip"
    eu2 = load_workload(SAMPLE, eurora=EuroraOptions(overrun="clip"))
    assert np.array_equal(eu.runtime, eu2.runtime)


@pytest.mark.parametrize("spec", [str(SAMPLE), "gen:eurora-like:jobs=30,seed=1", "parquet"])
def test_skip_and_limit_in_every_format(tmp_path: Path, spec: str) -> None:
    if spec == "parquet":
        spec = str(save_workload(load_eurora(SAMPLE), tmp_path / "w.parquet"))
    full = load_workload(spec)
    part = load_workload(spec, skip=2, limit=3)
    assert part.job_id.tolist() == full.job_id[2:5].tolist()
    shift = int(full.submit[2])
    assert part.submit.tolist() == (full.submit[2:5] - shift).tolist()
    assert part.origin_unix == full.origin_unix + shift  # type: ignore[operator]
    assert part.meta["slice"] == {"skip": 2, "limit": 3, "time_shift": shift}
    everything = load_workload(spec, skip=0, limit=None)
    assert_same_workload(full, everything)
    assert load_workload(spec, skip=100).n_jobs == 0


def test_skip_and_limit_for_swf_go_through_the_options() -> None:
    part = load_workload(TINY, skip=1, limit=2)
    assert part.job_id.tolist() == [2, 3]
    rep = part.meta["load_report"]
    assert (rep["skipped"], rep["limited"]) == (1, 2)
    obj = load_workload(TINY, swf=SwfOptions(), skip=1, limit=2)
    assert obj.job_id.tolist() == [2, 3]


def test_save_workload_formats(tmp_path: Path) -> None:
    wl = load_eurora(SAMPLE)
    for name in ("w.parquet", "w.csv", "w.csv.gz"):
        assert_same_workload(wl, load_workload(save_workload(wl, tmp_path / name)))
    swf = load_workload(save_workload(wl, tmp_path / "w.swf"))
    assert swf.job_id.tolist() == wl.job_id.tolist()


# --------------------------------------------------------------------------- trace_info


def test_trace_info_swf() -> None:
    info = trace_info(TINY)
    assert info["format"] == "swf"
    assert info["jobs"] == 5
    assert info["header"]["MaxProcs"] == "16"
    assert (info["first_submit"], info["last_submit"], info["span_s"]) == (0, 100, 100)
    assert info["span"] == "1 min 40 s"
    assert (info["max_units"], info["max_procs"]) == (16, 16)
    # work: 4×50 + 2×0 + 8×60 (killed at 60) + 6×40 + 16×1000 = 16920 core-s
    assert info["work"] == {"cores": 16920.0}
    assert info["capacity"] == {"cores": 16}
    assert info["capacity_from"] == "header MaxProcs"
    assert info["offered_load"] == pytest.approx(16920 / (16 * 100))
    assert info["start"] == "2001-09-09T03:48:20+02:00"
    assert info["cleaning"] == {
        "records": 7,
        "skip_bad_lines": 0,
        "unknown_submit": 0,
        "negative_values": {
            "submit": 0,
            "run_time": 0,
            "alloc_procs": 0,
            "req_procs": 0,
            "req_time": 0,
        },
        "procs_fallback": 1,
        "drop_invalid": {"no_procs": 1, "unknown_runtime": 1},
        "drop_zero_runtime": 1,
        "missing_estimate": 1,
        "runtime_over_request": 1,
    }
    assert "header" not in info["load_report"]


def test_trace_info_with_platform_and_other_formats() -> None:
    info = trace_info(TINY, platform="nodes=2,cores=4")
    assert info["capacity"] == {"cores": 8}
    assert info["offered_load"] == pytest.approx(16920 / (8 * 100))
    eu = trace_info(SAMPLE, platform="eurora")
    assert eu["format"] == "eurora"
    assert eu["jobs"] == 7
    assert set(eu["offered_load_by_resource"]) == {"cores", "mem", "gpu", "mic"}
    assert eu["cleaning"]["duplicates"] == 0
    assert eu["queues"]["reservation"] == {"ewt": 1800, "jobs": 2}
    gen = trace_info("gen:eurora-like:jobs=40,seed=1")
    assert gen["format"] == "gen"
    assert gen["jobs"] == 40
    assert gen["offered_load"] is None


def test_trace_info_reports_load_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.swf"
    lines = TINY.read_text().splitlines()
    lines.append(
        "    8     -1   -1   10     1  -1  -1    1   60   -1  1    1   1   1     1   -1   -1    -1"
    )
    lines.append("this line is broken")
    bad.write_text("\n".join(lines) + "\n")
    info = trace_info(bad)
    assert "malformed SWF record" in info["error"]
    assert info["cleaning"]["skip_bad_lines"] == 1
    assert info["cleaning"]["unknown_submit"] == 1
    assert "jobs" not in info
    with pytest.raises(WorkloadError, match="file not found"):
        trace_info(tmp_path / "none.swf")


def test_trace_info_on_a_real_trace() -> None:
    info = trace_info(shared("swf", "KTH-SP2-1996-2.1-cln.swf.gz"))
    assert info["jobs"] == 28_475
    assert info["capacity"] == {"cores": 100}
    assert 0.6 < info["offered_load"] < 0.8
    assert info["cleaning"]["drop_invalid"]["no_procs"] == 1
    assert info["cleaning"]["drop_zero_runtime"] == 8


def test_human_duration() -> None:
    assert human_duration(0) == "0 s"
    assert human_duration(59.6) == "1 min 0 s"
    assert human_duration(93784) == "1 d 2 h 3 min 4 s"
    assert human_duration(86400) == "1 d 0 h 0 min 0 s"
    assert human_duration(-61) == "-1 min 1 s"


def test_swf_loader_still_behaves() -> None:
    wl = load_swf(TINY)
    assert wl.meta["load_report"]["jobs"] == 5
