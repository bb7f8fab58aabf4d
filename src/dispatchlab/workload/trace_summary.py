"""What a trace holds, for ``dispatchlab trace-info PATH``: size, span, load, cleaning.

The offered load is the work the jobs bring divided by what the machine could do over
the arrival span: ``Σ units × cores × min(runtime, walltime) / (capacity × span)`` (the
engine kills a job at its wall-time, so work past it is never offered). Capacity is the
given platform's cores, else the SWF header's ``MaxProcs``. ``cleaning`` tells what each
cleaning option drops or changes, counted on the raw records, so it is there even when
loading with the default options fails.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from dispatchlab.errors import WorkloadError
from dispatchlab.input_files import readable_path
from dispatchlab.platform.platform import CORES, Platform
from dispatchlab.traces.resolve import resolve_source
from dispatchlab.workload.generators.registry import is_generator_spec
from dispatchlab.workload.load import ACCOUNTING, detect_format, load_workload, reader_options
from dispatchlab.workload.load_report import NOT_CLEANING, header_number, no_jobs_reason
from dispatchlab.workload.swf import (
    FIELDS,
    SwfOptions,
    chosen_procs,
    read_header,
    read_swf_table,
)
from dispatchlab.workload.workload import Workload, zone_or_utc

_COL = {name: k for k, name in enumerate(FIELDS)}


def trace_info(
    path: str | Path,
    *,
    format: str | None = None,
    platform: Platform | str | None = None,
    **options: Any,
) -> dict[str, Any]:
    """A JSON-ready description of a trace (file or ``gen:`` spec); options go to the reader.

    When loading fails, the dict holds ``error`` (and for SWF the header and cleaning
    counts) instead of raising, so the CLI can still show what is wrong.
    """
    path = resolve_source(path)
    text = str(path)
    if format == "gen" or (format is None and is_generator_spec(text)):
        return _trace_info(path, text, "gen", platform, options)
    p = Path(path)
    with readable_path(p, lambda why: WorkloadError(why, source=text)) as real:
        info = _trace_info(real, text, format or detect_format(real), platform, options)
    if real != p:  # a pipe read into a temporary copy: name what the user gave
        if "error" in info:
            info["error"] = info["error"].replace(str(real), text)
        if "load_report" in info:
            info["load_report"]["source"] = text
    return info


def _trace_info(path: str | Path, text: str, fmt: str, platform: Platform | str | None,
                options: dict[str, Any]) -> dict[str, Any]:
    spec = fmt == "gen"
    p = Path(path)
    info: dict[str, Any] = {"source": text, "format": fmt}
    if fmt == "swf":
        swf_opts = options.get("swf") or reader_options(
            SwfOptions, {k: v for k, v in options.items() if k != "swf"}, "swf", p
        )
        header = read_header(p)
        info["header"] = header
        info["cleaning"] = swf_cleaning(p, swf_opts)
    try:
        wl = load_workload(path, format=None if spec else fmt, **options)
    except WorkloadError as exc:
        info["error"] = str(exc)
        return info
    info.update(describe_workload(wl, platform=platform))
    if not wl.n_jobs:
        info["error"] = f"{text}: no jobs read: {no_jobs_reason(wl.meta)}"
    report = wl.meta.get("load_report")
    if isinstance(report, Mapping):
        info["load_report"] = {k: v for k, v in report.items() if k != "header"}
        if fmt == "eurora":
            info["cleaning"] = eurora_cleaning(report)
        elif fmt in (*ACCOUNTING, "batsim"):
            info["cleaning"] = {k: v for k, v in report.items() if v and k not in (
                "source", "format", "header", *NOT_CLEANING)}
    return info


def describe_workload(wl: Workload, *, platform: Platform | str | None = None) -> dict[str, Any]:
    """Size, time span, largest job, queues and offered load of a loaded workload."""
    n = wl.n_jobs
    out: dict[str, Any] = {"jobs": n, "resources": list(wl.resources)}
    if n == 0:
        return out
    cores = wl.req_of(CORES)
    procs = wl.units * cores
    first, last = int(wl.submit.min()), int(wl.submit.max())
    span = last - first
    out.update(
        {
            "first_submit": first,
            "last_submit": last,
            "span_s": span,
            "span": human_duration(span),
            "max_units": int(wl.units.max()),
            "max_procs": int(procs.max()),
            "max_request": {r: int(wl.req[:, k].max()) for k, r in enumerate(wl.resources)},
            "runtime_s": {
                "mean": float(wl.runtime.mean()),
                "median": float(np.median(wl.runtime)),
                "max": int(wl.runtime.max()),
            },
            "walltime_s": {"mean": float(wl.walltime.mean()), "max": int(wl.walltime.max())},
            "runtime_over_walltime": int((wl.runtime > wl.walltime).sum()),
            "queues": {
                q.name: {"ewt": q.ewt, "jobs": int((wl.queue == k).sum())}
                for k, q in enumerate(wl.queues)
            },
            "users": len(np.unique(wl.user)),
            "apps": len(np.unique(wl.app)),
        }
    )
    if wl.origin_unix is not None:
        out["origin_unix"] = wl.origin_unix
        out["timezone"] = wl.timezone
        out["start"] = _iso(wl.origin_unix + first, wl.timezone)
        out["end"] = _iso(wl.origin_unix + last, wl.timezone)
    effective = np.minimum(wl.runtime, wl.walltime).astype(np.float64)
    work = wl.units.astype(np.float64)[:, None] * wl.req * effective[:, None]
    out["work"] = {r: float(work[:, k].sum()) for k, r in enumerate(wl.resources)}

    capacity: dict[str, int] = {}
    capacity_from = None
    if platform is not None:
        from dispatchlab.platform.resolve import resolve_platform

        plat = resolve_platform(platform)
        capacity = dict(zip(plat.resources, plat.total.tolist(), strict=True))
        capacity_from = f"platform {plat.name}"
    else:
        max_procs = header_number(wl.meta, "MaxProcs")
        if max_procs:
            capacity = {CORES: max_procs}
            capacity_from = "header MaxProcs"
    out["capacity"] = capacity
    out["capacity_from"] = capacity_from
    if capacity.get(CORES) and span > 0:
        out["offered_load"] = out["work"].get(CORES, 0.0) / (capacity[CORES] * span)
        out["offered_load_by_resource"] = {
            r: out["work"][r] / (capacity[r] * span) for r in wl.resources if capacity.get(r)
        }
    else:
        out["offered_load"] = None
    return out


def swf_cleaning(path: str | Path, options: SwfOptions | None = None) -> dict[str, Any]:
    """Per cleaning option of :class:`SwfOptions`, how many raw records it drops/changes."""
    opts = options or SwfOptions()
    try:  # the fast column-wise pass; the line-by-line one only to count bad lines
        data, _, bad = read_swf_table(path)
    except WorkloadError:
        data, _, bad = read_swf_table(path, skip_bad_lines=True)
    col = {name: data[:, k] for name, k in _COL.items()}
    procs, fallback = chosen_procs(col, opts.procs)
    no_procs = procs <= 0
    unknown_rt = col["run_time"] < 0
    valid = ~no_procs & ~unknown_rt
    return {
        "records": int(len(data) + bad),
        "skip_bad_lines": int(bad),
        "unknown_submit": int((col["submit"] < 0).sum()),
        "negative_values": {
            f: int(((col[f] < 0) & (col[f] != -1)).sum())
            for f in ("submit", "run_time", "alloc_procs", "req_procs", "req_time")
        },
        "procs_fallback": int(fallback.sum()),
        "drop_invalid": {
            "no_procs": int(no_procs.sum()),
            "unknown_runtime": int((unknown_rt & ~no_procs).sum()),
        },
        "drop_zero_runtime": int((valid & (col["run_time"] == 0)).sum()),
        "missing_estimate": int((valid & (col["req_time"] <= 0)).sum()),
        "runtime_over_request": int(
            (valid & (col["req_time"] > 0) & (col["run_time"] > col["req_time"])).sum()
        ),
    }


def eurora_cleaning(report: Mapping[str, Any]) -> dict[str, Any]:
    """What each :class:`EuroraOptions` choice drops or changes, from a load report."""
    return {
        "duplicates": report.get("duplicate_lines_dropped", 0),
        "skip_bad_lines": report.get("bad_lines_skipped", 0),
        "overrun": report.get("runtime_over_walltime", 0),
        "cores": report.get("cores_mismatch", 0),
    }


def human_duration(seconds: float) -> str:
    """``93784`` → ``"1 d 2 h 3 min 4 s"`` (leading zero units left out)."""
    s = round(seconds)
    if s < 0:
        return "-" + human_duration(-s)
    parts: list[str] = []
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        q, s = divmod(s, size)
        if q or parts:
            parts.append(f"{q} {unit}")
    parts.append(f"{s} s")
    return " ".join(parts)


def _iso(unix: int, tz_name: str | None) -> str:
    return datetime.fromtimestamp(unix, zone_or_utc(tz_name)).isoformat()
