"""Reader for the Standard Workload Format (SWF) of the Parallel Workloads Archive.

The file is parsed column-wise (pandas' C parser) so half a million jobs load without a
Python object per job; only when something is wrong does a line-by-line pass run, to name
the exact file and line. Every cleaning step is an explicit option and is counted in the
:class:`SwfReport` stored in ``workload.meta["load_report"]``.
"""

from __future__ import annotations

import gzip
import io
import math
import warnings
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import BoolArray, FloatArray, IntArray
from dispatchlab.errors import WorkloadError
from dispatchlab.platform.platform import CORES
from dispatchlab.traces.resolve import resolve_source
from dispatchlab.workload.input_file import input_file
from dispatchlab.workload.limits import MAX_ID, MAX_SECONDS, limit_text
from dispatchlab.workload.load_report import LoadReport, count
from dispatchlab.workload.workload import Workload

#: SWF field names, in file order (1-based positions in the format definition).
FIELDS = (
    "job_id", "submit", "wait", "run_time", "alloc_procs", "avg_cpu", "used_mem",
    "req_procs", "req_time", "req_mem", "status", "user", "group", "executable",
    "queue", "partition", "preceding_job", "think_time",
)
_COL = {name: k for k, name in enumerate(FIELDS)}
_LIMITS = (
    *((f, MAX_SECONDS) for f in ("submit", "wait", "run_time", "req_time", "think_time")),
    *((f, MAX_ID) for f in (
        "job_id", "alloc_procs", "req_procs", "used_mem", "req_mem", "user", "group",
        "executable", "queue", "partition", "preceding_job")),
)

ProcsChoice = Literal["allocated", "requested", "max"]
MissingEstimate = Literal["runtime", "reject"]
UnitMode = Literal["pool", "nodes"]


@dataclass(frozen=True)
class SwfOptions:
    """How SWF records become jobs; each choice is reported with counts.

    - ``procs``: which processor count to use; when the chosen field is unknown the other
      one is used (counted as ``procs_fallback``).
    - ``missing_estimate``: a missing requested time becomes the run time, or is an error.
    - ``drop_invalid``: drop records with unknown submit time, no processor count or unknown
      run time (the standard cleaning); when false they are errors naming the line.
    - ``drop_zero_runtime``: drop jobs whose run time is 0.
    - ``units``: ``pool`` = each processor is a 1-core unit (units may share nodes);
      ``nodes`` = ``ceil(p / cores_per_node)`` exclusive whole nodes.
    - ``skip`` / ``limit``: slice counted after cleaning.
    - ``skip_bad_lines``: count and skip malformed lines instead of failing.
    - ``rebase``: shift times so the first kept job arrives at 0 (the origin moves along).
    """

    procs: ProcsChoice = "allocated"
    missing_estimate: MissingEstimate = "runtime"
    drop_invalid: bool = True
    drop_zero_runtime: bool = False
    units: UnitMode = "pool"
    cores_per_node: int | None = None
    skip: int = 0
    limit: int | None = None
    skip_bad_lines: bool = False
    rebase: bool = True

    def __post_init__(self) -> None:
        if self.procs not in ("allocated", "requested", "max"):
            raise WorkloadError(f"procs must be allocated, requested or max, not {self.procs!r}",
                                field="procs")
        if self.missing_estimate not in ("runtime", "reject"):
            raise WorkloadError("missing_estimate must be runtime or reject",
                                field="missing_estimate")
        if self.units not in ("pool", "nodes"):
            raise WorkloadError("units must be pool or nodes", field="units")
        if self.skip < 0 or (self.limit is not None and self.limit < 0):
            raise WorkloadError("skip and limit must be non-negative", field="skip/limit")
        if self.limit == 0:
            raise WorkloadError("must be at least 1 (limit = 0 keeps no job)", field="limit")
        if self.cores_per_node is not None and self.cores_per_node <= 0:
            raise WorkloadError("cores_per_node must be positive", field="cores_per_node")


@dataclass(kw_only=True)
class SwfReport(LoadReport):
    """What loading did: records read and what each cleaning step changed."""

    bad_lines_skipped: int = count("malformed lines skipped")
    dropped_unknown_submit: int = count("dropped: unknown submit time")
    dropped_no_procs: int = count("dropped: no processor count")
    dropped_unknown_runtime: int = count("dropped: unknown run time")
    dropped_zero_runtime: int = count("dropped: zero run time")
    procs_fallback: int = count("processor count taken from the other field")
    estimate_from_runtime: int = count("requested time missing, run time used")
    runtime_over_request: int = count("run time above requested time (killed at wall-time)")
    fractional_rounded: int = count("fractional times or processor counts rounded (times "
                                    "up, counts to the nearest)")
    skipped: int = count("skipped (--skip)")
    limited: int = count("cut (--limit)")
    header: dict[str, str] = field(default_factory=dict)


def chosen_procs(col: dict[str, FloatArray], option: str) -> tuple[FloatArray, BoolArray]:
    """Each record's processor count as the ``procs`` option reads it (``allocated``,
    ``requested`` or the larger), the other field where that one is ≤ 0; and which
    records took the other field."""
    alloc, reqp = col["alloc_procs"], col["req_procs"]
    if option == "allocated":
        procs, other = alloc, reqp
    elif option == "requested":
        procs, other = reqp, alloc
    else:
        procs = other = np.maximum(alloc, reqp)
    fallback = (procs <= 0) & (other > 0)
    return np.where(fallback, other, procs), fallback


def _open_text(path: Path) -> io.TextIOBase:
    # utf-8-sig: a UTF-8 byte-order mark would otherwise hide the first header line
    with open(path, "rb") as head:  # by name, or by magic for a piped copy (no name)
        gz = path.suffix == ".gz" or head.read(2) == b"\x1f\x8b"
    if gz:
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", errors="replace")
    return open(path, encoding="utf-8-sig", errors="replace")


def read_header(path: str | Path) -> dict[str, str]:
    """The ``; Key: value`` header fields at the top of an SWF file."""
    header: dict[str, str] = {}
    with _open_text(Path(path)) as fh:
        for line in fh:
            s = line.strip()
            if not s:
                continue
            if not s.startswith(";"):
                break
            key, sep, value = s.lstrip(";").partition(":")
            key = key.strip()
            # header keys are capitalised words (Version, MaxProcs, …); this skips
            # continuation lines such as a wrapped "http://…" address
            if sep and key[:1].isupper() and key.isalnum() and key not in header:
                header[key] = value.strip()
    return header


def read_swf_table(path: str | Path, *, skip_bad_lines: bool = False) -> tuple[
        npt.NDArray[np.float64], IntArray, int]:
    """All records as an ``n × 18`` float matrix, their line numbers, and bad lines skipped."""
    p = Path(path)
    if not p.exists():
        raise WorkloadError("file not found", source=str(p))
    if not skip_bad_lines:
        # numpy's C reader: as fast as pandas' here, without importing pandas (~0.3 s of
        # every simulate); any irregularity goes to the exact pass below, which names it
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "input contained no data": checked below
                data = np.loadtxt(p, dtype=np.float64, comments=";", encoding="utf-8-sig",
                                  ndmin=2)
            if data.shape[1] == len(FIELDS) and np.isfinite(data).all():
                return data, np.empty(0, np.int64), 0
        except ValueError:
            pass
    rows, lines, bad = _parse_lines(p, skip_bad_lines)
    data = np.array(rows, dtype=np.float64).reshape(-1, len(FIELDS))
    return data, np.array(lines, dtype=np.int64), bad


def _parse_lines(path: Path, skip_bad: bool) -> tuple[list[list[float]], list[int], int]:
    """Slow exact pass: validates every line, names the first bad one unless skipping."""
    rows: list[list[float]] = []
    lines: list[int] = []
    bad = 0
    with _open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            s = line.split(";", 1)[0].strip()
            if not s:
                continue
            parts = s.split()
            problem = None
            values: list[float] = []
            if len(parts) != len(FIELDS):
                problem = f"expected {len(FIELDS)} fields, found {len(parts)}"
            else:
                for name, tok in zip(FIELDS, parts, strict=True):
                    try:
                        v = float(tok)
                    except ValueError:
                        problem = f"field '{name}' is not a number: {tok!r}"
                        break
                    if not math.isfinite(v):
                        problem = f"field '{name}' is not finite: {tok!r}"
                        break
                    values.append(v)
            if problem is not None:
                if skip_bad:
                    bad += 1
                    continue
                raise WorkloadError(f"malformed SWF record: {problem}", source=str(path),
                                    line=lineno)
            rows.append(values)
            lines.append(lineno)
    return rows, lines, bad


def _line_numbers(path: Path) -> Iterator[int]:
    with _open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            if line.split(";", 1)[0].strip():
                yield lineno


def load_swf(path: str | Path, options: SwfOptions | None = None) -> Workload:
    """Load an SWF file (plain or ``.gz``, or ``trace:NAME``) as a :class:`Workload` of
    1-resource jobs."""
    opts = options or SwfOptions()
    p = input_file(resolve_source(path))
    src = str(p)
    header = read_header(p)
    data, linemap, bad = read_swf_table(p, skip_bad_lines=opts.skip_bad_lines)
    rep = SwfReport(source=src, records=len(data) + bad, bad_lines_skipped=bad, header=header)

    def line_of(row: int) -> int:
        if len(linemap):
            return int(linemap[row])
        for k, ln in enumerate(_line_numbers(p)):
            if k == row:
                return ln
        return -1

    def fail(row: int, fld: str, msg: str) -> WorkloadError:
        return WorkloadError(msg, source=src, line=line_of(row), job=int(data[row, 0]),
                             field=fld)

    col = {name: data[:, k] for name, k in _COL.items()}
    rows = np.arange(len(data))
    submit = col["submit"]
    for fld in ("submit", "run_time", "alloc_procs", "req_procs", "req_time"):
        v = col[fld]
        neg = (v < 0) & (v != -1)
        if neg.any():
            raise fail(int(rows[neg][0]), fld, f"negative value {v[neg][0]:g}")
    for fld, limit in _LIMITS:
        v = col[fld]
        big = np.abs(v) >= limit if limit == MAX_ID else np.abs(v) > limit
        if big.any():
            raise fail(int(rows[big][0]), fld, f"value {v[big][0]:g} is beyond "
                       f"{limit_text(limit)}")

    procs, fallback = chosen_procs(col, opts.procs)
    rep.procs_fallback = int(fallback.sum())

    keep = np.ones(len(data), dtype=bool)
    no_procs = procs <= 0
    unknown_rt = col["run_time"] < 0
    unknown_submit = submit < 0
    for mask, fld, attr, msg in (
        (unknown_submit, "submit", "dropped_unknown_submit", "unknown submit time"),
        (no_procs, "alloc_procs", "dropped_no_procs", "no processor count"),
        (unknown_rt, "run_time", "dropped_unknown_runtime", "unknown run time"),
    ):
        mask = mask & keep
        if mask.any():
            if not opts.drop_invalid:
                raise fail(int(rows[mask][0]), fld,
                           f"{msg} (load with drop_invalid / --swf-drop-invalid to drop "
                           f"such jobs)")
            setattr(rep, attr, int(mask.sum()))
            keep &= ~mask
    runtime = np.ceil(np.maximum(col["run_time"], 0)).astype(np.int64)
    if opts.drop_zero_runtime:
        zero = keep & (runtime == 0)
        rep.dropped_zero_runtime = int(zero.sum())
        keep &= ~zero

    req_time = np.ceil(col["req_time"]).astype(np.int64)
    missing = keep & (req_time <= 0)
    if missing.any():
        if opts.missing_estimate == "reject":
            raise fail(int(rows[missing][0]), "req_time",
                       "requested time missing (use --swf-missing-estimate runtime)")
        rep.estimate_from_runtime = int(missing.sum())
        req_time = np.where(missing, np.maximum(runtime, 1), req_time)
    req_time = np.maximum(req_time, 1)

    idx = np.flatnonzero(keep)
    order = np.lexsort((col["job_id"][idx], submit[idx]))
    idx = idx[order]
    rep.skipped = min(opts.skip, len(idx))
    idx = idx[opts.skip:]
    if opts.limit is not None and len(idx) > opts.limit:
        rep.limited = len(idx) - opts.limit
        idx = idx[: opts.limit]
    rep.runtime_over_request = int((runtime[idx] > req_time[idx]).sum())
    rep.jobs = len(idx)
    whole = [col[f][idx] for f in ("submit", "wait", "run_time", "req_time")] + [procs[idx]]
    rep.fractional_rounded = int(np.any([v != np.floor(v) for v in whole], axis=0).sum()) \
        if len(idx) else 0

    procs_i = np.rint(procs[idx]).astype(np.int64)
    if opts.units == "pool":
        units = procs_i
        cores = np.ones(len(idx), np.int64)
    else:
        cpn = opts.cores_per_node or cores_per_node_from_header(header)
        if cpn is None:
            raise WorkloadError("whole-node mode needs cores per node (give cores_per_node or "
                                "a header with MaxProcs and MaxNodes)", source=src,
                                field="cores_per_node")
        units = -(-procs_i // cpn)
        cores = np.full(len(idx), cpn, np.int64)

    sub = np.rint(submit[idx]).astype(np.int64)
    shift = int(sub[0]) if (opts.rebase and len(sub)) else 0
    origin = _int_or_none(header.get("UnixStartTime"))
    if origin is not None:
        origin += shift
    wait = col["wait"][idx]
    meta: dict[str, Any] = {"format": "swf", "options": asdict(opts),
                            "load_report": rep.as_dict(), "time_shift": shift}
    return Workload.from_columns(
        job_id=np.rint(col["job_id"][idx]).astype(np.int64),
        submit=sub - shift,
        walltime=req_time[idx],
        runtime=runtime[idx],
        units=units,
        req={CORES: cores},
        queue=np.rint(col["queue"][idx]).astype(np.int64),
        user=np.rint(col["user"][idx]).astype(np.int64),
        app=np.rint(col["executable"][idx]).astype(np.int64),
        logged_wait=np.where(wait >= 0, np.rint(wait), -1).astype(np.int64),
        origin_unix=origin,
        timezone=swf_timezone(header, src),
        source=src,
        meta=meta,
    )


def swf_timezone(header: dict[str, str], source: str) -> str | None:
    """The header's time zone: ``TimeZoneString`` (must be a known IANA name), else the
    older ``TimeZone`` offset in seconds east of UTC as a fixed zone (``Etc/GMT-1`` for
    +3600), else None."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    name = header.get("TimeZoneString")
    if name:
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            raise WorkloadError(f"unknown time zone {name!r} in the header (an IANA name "
                                "such as Europe/Stockholm)", source=source,
                                field="TimeZoneString") from None
        return name
    offset = _int_or_none(header.get("TimeZone"))
    if offset is None:
        return None
    if offset % 3600 or abs(offset) > 14 * 3600:
        raise WorkloadError(f"TimeZone offset {offset} s is not a whole number of hours "
                            "within ±14 h; add a TimeZoneString", source=source,
                            field="TimeZone")
    hours = offset // 3600
    return "UTC" if hours == 0 else f"Etc/GMT{-hours:+d}"


def cores_per_node_from_header(header: dict[str, str]) -> int | None:
    """``MaxProcs / MaxNodes`` when both are in the header and divide evenly (else rounded up)."""
    procs = _int_or_none(header.get("MaxProcs"))
    nodes = _int_or_none(header.get("MaxNodes"))
    if not procs or not nodes:
        return None
    return max(1, -(-procs // nodes))


def _int_or_none(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(text.split()[0])
    except (ValueError, IndexError):
        return None
