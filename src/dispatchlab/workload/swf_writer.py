"""Write workloads and simulated schedules in the Standard Workload Format (SWF).

A **workload** is written as a log of what the trace recorded: field 3 (wait) is the
logged wait (-1 when unknown), field 4 the actual run time, status (field 11, as the
Parallel Workloads Archive defines it: 1 completed, 0 failed, 5 cancelled) the one the
accounting log gave the job (``meta["swf_status"]``: failed, timed-out and preempted
jobs 0, jobs cancelled while running 5), else 1 when the run fits the requested time and
0 when the job would be killed at it. A **schedule** (a
``Results.jobs`` table with the workload it ran) is written as the log of the simulated
machine: wait and run are the simulated ones, status 1 completed, 0 killed at the
wall-time, 5 never started (rejected), with wait/run/processors -1.

Both give 18 integer fields per job and a ``; Key: value`` header (``MaxJobs``,
``UnixStartTime``, ``TimeZoneString``, ``StartTime``/``EndTime``, ``MaxNodes``,
``MaxProcs``, queue names), so SWF tools (evalys, the PWA scripts, dispatchlab's own
reader) read them. Processors = units × cores per unit; requested memory (field 10) is
KB per processor when the workload asks for ``mem``. User, executable and queue fields
must be numbers: labels that are integers (workloads read from SWF) are written as they
are, other labels as their 1-based index in the workload's name table (queue names are
listed in the header). Reading a written workload back with :func:`load_swf` gives the
same job columns.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from dispatchlab.arrays import IntArray
from dispatchlab.atomic_output import atomic_output
from dispatchlab.errors import WorkloadError
from dispatchlab.keyvalue import parses
from dispatchlab.platform.platform import CORES, Platform
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.workload.load_report import report_header
from dispatchlab.workload.swf import FIELDS
from dispatchlab.workload.workload import Workload, zone_or_utc

#: SWF status codes written.
STATUS_KILLED = 0
STATUS_COMPLETED = 1
STATUS_CANCELLED = 5
STATUS_UNKNOWN = -1

#: Header fields copied from the SWF a workload was read from (when no platform is given).
_PASS_THROUGH = ("Computer", "Installation", "MaxNodes", "MaxProcs", "TimeZoneString")


def write_swf(
    workload: Workload,
    path: str | Path,
    *,
    platform: Platform | str | None = None,
    header: Mapping[str, object] | None = None,
    notes: Sequence[str] = (),
) -> Path:
    """Write ``workload`` as SWF (``.gz`` compresses); see the module docstring.

    ``platform`` (object, preset, inline spec or file) sets ``MaxNodes``/``MaxProcs``;
    ``header`` adds or overrides header fields; ``notes`` become ``; Note:`` lines.
    """
    wl = workload
    n = wl.n_jobs
    procs = _procs(wl)
    status = np.where(wl.runtime > wl.walltime, STATUS_KILLED, STATUS_COMPLETED)
    logged = wl.meta.get("swf_status")
    if isinstance(logged, Mapping):
        for code, ids in logged.items():
            status[np.isin(wl.job_id, np.asarray(ids, np.int64))] = int(code)
    table = _table(wl, wait=wl.logged_wait, run=wl.runtime, alloc=procs, status=status)
    last = int(wl.submit.max()) if n else 0
    return _write(path, table, _header(wl, platform, header, notes, end=last, kind="workload"))


def write_schedule_swf(
    jobs: pd.DataFrame,
    workload: Workload,
    path: str | Path,
    *,
    platform: Platform | str | None = None,
    header: Mapping[str, object] | None = None,
    notes: Sequence[str] = (),
    drop_rejected: bool = False,
) -> Path:
    """Write a simulated schedule (``Results.jobs`` of a run on ``workload``) as SWF.

    ``jobs`` needs ``job_id``, ``start`` and ``end`` (-1 when the job never started);
    ``killed`` is used when present. ``drop_rejected`` leaves never-started jobs out.
    """
    wl = workload
    missing = [c for c in ("job_id", "start", "end") if c not in jobs.columns]
    if missing:
        raise WorkloadError(
            f"schedule table lacks column '{missing[0]}' (expected a Results.jobs table)",
            field=missing[0],
        )
    if len(jobs) != wl.n_jobs:
        raise WorkloadError(
            f"schedule has {len(jobs)} rows, the workload {wl.n_jobs} jobs", source=wl.source
        )
    pos = pd.Index(wl.job_id).get_indexer(pd.Index(jobs["job_id"]))
    if (pos < 0).any() or len(np.unique(pos)) != len(pos):
        bad = jobs["job_id"].to_numpy()[pos < 0]
        what = f"job {int(bad[0])} is not in the workload" if len(bad) else "duplicate job ids"
        raise WorkloadError(
            f"schedule does not match the workload: {what}", source=wl.source, field="job_id"
        )
    start = np.full(wl.n_jobs, -1, np.int64)
    end = np.full(wl.n_jobs, -1, np.int64)
    start[pos] = jobs["start"].to_numpy(np.int64)
    end[pos] = jobs["end"].to_numpy(np.int64)
    ran = start >= 0
    finished = ran & (end >= start)
    if "killed" in jobs.columns:
        killed = np.zeros(wl.n_jobs, bool)
        killed[pos] = jobs["killed"].to_numpy(bool)
    else:
        killed = ran & (wl.runtime > wl.walltime)
    wait = np.where(ran, start - wl.submit, -1)
    run = np.where(finished, end - start, -1)
    status = np.select(
        [~ran, ~finished, killed],
        [STATUS_CANCELLED, STATUS_UNKNOWN, STATUS_KILLED],
        STATUS_COMPLETED,
    )
    table = _table(wl, wait=wait, run=run, alloc=np.where(ran, _procs(wl), -1), status=status)
    if drop_rejected:
        table = table[ran]
    last = (
        int(end[finished].max()) if finished.any() else (int(wl.submit.max()) if wl.n_jobs else 0)
    )
    return _write(
        path,
        table,
        _header(wl, platform, header, notes, end=last, kind="schedule", rows=len(table)),
    )


def _procs(wl: Workload) -> IntArray:
    cores = wl.req_of(CORES)
    return np.asarray(wl.units * np.maximum(cores, 1), dtype=np.int64)


def _table(
    wl: Workload, *, wait: IntArray, run: IntArray, alloc: IntArray, status: IntArray
) -> npt.NDArray[np.int64]:
    n = wl.n_jobs
    procs = _procs(wl)
    cores = wl.req_of(CORES)
    if "mem" in wl.resources:
        mem_mb = wl.req_of("mem")
        req_mem = np.where(
            (mem_mb > 0) & (cores > 0), -(-(mem_mb * 1024) // np.maximum(cores, 1)), -1
        )
    else:
        req_mem = np.full(n, -1, np.int64)
    unknown = np.full(n, -1, np.int64)
    cols = {
        "job_id": wl.job_id,
        "submit": wl.submit,
        "wait": wait,
        "run_time": run,
        "alloc_procs": alloc,
        "avg_cpu": unknown,
        "used_mem": unknown,
        "req_procs": procs,
        "req_time": wl.walltime,
        "req_mem": req_mem,
        "status": status,
        "user": _numeric_labels(wl.users, wl.user),
        "group": unknown,
        "executable": _numeric_labels(wl.apps, wl.app),
        "queue": _numeric_labels(tuple(q.name for q in wl.queues), wl.queue),
        "partition": unknown,
        "preceding_job": unknown,
        "think_time": unknown,
    }
    return np.column_stack([np.asarray(cols[f], dtype=np.int64) for f in FIELDS]).reshape(
        n, len(FIELDS)
    )


def _numeric_labels(table: Sequence[str], codes: IntArray) -> IntArray:
    """Labels as SWF numbers: their integer value when all are integers, else index + 1."""
    values = []
    for label in table:
        try:
            values.append(int(label))
        except ValueError:
            return np.asarray(codes + 1, dtype=np.int64)
    if not values:
        return np.full(len(codes), -1, np.int64)
    return np.asarray(np.array(values, dtype=np.int64)[codes], dtype=np.int64)


def _header(
    wl: Workload,
    platform: Platform | str | None,
    extra: Mapping[str, object] | None,
    notes: Sequence[str],
    *,
    end: int,
    kind: str,
    rows: int | None = None,
) -> list[tuple[str, str]]:
    n = wl.n_jobs if rows is None else rows
    fields: dict[str, str] = {"Version": "2.2"}
    source_header = _source_header(wl)
    for key in ("Computer", "Installation"):
        if key in source_header:
            fields[key] = source_header[key]
    fields["Conversion"] = f"dispatchlab ({kind} of {wl.source})"
    fields["MaxJobs"] = str(n)
    fields["MaxRecords"] = str(n)
    fields["Preemption"] = "No"
    tz_name = wl.timezone or source_header.get("TimeZoneString")
    if wl.origin_unix is not None:
        fields["UnixStartTime"] = str(int(wl.origin_unix))
    if tz_name:
        fields["TimeZoneString"] = tz_name
    if wl.origin_unix is not None:
        for key, unix in (("StartTime", wl.origin_unix), ("EndTime", wl.origin_unix + end)):
            text = _human_time(int(unix), tz_name)
            if text is not None:
                fields[key] = text
    if platform is not None:
        plat = resolve_platform(platform)
        fields["MaxNodes"] = str(plat.n_nodes)
        if CORES in plat.resources:
            fields["MaxProcs"] = str(int(plat.total[plat.resource_index(CORES)]))
    else:
        for key in ("MaxNodes", "MaxProcs"):
            if key in source_header:
                fields[key] = source_header[key]
    queue_names = [q.name for q in wl.queues]
    if not all(parses(int, q) for q in queue_names):
        fields["MaxQueues"] = str(len(queue_names))
    for key, value in (extra or {}).items():
        fields[str(key)] = str(value)
    out = list(fields.items())
    if "MaxQueues" in fields:
        out += [("Queue", f"{k + 1} {name}") for k, name in enumerate(queue_names)]
    out += [("Note", note) for note in notes]
    return out


def _source_header(wl: Workload) -> dict[str, str]:
    header = report_header(wl.meta)
    return {str(k): str(v) for k, v in header.items() if k in _PASS_THROUGH}


def _human_time(unix: int, tz_name: str | None) -> str | None:
    """``Mon Mar 31 09:08:42 CEST 2014``; None when the date cannot be written."""
    try:
        when = datetime.fromtimestamp(unix, zone_or_utc(tz_name))
        return when.strftime("%a %b %d %H:%M:%S %Z %Y")
    except (ValueError, OverflowError, OSError):
        return None


def _write(path: str | Path, table: npt.NDArray[np.int64], header: list[tuple[str, str]]) -> Path:
    p = Path(path)
    fh: IO[Any]
    with atomic_output(p) as tmp:
        raw = open(tmp, "wb")  # noqa: SIM115
        if p.name.endswith(".gz"):  # no name, mtime 0: the same schedule gives the same bytes
            fh = io.TextIOWrapper(
                gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0), encoding="utf-8"
            )
        else:
            fh = io.TextIOWrapper(raw, encoding="utf-8")
        with raw, fh:
            for key, value in header:
                fh.write(f"; {key}: {value}\n")
            fh.write(";\n")
            pd.DataFrame(table).to_csv(fh, sep=" ", header=False, index=False)
    return p
