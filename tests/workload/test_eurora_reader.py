"""Eurora batch reader: interpretation of every field, anomalies, errors, real batches."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from dispatchlab.errors import WorkloadError
from dispatchlab.workload import (
    EuroraOptions,
    list_eurora_batches,
    load_eurora,
    load_power_predictions,
    load_system_queues,
    load_workload,
)
from dispatchlab.workload.eurora import EURORA_QUEUES
from tests.workload.conftest import DATA, shared

SAMPLE = DATA / "eurora" / "sample.log_crypt"
GOOD = (
    "498716;xxx;yyy;debug;2014-03-31 11:24:53__34;1;0;0;4194304#__2014-03-31 11:25:16;"
    "2014-03-31 11:26:36;1;1;4;00:30;NA;NA;COMPLETED;0"
)


def cest(text: str) -> int:
    """Unix time of a Eurora date-time in spring 2014 (CEST, UTC+2), computed by hand."""
    return int(datetime.fromisoformat(text + "+02:00").timestamp())


def write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "batch.log_crypt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def row(wl: object, job_id: int) -> dict[str, object]:
    frame = wl.to_frame()  # type: ignore[attr-defined]
    rec: dict[str, object] = frame[frame["job_id"] == job_id].iloc[0].to_dict()
    return rec


def test_sample_fields() -> None:
    wl = load_eurora(SAMPLE)
    assert len(wl) == 7
    assert wl.resources == ("cores", "mem", "gpu", "mic")
    assert wl.origin_unix == cest("2014-03-31 09:08:42")
    assert wl.timezone == "Europe/Rome"
    assert [q.name for q in wl.queues][:5] == list(EURORA_QUEUES)
    assert wl.ewt().tolist() == [86400, 1800, 21600, 3600, 21600, 3600, 1800]

    debug = row(wl, 498716)
    assert debug["submit"] == cest("2014-03-31 11:24:53") - wl.origin_unix
    assert (debug["runtime"], debug["walltime"], debug["logged_wait"]) == (80, 1800, 23)
    assert (debug["units"], debug["req_cores"], debug["req_mem"]) == (1, 1, 4096)
    assert (debug["req_gpu"], debug["req_mic"]) == (0, 0)
    assert (debug["queue"], debug["user"], debug["app"]) == ("debug", "yyy", "xxx")

    shared_nodes = row(wl, 500219)  # eight 2-core units on three nodes
    assert (shared_nodes["units"], shared_nodes["req_cores"], shared_nodes["req_mem"]) == (
        8,
        2,
        4096,
    )
    assert shared_nodes["runtime"] == 6730

    gpu = row(wl, 498519)
    assert (gpu["units"], gpu["req_cores"], gpu["req_gpu"], gpu["req_mem"]) == (4, 16, 2, 14336)
    mic = row(wl, 500255)
    assert (mic["req_cores"], mic["req_gpu"], mic["req_mic"], mic["req_mem"]) == (2, 0, 1, 2048)

    longpar = row(wl, 498511)
    assert longpar["queue"] == "np_longpar"
    assert longpar["runtime"] == cest("2014-04-02 02:56:19") - cest("2014-04-01 22:01:45")
    assert longpar["logged_wait"] == cest("2014-04-01 22:01:45") - cest("2014-03-31 09:08:42")
    assert longpar["walltime"] == 8 * 3600

    assert row(wl, 498516)["queue"] == "reservation"
    assert row(wl, 500509)["units"] == 11

    rep = wl.meta["load_report"]
    assert rep["reservation_queue"] == 2
    assert rep["app_types"] == {"0": 6, "2": 1}
    assert rep["jobs"] == rep["records"] == 7
    assert wl.meta["format"] == "eurora"


def test_dst_change_is_counted_in_real_seconds(tmp_path: Path) -> None:
    # 2014-03-30 02:00 CET became 03:00 CEST: 01:30 -> 03:30 is one hour.
    line = (
        "1;a;u;debug;2014-03-30 01:00:00__1;1;0;0;1048576#__2014-03-30 01:30:00;"
        "2014-03-30 03:30:00;1;1;1;04:00;NA;NA;COMPLETED;0"
    )
    wl = load_eurora(write(tmp_path, line))
    assert wl.runtime.tolist() == [3600]
    assert wl.logged_wait.tolist() == [1800]


def test_duplicate_lines(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD, GOOD, GOOD.replace("498716", "498717"))
    wl = load_eurora(path)
    assert wl.job_id.tolist() == [498716, 498717]
    assert wl.meta["load_report"]["duplicate_lines_dropped"] == 1
    with pytest.raises(WorkloadError, match="duplicate of line 1") as info:
        load_eurora(path, EuroraOptions(duplicates="error"))
    assert info.value.line == 2
    conflicting = write(tmp_path, GOOD, GOOD.replace("00:30", "00:40"))
    with pytest.raises(WorkloadError, match="also used on line 1 with different fields"):
        load_eurora(conflicting)


def test_overrun_choices(tmp_path: Path) -> None:
    line = GOOD.replace("00:30", "00:01")  # runs 80 s, asked 60 s
    path = write(tmp_path, line)
    keep = load_eurora(path)
    assert (keep.runtime[0], keep.walltime[0]) == (80, 60)
    assert keep.meta["load_report"]["runtime_over_walltime"] == 1
    clip = load_eurora(path, EuroraOptions(overrun="clip"))
    assert (clip.runtime[0], clip.walltime[0]) == (60, 60)
    assert clip.meta["load_report"]["runtime_clipped"] == 1
    extend = load_eurora(path, EuroraOptions(overrun="extend"))
    assert (extend.runtime[0], extend.walltime[0]) == (80, 80)


def test_cores_from_requested_total(tmp_path: Path) -> None:
    # synthetic batches: two chunks of 2 cores, 32 cores requested in total
    line = (
        "943936;xxx;yyy;parallel;2014-04-15 07:36:41__58;2;2;0;1048576#40;2;2;0;1048576#__"
        "2014-04-15 07:39:23;2014-04-15 09:32:46;2;32;2;03:50;NA;NA;COMPLETED;0"
    )
    path = write(tmp_path, line)
    chunks = load_eurora(path)
    assert chunks.req_of("cores").tolist() == [2]
    assert chunks.meta["load_report"]["cores_mismatch"] == 1
    requested = load_eurora(path, EuroraOptions(cores="requested"))
    assert requested.req_of("cores").tolist() == [16]
    assert requested.req_of("gpu").tolist() == [2]


def test_queue_table_and_unknown_queue(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace(";debug;", ";special;"))
    wl = load_eurora(path, EuroraOptions(queues={"debug": 60}))
    assert {q.name: q.ewt for q in wl.queues}["debug"] == 60
    assert wl.meta["load_report"]["unknown_queues"] == ["special"]
    assert wl.queues[wl.queue[0]].name == "special"


def test_power_predictions(tmp_path: Path) -> None:
    pred = tmp_path / "power_predictions"
    pred.write_text("498716.node129;93.5\n498459.node129;31.0\n", encoding="utf-8")
    assert load_power_predictions(pred) == {498716: 93.5, 498459: 31.0}
    path = write(tmp_path, GOOD, GOOD.replace("498716", "498717"))
    wl = load_eurora(path, EuroraOptions(power_predictions=str(pred)))
    assert wl.power[0] == 93.5
    assert np.isnan(wl.power[1])
    assert wl.meta["load_report"]["power_predicted"] == 1
    bad = tmp_path / "bad_pred"
    bad.write_text("1;2\nx;3\n", encoding="utf-8")
    with pytest.raises(WorkloadError, match="bad_pred:2"):
        load_power_predictions(bad)


BAD_LINES = [
    (GOOD.replace("__", ";", 1), None, "two '__' markers"),
    (GOOD.replace("xxx;", "", 1), None, "5 ';'-separated fields"),
    (GOOD.split(";00:30")[0], None, "at least 6 fields"),
    (GOOD.replace("498716", "49x716"), "job_id", "not an integer"),
    (GOOD.replace("498716", "-4"), "job_id", "negative job id"),
    (GOOD.replace("2014-03-31 11:24:53", "2014-13-31 11:24:53"), "arrival", "not a date-time"),
    (GOOD.replace("2014-03-31 11:25:16", "2014-03-31 11:20:00"), "start", "before the arrival"),
    (GOOD.replace("2014-03-31 11:26:36", "2014-03-31 11:25:00"), "end", "before the start"),
    (GOOD.replace(";1;1;4;", ";0;1;4;"), "requested_nodes", "at least one node"),
    (GOOD.replace(";1;1;4;", ";-1;1;4;"), "requested_nodes", "negative value"),
    (GOOD.replace("00:30", "half an hour"), "walltime", "HH:MM"),
    (GOOD.replace("00:30", "00:75"), "walltime", "HH:MM"),
    (GOOD.replace("00:30", "00:00"), "walltime", "positive"),
    (GOOD.replace("34;1;0;0;4194304#", ""), "used_nodes", "no used nodes"),
    (GOOD.replace("34;1;0;0;4194304#", "34;1;0;4194304#"), "used_nodes", "node;cores"),
    (GOOD.replace("34;1;0;0;4194304#", "34;1;0;0;-5#"), "used_nodes", "negative"),
    (GOOD.replace(";debug;", ";;"), "queue", "empty queue"),
]


@pytest.mark.parametrize(("bad", "field", "message"), BAD_LINES)
def test_malformed_line_names_file_and_line(
    tmp_path: Path, bad: str, field: str | None, message: str
) -> None:
    path = write(tmp_path, GOOD.replace("498716", "1"), "", bad)
    with pytest.raises(WorkloadError) as info:
        load_eurora(path)
    err = info.value
    assert message in str(err)
    assert (err.source, err.line) == (str(path), 3)
    assert str(err).startswith(f"{path}:3")
    assert err.field == field
    skipped = load_eurora(path, EuroraOptions(skip_bad_lines=True))
    assert len(skipped) == 1
    assert skipped.meta["load_report"]["bad_lines_skipped"] == 1


def test_missing_file_folder_empty_and_options(tmp_path: Path) -> None:
    with pytest.raises(WorkloadError, match="file not found"):
        load_eurora(tmp_path / "none.log_crypt")
    with pytest.raises(WorkloadError, match="is a folder"):
        load_eurora(tmp_path)
    with pytest.raises(WorkloadError, match="no jobs"):
        load_eurora(write(tmp_path, "", ""))
    for kwargs, fld in (
        ({"overrun": "maybe"}, "overrun"),
        ({"duplicates": "x"}, "duplicates"),
        ({"cores": "x"}, "cores"),
        ({"timezone": "Mars/Olympus"}, "timezone"),
        ({"queues": {"debug": -1}}, "queues"),
    ):
        with pytest.raises(WorkloadError) as info:
            EuroraOptions(**kwargs)  # type: ignore[arg-type]
        assert info.value.field == fld


def test_system_queues_and_batch_listing(tmp_path: Path) -> None:
    queues = tmp_path / "system_queues"
    queues.write_text("debug 3600\nparallel 21600\n\n", encoding="utf-8")
    assert load_system_queues(queues) == {"debug": 3600, "parallel": 21600}
    queues.write_text("debug one hour\n", encoding="utf-8")
    with pytest.raises(WorkloadError, match="system_queues:1"):
        load_system_queues(queues)
    for size in ("100", "50", "1000"):
        (tmp_path / "h" / size).mkdir(parents=True)
        for k in (10, 9):
            (tmp_path / "h" / size / f"b_{k}.log_crypt").write_text(GOOD)
    (tmp_path / "h" / "50" / "notes.txt").write_text("x")
    names = [str(p.relative_to(tmp_path / "h")) for p in list_eurora_batches(tmp_path / "h")]
    assert names == [
        "50/b_9.log_crypt",
        "50/b_10.log_crypt",
        "100/b_9.log_crypt",
        "100/b_10.log_crypt",
        "1000/b_9.log_crypt",
        "1000/b_10.log_crypt",
    ]
    with pytest.raises(WorkloadError, match="not a folder"):
        list_eurora_batches(tmp_path / "nope")


def test_shared_system_queues_match_the_builtin_table() -> None:
    path = shared("eurora", "system_configs", "system_queues")
    assert load_system_queues(path) == EURORA_QUEUES


@pytest.mark.parametrize("size", [50, 100, 200, 400, 600, 800, 1000])
def test_historical_batches_load(size: int) -> None:
    folder = shared("eurora", "job_instances", "historical_traces", str(size))
    batches = list_eurora_batches(folder)
    assert len(batches) >= 28
    for path in (batches[0], batches[len(batches) // 2], batches[-1]):
        wl = load_workload(path)
        rep = wl.meta["load_report"]
        assert rep["bad_lines_skipped"] == 0
        # every batch has `size` jobs; a few list every line twice (dropped, reported)
        assert len(wl) == size or (rep["duplicate_lines_dropped"] > 0 and len(wl) >= size)
        assert wl.submit[0] == 0
        assert (wl.logged_wait >= 0).all()
        assert (wl.req_of("cores") > 0).all()
        assert set(wl.req_of("gpu").tolist()) <= {0, 1, 2}
        assert not ((wl.req_of("gpu") > 0) & (wl.req_of("mic") > 0)).any()


def test_doubled_batch_is_reported() -> None:
    path = shared(
        "eurora", "job_instances", "historical_traces", "400", "hist_400_20140402_194222.log_crypt"
    )
    wl = load_eurora(path)
    rep = wl.meta["load_report"]
    assert (rep["records"], rep["duplicate_lines_dropped"], len(wl)) == (800, 396, 404)


@pytest.mark.parametrize("jobs", [50, 100, 200])
def test_synthetic_batches_load(jobs: int) -> None:
    folder = shared("eurora", "job_instances", "synthetic_workloads", f"jobs_{jobs}")
    for window in sorted(p for p in folder.iterdir() if p.is_dir())[:3]:
        path = list_eurora_batches(window)[0]
        wl = load_eurora(path)
        assert len(wl) == jobs
        assert wl.submit.max() < int(window.name.removeprefix("ws_"))


@pytest.mark.slow
def test_every_eurora_batch_loads() -> None:  # about 4 s alone, 10 s on a busy machine
    roots = [shared("eurora", "job_instances", k) for k in ("historical_traces",
                                                            "synthetic_workloads")]
    batches = [p for root in roots for p in list_eurora_batches(root)]
    assert len(batches) == 1172
    total = sum(len(load_eurora(p)) for p in batches)
    assert total == 208_318
