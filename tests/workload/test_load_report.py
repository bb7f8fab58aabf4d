"""Every reader's load report counts the same way (``workload/load_report.py``)."""

from __future__ import annotations

from dataclasses import fields

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dispatchlab.errors import WorkloadError
from dispatchlab.workload.accounting import AccountingReport
from dispatchlab.workload.batsim_workload import BatsimReport
from dispatchlab.workload.eurora import EuroraReport
from dispatchlab.workload.load_report import NOT_CLEANING, LoadReport, cleaning_counts
from dispatchlab.workload.swf import SwfReport

REPORTS: list[type[LoadReport]] = [SwfReport, EuroraReport, AccountingReport, BatsimReport]


def _counters(cls: type[LoadReport]) -> list[str]:
    return [f.name for f in fields(cls) if f.type in ("int", int)
            and f.name not in NOT_CLEANING]


def _make(cls: type[LoadReport], counts: dict[str, int]) -> LoadReport:
    extra = {"format": "sacct"} if cls is AccountingReport else {}
    return cls(source="trace.log", records=11, jobs=7, **extra, **counts)  # type: ignore[arg-type]


@given(st.data())
def test_one_line_per_nonzero_count(data: st.DataObject) -> None:
    cls = data.draw(st.sampled_from(REPORTS))
    names = _counters(cls)
    counts = {n: data.draw(st.integers(0, 3), label=n) for n in names}
    report = _make(cls, counts)
    lines = report.lines()
    assert lines[0] == f"11 {cls.READ} read from trace.log"
    assert lines[-1] == "7 jobs kept"
    assert cleaning_counts(report.as_dict()) == {n: v for n, v in counts.items() if v}
    assert len(lines) == 2 + sum(1 for v in counts.values() if v)
    for line, (name, value) in zip(lines[1:], ((n, v) for n, v in counts.items() if v),
                                   strict=False):
        labels = {f.name: f.metadata.get("label") for f in fields(cls)}
        assert line == f"{value} {labels[name] or name.replace('_', ' ')}"


def test_labels_name_only_counts() -> None:
    assert len(_counters(SwfReport)) == 11 and len(_counters(EuroraReport)) == 10
    for cls in REPORTS:
        labelled = {f.name for f in fields(cls) if "label" in f.metadata}
        assert labelled <= set(_counters(cls)), cls.__name__
    assert SwfReport.label("limited") == "cut (--limit)"
    assert AccountingReport.label("steps_skipped") == "steps skipped"


def test_eurora_notes_follow_the_counts() -> None:
    report = EuroraReport(source="batch", records=3, jobs=2, duplicate_lines_dropped=1,
                          unknown_queues=["x", "y"])
    assert report.lines() == ["3 lines read from batch", "1 duplicate lines dropped",
                              "queues without a known expected wait: x, y", "2 jobs kept"]


def test_cleaning_counts_leave_out_what_is_no_count() -> None:
    report = {"source": "f", "records": 4, "jobs": 3, "flag": True, "states": {"a": 1},
              "dropped_x": 2, "zero": 0}
    assert cleaning_counts(report) == {"dropped_x": 2}


def test_header_number_reads_the_first_word_of_a_positive_field() -> None:
    from dispatchlab.workload.load_report import header_number, report_header

    meta = {"load_report": {"header": {"MaxProcs": "128 cores", "MaxNodes": "0",
                                       "Note": "x"}}}
    assert header_number(meta, "MaxProcs") == 128
    assert header_number(meta, "MaxNodes") is None
    with pytest.raises(WorkloadError, match="'x' is not a positive whole number"):
        header_number(meta, "Note")  # a value that is not a number is no unknown
    assert header_number(meta, "Absent") is None
    assert report_header({}) == {} and report_header({"load_report": "odd"}) == {}


def test_zone_or_utc_falls_back_to_utc() -> None:
    from dispatchlab.workload.workload import zone_or_utc

    assert str(zone_or_utc("Europe/Rome")) == "Europe/Rome"
    assert str(zone_or_utc(None)) == str(zone_or_utc("Not/AZone")) == "UTC"
