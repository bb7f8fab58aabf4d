"""Reader for Slurm ``sacct --json`` exports (``{"jobs": [...]}``).

Both shapes of Slurm's data parser are read: plain numbers (``"limit": 60``, Slurm 21–22,
where 4294967295 is ``INFINITE`` and 4294967294 ``NO_VAL``, "not set") and
``{"set": true, "infinite": false, "number": 60}`` objects (23.02 and later), state
as a string or ``{"current": ["COMPLETED"], "reason": …}``. Per job:

- ``job_id``; ``time.submission`` / ``time.start`` / ``time.end`` (Unix seconds, 0 = not
  happened); ``time.elapsed`` → run time; ``time.limit`` (minutes; infinite → unlimited,
  as sacct's ``UNLIMITED``; not set → missing);
- CPUs: the ``cpu`` entry of ``tres.allocated`` (else the request ``required.CPUs``,
  counted as ``width_from_request``); nodes:
  ``allocation_nodes`` (else the ``node`` entry of ``tres.allocated``);
- ``partition`` → queue, ``user`` → user, ``name`` → application;
- ``array.job_id`` with a set ``array.task_id`` marks a job-array element, ``het.job_id``
  with a set ``het.job_offset`` a heterogeneous-job component; their ``steps`` are inside
  the job and are counted as ``steps_skipped``.

The cleaning rules are those of :mod:`dispatchlab.workload.accounting`; errors name the
job and the JSON field (``jobs[3].time.start``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from dispatchlab.errors import WorkloadError
from dispatchlab.workload.accounting import (
    AccountingOptions,
    AccountingReport,
    JobRecords,
    build_workload,
    normalise_states,
)
from dispatchlab.workload.delimited import read_bytes
from dispatchlab.workload.input_file import input_file
from dispatchlab.workload.slurm_numbers import slurm_number
from dispatchlab.workload.workload import UNKNOWN, Workload


class _Bad(Exception):
    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def _value(node: Any, path: str) -> float | None:
    """A number (plain or a ``{set, infinite, number}`` object); None when unset (null,
    ``set: false`` or Slurm's ``NO_VAL``); ``inf`` when infinite (``infinite: true`` or
    Slurm's ``INFINITE``)."""
    value = slurm_number(node)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Bad(path, f"expected a number, got {value!r}")
    return float(value)


def _get(job: dict[str, Any], path: str) -> Any:
    node: Any = job
    for key in path.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def _tres(job: dict[str, Any], kind: str) -> float | None:
    for entry in _get(job, "tres.allocated") or []:
        if isinstance(entry, dict) and entry.get("type") == kind:
            return _value(entry.get("count"), f"tres.allocated[{kind}].count")
    return None


def _state(job: dict[str, Any]) -> str:
    state = job.get("state")
    if isinstance(state, dict):
        state = state.get("current")
    if isinstance(state, list):
        state = state[0] if state else ""
    if not isinstance(state, str):
        raise _Bad("state", f"expected a state name, got {state!r}")
    return state


def load_sacct_json(path: str | Path, options: AccountingOptions | None = None) -> Workload:
    """Load a ``sacct --json`` export as a workload."""
    opts = options or AccountingOptions()
    p = input_file(path)
    src = str(p)
    try:
        doc = json.loads(read_bytes(p))
    except json.JSONDecodeError as exc:
        raise WorkloadError(f"invalid JSON: {exc.msg} (column {exc.colno})", source=src,
                            line=exc.lineno) from None
    jobs = doc.get("jobs") if isinstance(doc, dict) else None
    if not isinstance(jobs, list):
        raise WorkloadError("not a sacct --json export: expected an object with a 'jobs' "
                            "list", source=src, field="jobs")
    report = AccountingReport(source=src, format="sacct-json", records=len(jobs))
    rows: list[tuple[Any, ...]] = []
    for k, job in enumerate(jobs):
        try:
            if not isinstance(job, dict):
                raise _Bad("", "a job must be an object")
            row = _row(job)
        except _Bad as bad:
            if opts.skip_bad_lines:
                report.bad_lines_skipped += 1
                continue
            jid = job.get("job_id") if isinstance(job, dict) else None
            raise WorkloadError(str(bad), source=src,
                                job=jid if isinstance(jid, int) else None,
                                field=f"jobs[{k}]" + (f".{bad.field}" if bad.field else "")
                                ) from None
        report.steps_skipped += len(job.get("steps") or [])
        rows.append(row)
    cols = list(zip(*rows, strict=True)) if rows else [()] * 15
    n = len(rows)

    def floats(i: int) -> np.ndarray:
        return np.array(cols[i], dtype=np.float64).reshape(n)

    walltime = floats(5)
    unlimited = np.isinf(walltime)
    walltime[unlimited] = np.nan
    rec = JobRecords(
        line=np.zeros(n, np.int64), job_id=np.array(cols[0], np.int64).reshape(n),
        submit=floats(1), start=floats(2), end=floats(3), runtime=floats(4),
        walltime=walltime, unlimited=unlimited, partition_limit=np.zeros(n, bool),
        cpus=floats(6), nodes=floats(7),
        state=normalise_states(np.array(cols[8], dtype=object).reshape(n)),
        queue=np.array(cols[9], dtype=object).reshape(n),
        user=np.array(cols[10], dtype=object).reshape(n),
        app=np.array(cols[11], dtype=object).reshape(n),
        array=np.array(cols[12], np.int64).reshape(n),
        hetjob=np.array(cols[13], np.int64).reshape(n),
        cpus_requested=np.array(cols[14], bool).reshape(n))
    return build_workload(
        rec, report, opts, "sacct-json",
        {"id": "job_id", "submit": "time.submission", "start": "time.start",
         "end": "time.end", "cpus": "tres.allocated", "nodes": "allocation_nodes"},
        duplicates="runs of a requeued job that all finished, or several clusters: export "
        "one cluster")


def _row(job: dict[str, Any]) -> tuple[Any, ...]:
    jid = job.get("job_id")
    if isinstance(jid, bool) or not isinstance(jid, int):
        raise _Bad("job_id", f"expected an integer job id, got {jid!r}")

    def time(key: str) -> float:
        v = _value(_get(job, f"time.{key}"), f"time.{key}")
        return np.nan if v is None or v == 0 or np.isinf(v) else v

    elapsed = _value(_get(job, "time.elapsed"), "time.elapsed")
    limit = _value(_get(job, "time.limit"), "time.limit")
    cpus = _tres(job, "cpu")
    requested = not cpus
    if requested:
        cpus = _value(_get(job, "required.CPUs"), "required.CPUs")
    nodes = _value(job.get("allocation_nodes"), "allocation_nodes")
    if nodes is None:
        nodes = _tres(job, "node")
    array_id = _value(_get(job, "array.job_id"), "array.job_id")
    task = _value(_get(job, "array.task_id"), "array.task_id")
    het_id = _value(_get(job, "het.job_id"), "het.job_id")
    offset = _value(_get(job, "het.job_offset"), "het.job_offset")
    return (
        jid, time("submission"), time("start"), time("end"),
        np.nan if elapsed is None else elapsed,
        np.nan if limit is None else limit * 60,
        np.nan if cpus is None else cpus, np.nan if nodes is None else nodes,
        _state(job), str(job.get("partition") or "default"), str(job.get("user") or "-"),
        str(job.get("name") or "-"),
        int(array_id) if array_id and task is not None and not np.isinf(task) else UNKNOWN,
        int(het_id) if het_id and offset is not None and not np.isinf(offset) else UNKNOWN,
        requested,
    )
