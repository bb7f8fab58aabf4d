"""Reader for PBS Professional / OpenPBS / Torque accounting logs (``server_priv/accounting``).

One record per line, ``MM/DD/YYYY HH:MM:SS;T;ID;key=value key=value …``, ``T`` the record
type. The job's ``E`` (ended) record holds everything a replay needs, as the PBS admin
guides define it:

- ``qtime`` (queued; ``ctime`` when absent) → submit, ``start``, ``end`` (Unix seconds);
- ``resources_used.walltime`` → run time (else end − start); ``Resource_List.walltime``
  → requested time (missing: the run time, counted); both ``[[hh:]mm:]ss``;
- width: what was allocated, as each server writes it (``width_from_allocation``):
  Cray ``Resource_List.mppwidth`` processing elements × ``mppdepth`` CPUs each (ALPS
  reserves exactly these; ``exec_host`` names only the MOM node there), else Torque's
  ``total_execution_slots`` (4.2.9 and later), else the ``exec_host`` slots: one per
  ``host/N`` entry, ``host/0-27`` ranges (Torque 5+), ``host/0*4`` counts (PBS Pro);
  a record without any of these falls back on the request (``width_from_request``):
  the larger of the chunks' sum (PBS Pro ``Resource_List.select=2:ncpus=4+1:ncpus=8``,
  Torque ``Resource_List.nodes=14:ppn=8+16:ppn=1``, a host name or no ``ppn`` counting
  1) and ``Resource_List.ncpus`` (Torque fills in 1 unasked); nodes: Cray's
  ``mppwidth / mppnppn`` (rounded up), else Torque's ``unique_node_count``, else
  ``Resource_List.nodect``, else the ``exec_host`` hosts, else the chunks' count;
- ``queue`` → queue, ``user`` → user, ``jobname`` → application;
- ``Exit_status`` 0 → completed; otherwise failed, or timed out when the run reached the
  requested time (counted as ``kept_failed`` / ``kept_timeout``).

An ``E`` record without ``start`` (a job deleted while queued), and a job with ``D``
(deleted) or ``A`` (aborted) records but no ``E`` one, never ran: dropped and counted.
``Q``/``S``/``R``/``D``/``A`` and other records are counted in ``other_records_skipped``.
Array jobs: ``123[4].server`` is subjob 4 of array 123 (gets a fresh job id, counted);
the array's own ``123[].server`` record is a summary and is skipped. A malformed line is
an error naming it (or skipped and counted with ``skip_bad_lines``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from dispatchlab.errors import WorkloadError
from dispatchlab.workload.accounting import (
    AccountingOptions,
    AccountingReport,
    JobRecords,
    build_workload,
)
from dispatchlab.workload.delimited import read_bytes
from dispatchlab.workload.input_file import input_file
from dispatchlab.workload.workload import UNKNOWN, Workload

_RECORD = re.compile(r"^(\d\d/\d\d/\d{4} \d\d:\d\d:\d\d);([A-Za-z]);([^;]*);(.*)$")
_JOB_ID = re.compile(r"^(\d+)(?:\[(\d*)\])?(?:\..*)?$")
_CHUNK_CPUS = re.compile(r"ncpus=(\d+)")
_PPN = re.compile(r"ppn=(\d+)")


def parse_pbs_duration(text: str) -> int:
    """Seconds of a PBS duration ``[[hours:]minutes:]seconds[.fraction]`` (rounded up)."""
    return int(-(-pbs_duration_seconds(text) // 1))


def pbs_duration_seconds(text: str) -> float:
    """Seconds of a PBS duration, a fraction of a second kept (the reader rounds it up
    and counts it)."""
    parts = text.strip().split(":")
    if not 1 <= len(parts) <= 3 or not all(p.replace(".", "", 1).isdigit() for p in parts):
        raise ValueError(f"not a PBS duration: {text!r} (expected [[hh:]mm:]ss)")
    if any(float(p) >= 60 for p in parts[1:]):
        raise ValueError(f"minutes and seconds must be below 60 in {text!r}")
    seconds = 0.0
    for part in parts:
        seconds = seconds * 60 + float(part)
    return seconds


def _attributes(text: str) -> dict[str, str]:
    """``key=value`` pairs; a token without ``=`` continues the previous value."""
    out: dict[str, str] = {}
    last = None
    for token in text.split():
        key, sep, value = token.partition("=")
        if sep and key:
            out[key] = value
            last = key
        elif last is not None:
            out[last] += " " + token
    return out


def pbs_records(text: str) -> Iterator[tuple[int, str, str, dict[str, str]]]:
    """Every well-formed record of an accounting log's text: (line number, record type, job
    id as written, attributes); other lines are passed over (a live server's log, read
    while it writes, may end in half a line)."""
    for lineno, line in enumerate(text.split("\n"), start=1):
        m = _RECORD.match(line.strip())
        if m is not None:
            yield lineno, m.group(2), m.group(3), _attributes(m.group(4))


def _whole(attrs: dict[str, str], key: str) -> float:
    value = attrs.get(key, "")
    return float(value) if value.isdigit() else np.nan


def _exec_host_slots(host: str) -> tuple[int, int]:
    """Slots and distinct hosts of an ``exec_host`` list: ``n1/0+n1/1`` (one slot per
    entry), ``n1/0-27`` or ``n1/0-3,8`` (Torque ranges), ``n1/0*4`` (PBS Pro counts)."""
    slots = 0
    hosts = set()
    for entry in host.split("+"):
        name, _, rest = entry.partition("/")
        hosts.add(name)
        count = 0
        for part in rest.partition("*")[0].split(","):
            lo, dash, hi = part.partition("-")
            count += int(hi) - int(lo) + 1 if dash and lo.isdigit() and hi.isdigit() else 1
        star = rest.partition("*")[2]
        slots += int(star) if star.isdigit() else count
    return slots, len(hosts)


def _requested(attrs: dict[str, str]) -> tuple[float, float]:
    """CPUs and nodes asked for: the larger of the chunks' sum and ``ncpus``."""
    cpus = _whole(attrs, "Resource_List.ncpus")
    nodes = np.nan
    chunks = attrs.get("Resource_List.select") or attrs.get("Resource_List.nodes")
    if chunks:
        total_c = total_n = 0
        for chunk in chunks.split("+"):
            head = chunk.split(":", 1)[0]
            count = int(head) if head.isdigit() else 1
            found = _CHUNK_CPUS.search(chunk) or _PPN.search(chunk)
            total_c += count * (int(found.group(1)) if found else 1)
            total_n += count
        cpus = float(total_c) if np.isnan(cpus) else max(cpus, float(total_c))
        nodes = float(total_n)
    return cpus, nodes


def _cpus_and_nodes(attrs: dict[str, str]) -> tuple[float, float, bool]:
    """CPUs and nodes of an E record, and whether the CPUs are the request (the record
    holds no allocation); see the module docstring."""
    nodes = _whole(attrs, "unique_node_count")
    if np.isnan(nodes):
        nodes = _whole(attrs, "Resource_List.nodect")
    width = _whole(attrs, "Resource_List.mppwidth")
    if width > 0:  # Cray ALPS
        depth = _whole(attrs, "Resource_List.mppdepth")
        per_node = _whole(attrs, "Resource_List.mppnppn")
        if per_node > 0:
            nodes = float(-(-width // per_node))
        return width * (depth if depth > 0 else 1.0), nodes, False
    slots = _whole(attrs, "total_execution_slots")
    host = attrs.get("exec_host")
    if host:
        counted, hosts = _exec_host_slots(host)
        slots = float(counted) if np.isnan(slots) else slots
        nodes = float(hosts) if np.isnan(nodes) else nodes
    asked, asked_nodes = _requested(attrs)
    nodes = asked_nodes if np.isnan(nodes) else nodes
    if slots > 0:
        return slots, nodes, False
    return asked, nodes, True


def load_pbs(path: str | Path, options: AccountingOptions | None = None) -> Workload:
    """Load a PBS/Torque accounting log (plain or gzip) as a workload."""
    opts = options or AccountingOptions()
    p = input_file(path)
    src = str(p)
    report = AccountingReport(source=src, format="pbs")
    text = read_bytes(p).decode("utf-8", "replace")
    cols: dict[str, list[object]] = {k: [] for k in (
        "line", "job_id", "submit", "start", "end", "runtime", "walltime", "cpus", "nodes",
        "state", "queue", "user", "app", "array", "requested")}
    ended: set[str] = set()
    gone: dict[str, tuple[str, int]] = {}
    fresh = 0
    for lineno, line in enumerate(text.split("\n"), start=1):
        s = line.strip()
        if not s:
            continue
        m = _RECORD.match(s)
        if m is None:
            if opts.skip_bad_lines:
                report.bad_lines_skipped += 1
                continue
            raise WorkloadError("not a PBS accounting record (expected 'MM/DD/YYYY HH:MM:SS;"
                                "T;job id;key=value …')", source=src, line=lineno)
        report.records += 1
        kind, ident, message = m.group(2), m.group(3), m.group(4)
        if kind != "E":
            report.other_records_skipped += 1
            if kind in ("D", "A"):
                gone.setdefault(ident, (kind, lineno))
            continue
        ended.add(ident)
        jm = _JOB_ID.match(ident)
        if jm is None:
            if opts.skip_bad_lines:
                report.bad_lines_skipped += 1
                continue
            raise WorkloadError(f"unreadable job id {ident!r}", source=src, line=lineno,
                                field="id")
        if jm.group(2) == "" and "[" in ident:  # the array's summary record
            report.other_records_skipped += 1
            continue
        try:
            row = _row(_attributes(message), lineno, src)
        except WorkloadError:
            if opts.skip_bad_lines:
                report.bad_lines_skipped += 1
                continue
            raise
        base = int(jm.group(1))
        row["array"] = base if jm.group(2) else UNKNOWN
        row["job_id"] = -1 if jm.group(2) else base
        fresh += bool(jm.group(2))
        for k, v in row.items():
            cols[k].append(v)
    for ident, (kind, lineno) in gone.items():
        if ident not in ended:  # deleted or aborted and never ended: it never ran
            jm = _JOB_ID.match(ident)
            for k, v in (("line", lineno), ("job_id", int(jm.group(1)) if jm else -1),
                         ("submit", 0.0), ("start", np.nan), ("end", np.nan),
                         ("runtime", np.nan), ("walltime", np.nan), ("cpus", np.nan),
                         ("nodes", np.nan), ("state", "CANCELLED" if kind == "D" else "FAILED"),
                         ("queue", "default"), ("user", "-"), ("app", "-"),
                         ("array", UNKNOWN), ("requested", False)):
                cols[k].append(v)
    ids = np.array(cols["job_id"], np.int64)
    if fresh:
        need = ids < 0
        ids[need] = (int(ids.max()) if len(ids) else 0) + 1 + np.arange(int(need.sum()))
        report.job_ids_assigned = int(need.sum())
    n = len(ids)
    rec = JobRecords(
        line=np.array(cols["line"], np.int64), job_id=ids,
        **{k: np.array(cols[k], np.float64) for k in ("submit", "start", "end", "runtime",
                                                       "walltime", "cpus", "nodes")},
        unlimited=np.zeros(n, bool), partition_limit=np.zeros(n, bool),
        state=np.array(cols["state"], dtype=object), queue=np.array(cols["queue"], object),
        user=np.array(cols["user"], object), app=np.array(cols["app"], object),
        array=np.array(cols["array"], np.int64), hetjob=np.full(n, UNKNOWN, np.int64),
        cpus_requested=np.array(cols["requested"], bool))
    return build_workload(
        rec, report, opts, "pbs",
        {"id": "id", "submit": "qtime", "start": "start", "end": "end",
         "cpus": "Resource_List.ncpus", "nodes": "Resource_List.nodect"},
        duplicates="a rerun job, or the logs of two servers joined")


def _row(attrs: dict[str, str], lineno: int, src: str) -> dict[str, object]:
    def epoch(key: str) -> float:
        value = attrs.get(key)
        if value is None or value in ("", "0"):
            return np.nan
        if not value.isdigit():
            raise WorkloadError(f"unreadable time {value!r} (expected Unix seconds)",
                                source=src, line=lineno, field=key)
        return float(value)

    def duration(key: str) -> float:
        value = attrs.get(key)
        if not value:
            return np.nan
        try:
            return pbs_duration_seconds(value)
        except ValueError as exc:
            raise WorkloadError(str(exc), source=src, line=lineno, field=key) from None

    submit = epoch("qtime")
    if np.isnan(submit):
        submit = epoch("ctime")
    if np.isnan(submit):
        raise WorkloadError("E record without qtime or ctime", source=src, line=lineno,
                            field="qtime")
    start, end = epoch("start"), epoch("end")
    runtime, walltime = duration("resources_used.walltime"), duration("Resource_List.walltime")
    status = attrs.get("Exit_status", "0")
    if not re.fullmatch(r"-?\d+", status):
        raise WorkloadError(f"unreadable exit status {status!r}", source=src, line=lineno,
                            field="Exit_status")
    ran = end - start if np.isnan(runtime) else runtime
    if np.isnan(start):
        state = "CANCELLED"
    elif int(status) == 0:
        state = "COMPLETED"
    elif not np.isnan(walltime) and ran >= walltime:
        state = "TIMEOUT"
    else:
        state = "FAILED"
    for key in ("Resource_List.ncpus", "Resource_List.nodect"):  # not a drop: bad input
        if attrs.get(key) and not attrs[key].isdigit():
            raise WorkloadError(f"{attrs[key]!r} is not a whole number", source=src,
                                line=lineno, field=key)
    cpus, nodes, requested = _cpus_and_nodes(attrs)
    return {"line": lineno, "submit": submit, "start": start, "end": end, "runtime": runtime,
            "walltime": walltime, "cpus": cpus, "nodes": nodes, "state": state,
            "requested": requested,
            "queue": attrs.get("queue", "default"), "user": attrs.get("user", "-"),
            "app": attrs.get("jobname", "-")}
