"""What loading a trace did, counted the same way by every reader.

Each reader extends :class:`LoadReport` with one integer field per cleaning step it counts
(declared with :func:`count` where the count has a human label);
``workload.meta["load_report"]`` holds :meth:`LoadReport.as_dict`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar

from dispatchlab.errors import WorkloadError

#: Counts of a report that are no cleaning step: what was read, what was kept, and the
#: jobs whose width is what the system allocated (the request fallback is counted).
NOT_CLEANING = ("records", "jobs", "width_from_allocation")


def count(label: str) -> int:
    """A report field counting a cleaning step (0 at first), with its human ``label`` for
    :meth:`LoadReport.lines`."""
    return field(default=0, metadata={"label": label})


@dataclass(kw_only=True)
class LoadReport:
    """The file read, its records, and the jobs kept; a reader's subclass adds its counts."""

    #: What a record of the format is called in :meth:`lines`.
    READ: ClassVar[str] = "records"

    source: str
    records: int = 0
    jobs: int = 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)

    def lines(self) -> list[str]:
        """Human-readable lines, one per non-zero count."""
        out = [f"{self.records} {self.READ} read from {self.source}"]
        out += [f"{n} {self.label(k)}" for k, n in cleaning_counts(self.as_dict()).items()]
        out += self.notes()
        out.append(f"{self.jobs} jobs kept")
        return out

    @classmethod
    def label(cls, name: str) -> str:
        """The human label of count ``name``: its :func:`count` label, else its name spaced."""
        labels = {f.name: f.metadata.get("label") for f in fields(cls)}
        return labels.get(name) or name.replace("_", " ")

    def notes(self) -> list[str]:
        """Lines :meth:`lines` adds after the counts (none unless a reader has some)."""
        return []


def report_header(meta: Mapping[str, Any]) -> Mapping[str, Any]:
    """The file header's fields a reader kept in ``meta["load_report"]`` (empty if none)."""
    report = meta.get("load_report")
    header = report.get("header") if isinstance(report, Mapping) else None
    return header if isinstance(header, Mapping) else {}


def header_number(meta: Mapping[str, Any], key: str) -> int | None:
    """Header field ``key`` (see :func:`report_header`) as a positive whole number (its
    first word: ``MaxProcs: 128 cores`` gives 128); None when absent, empty, 0 or -1 (unknown);
    a WorkloadError naming the field when it is something else (``MaxNodes: four``)."""
    words = str(report_header(meta).get(key, "")).split()
    if not words or words[0] in ("0", "-1"):
        return None
    try:
        value = int(words[0])
    except ValueError:
        value = 0
    if value <= 0:
        report = meta.get("load_report")
        source = report.get("source") if isinstance(report, Mapping) else None
        raise WorkloadError(f"header value {' '.join(words)!r} is not a positive whole number",
                            source=source, field=key)
    return value


def cleaning_counts(report: Mapping[str, Any]) -> dict[str, int]:
    """The non-zero counts of what loading dropped or changed, from a report's dict."""
    return {k: int(v) for k, v in report.items()
            if isinstance(v, int) and not isinstance(v, bool) and v and k not in NOT_CLEANING}


def no_jobs_reason(meta: Mapping[str, Any]) -> str:
    """Why loading kept no job, from a workload's ``meta``: no record at all, ``--skip``
    past the last job, or the cleaning steps that dropped every record (with counts)."""
    report = meta.get("load_report")
    report = report if isinstance(report, Mapping) else {}
    dropped = ", ".join(f"{k}={v}" for k, v in cleaning_counts(report).items()
                        if k.startswith(("dropped_", "bad_lines")))
    sliced = meta.get("slice")
    skip = int(sliced.get("skip") or 0) if isinstance(sliced, Mapping) else 0
    skipped = int(report.get("skipped") or 0) or (skip and int(report.get("jobs") or 0))
    if skipped:
        option = f"--skip {skip}" if skip else "--skip"
        return (f"{option} passes all {skipped} job(s) left after cleaning"
                + (f" (cleaning dropped: {dropped})" if dropped else ""))
    if report and not report.get("records"):
        return "the file holds no record (empty, or a header only)"
    if dropped:
        return f"cleaning dropped every one of {report.get('records')} record(s) ({dropped})"
    return "empty file, header only, or --skip beyond the last job"
