"""Reader for Slurm ``sacct --parsable2`` exports (``|``-separated, header line first).

Export with, for example::

    sacct --allusers --duplicates --parsable2 --starttime 2024-01-01 \\
          --format JobID,JobIDRaw,Submit,Start,End,Elapsed,Timelimit,NCPUS,NNodes,ReqMem,\\
Partition,QOS,User,JobName,State

Columns are found by name (any order, any case; ``--parsable``'s trailing ``|`` is fine);
an export without its header (``--noheader``) is read with ``columns`` naming them, in
the order of its ``--format``.
Needed: ``JobID``, ``Submit``, ``Start``, ``End``, ``State`` and one of ``NCPUS`` /
``AllocCPUS`` / ``ReqCPUS``. A job's width is its allocation (``NCPUS`` = ``AllocCPUS``
in sacct's manual); the request ``ReqCPUS`` where the export has no allocation or it is
0 or empty (counted as ``width_from_request``). Used when present: ``JobIDRaw``, ``Elapsed`` /
``ElapsedRaw`` (the run time; else End − Start), ``Timelimit`` / ``TimelimitRaw``
(minutes), ``NNodes`` / ``AllocNodes``, ``Partition`` (queue), ``User``, ``JobName``
(application). Others (``ReqMem``, ``QOS``, ``Account``, …) are read and not used.

Job ids are read as Slurm defines them: ``123.batch``, ``123.extern``, ``123.0`` are
*steps* inside job 123 (skipped and counted; the job's own line holds its allocation);
``123_4`` is task 4 of job array 123 and ``123_[5-9]`` its still-pending tasks; ``123+1``
is component 1 of heterogeneous job 123. ``JobIDRaw`` gives each task or component its
own job id; without it they get fresh ids above the largest one (counted as
``job_ids_assigned``). The cleaning rules are those of
:mod:`dispatchlab.workload.accounting`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from dispatchlab.errors import WorkloadError
from dispatchlab.workload.accounting import (
    AccountingOptions,
    AccountingReport,
    JobRecords,
    build_workload,
    normalise_states,
)
from dispatchlab.workload.delimited import read_delimited
from dispatchlab.workload.input_file import input_file
from dispatchlab.workload.slurm_spellings import (
    duration_column,
    in_dst_gap,
    limit_column,
    time_column,
)
from dispatchlab.workload.workload import UNKNOWN, Workload

#: ``base[_task|_[range]][+component][.step]``
JOB_ID = r"^(?P<base>\d+)(?:_(?P<task>\d+|\[[^\]]*\]))?(?:\+(?P<het>\d+))?(?:\.(?P<step>.+))?$"


def load_sacct(path: str | Path, options: AccountingOptions | None = None) -> Workload:
    """Load a ``sacct --parsable2`` export (plain or gzip) as a workload."""
    opts = options or AccountingOptions()
    p = input_file(path)
    src = str(p)
    parsed = read_delimited(p, "|", skip_bad_lines=opts.skip_bad_lines, columns=opts.columns)
    report = AccountingReport(source=src, format="sacct", records=parsed.table.num_rows
                              + parsed.bad_lines, bad_lines_skipped=parsed.bad_lines)
    cols = {name.lower(): name for name in parsed.names}

    def column(*names: str, required: bool = False) -> tuple[str, pa.ChunkedArray] | None:
        for name in names:
            if name.lower() in cols:
                return cols[name.lower()], parsed.table[cols[name.lower()]]
        if required:
            raise WorkloadError(f"sacct export lacks a {' / '.join(names)} column (export "
                                "with --format JobID,Submit,Start,End,State,NCPUS,…)",
                                source=src, field=names[0])
        return None

    lines = parsed.lines
    bad_rows = np.zeros(parsed.table.num_rows, bool)
    first_bad: list[tuple[int, str, str]] = []

    def unreadable(mask: np.ndarray, fld: str, values: pa.ChunkedArray, what: str) -> None:
        if mask.any():
            i = int(np.flatnonzero(mask)[0])
            first_bad.append((int(lines[i]), fld, f"unreadable {what} {values[i].as_py()!r}"))
            bad_rows[:] |= mask

    jid_name, jid = column("JobID", required=True)  # type: ignore[misc]
    parts = _job_id_parts(jid)
    unreadable(~_valid(parts), jid_name, jid, "job id")
    step = _mask(pc.not_equal(pc.struct_field(parts, "step"), ""))
    times = {}
    ambiguous = np.zeros(len(lines), bool)
    for key in ("Submit", "Start", "End"):
        name, values = column(key, required=True)  # type: ignore[misc]
        secs, bad, amb = time_column(values, opts.timezone)
        first = values[int(np.flatnonzero(bad)[0])].as_py() if bad.any() else None
        if first is not None and in_dst_gap(str(first), opts.timezone):
            first_bad.append((int(lines[int(np.flatnonzero(bad)[0])]), name,
                              f"date-time {first!r} does not exist in {opts.timezone}: it "
                              "falls in the daylight-saving gap (clocks jump forward)"))
            bad_rows[:] |= bad
        else:
            unreadable(bad, name, values, "date-time")
        times[key] = secs
        ambiguous |= amb
    runtime = np.full(len(lines), np.nan)
    if (raw := column("ElapsedRaw")) is not None:
        runtime, bad = _numbers(raw[1])
        unreadable(bad, raw[0], raw[1], "number of seconds")
    elif (el := column("Elapsed")) is not None:
        runtime, bad = duration_column(el[1])
        unreadable(bad, el[0], el[1], "duration")
    walltime = np.full(len(lines), np.nan)
    unlimited = partition = np.zeros(len(lines), bool)
    if (tl := column("TimelimitRaw", "Timelimit")) is not None:
        walltime, unlimited, partition, bad = limit_column(tl[1])
        unreadable(bad, tl[0], tl[1], "time limit")
    cpu_name, cpu_values = column("NCPUS", "AllocCPUS", "ReqCPUS", required=True)  # type: ignore[misc]
    cpus, bad = _numbers(cpu_values)
    unreadable(bad, cpu_name, cpu_values, "CPU count")
    requested = np.full(len(lines), cpu_name.lower() == "reqcpus")
    if not requested.all() and (req := column("ReqCPUS")) is not None:
        asked, bad = _numbers(req[1])
        unreadable(bad, req[0], req[1], "CPU count")
        requested = ~(cpus > 0) & (asked > 0)
        cpus = np.where(requested, asked, cpus)
    nodes = np.full(len(lines), np.nan)
    node_name = "NNodes"
    if (nn := column("NNodes", "AllocNodes", "ReqNodes")) is not None:
        node_name = nn[0]
        nodes, bad = _numbers(nn[1])
        unreadable(bad, nn[0], nn[1], "node count")
    state_name, state_values = column("State", required=True)  # type: ignore[misc]
    if first_bad and not opts.skip_bad_lines:
        lineno, fld, msg = min(first_bad)
        raise WorkloadError(msg, source=src, line=lineno, field=fld)
    report.bad_lines_skipped += int(bad_rows.sum())
    report.steps_skipped = int((step & ~bad_rows).sum())
    report.ambiguous_local_times = int((ambiguous & ~bad_rows & ~step).sum())
    keep = np.flatnonzero(~step & ~bad_rows)

    base = _ints(pc.struct_field(parts, "base"))
    task = pc.struct_field(parts, "task")
    het = pc.struct_field(parts, "het")
    is_task = _mask(pc.not_equal(task, ""))
    is_het = _mask(pc.not_equal(het, ""))
    if (raw_id := column("JobIDRaw")) is not None:
        job_id, bad = _numbers(raw_id[1])
        bad_k = bad[keep]
        if bad_k.any():
            i = int(keep[np.flatnonzero(bad_k)[0]])
            raise WorkloadError(f"unreadable job id {raw_id[1][i].as_py()!r}", source=src,
                                line=int(lines[i]), field=raw_id[0])
        ids = np.nan_to_num(job_id, nan=-1).astype(np.int64)  # steps: '123.batch'
    else:
        ids = base.copy()
        pending_range = _mask(pc.starts_with(task, "["))  # 123_[5-9]: not one job yet
        fresh = ((is_task & ~pending_range) | is_het)[keep]
        if fresh.any():
            rows = keep[fresh]
            ids[rows] = int(base.max()) + 1 + np.arange(len(rows))
            report.job_ids_assigned = len(rows)
    rec = JobRecords(
        line=lines[keep], job_id=ids[keep], submit=times["Submit"][keep],
        start=times["Start"][keep], end=times["End"][keep], runtime=runtime[keep],
        walltime=walltime[keep], unlimited=unlimited[keep], partition_limit=partition[keep],
        cpus=cpus[keep], nodes=nodes[keep],
        state=normalise_states(_objects(state_values)[keep]),
        queue=_labels(column("Partition"), len(lines), "default")[keep],
        user=_labels(column("User"), len(lines), "-")[keep],
        app=_labels(column("JobName"), len(lines), "-")[keep],
        array=np.where(is_task, base, UNKNOWN)[keep],
        hetjob=np.where(is_het, base, UNKNOWN)[keep], cpus_requested=requested[keep])
    return build_workload(
        rec, report, opts, "sacct",
        {"id": "JobID", "submit": "Submit", "start": "Start", "end": "End", "cpus": cpu_name,
         "nodes": node_name, "state": state_name},
        duplicates="runs of a requeued job that all finished, or several clusters: export "
        "one cluster")


def _job_id_parts(jid: pa.ChunkedArray) -> pa.ChunkedArray:
    """``JOB_ID``'s groups per row (null where it does not match); rows that are plain
    numbers (most of a job-level export) skip the regular expression."""
    plain = _mask(pc.match_substring_regex(jid, r"^\d+$"))
    if plain.all():
        empty = pa.array([""] * len(jid), pa.string())
        return pa.chunked_array([pa.StructArray.from_arrays(
            [jid.combine_chunks(), empty, empty, empty], names=["base", "task", "het", "step"])])
    return pc.extract_regex(jid, JOB_ID)


def _valid(parts: pa.ChunkedArray) -> np.ndarray:
    return _mask(pc.is_valid(parts))


def _mask(values: pa.ChunkedArray) -> np.ndarray:
    return np.asarray(pc.fill_null(values, False).to_numpy(zero_copy_only=False), dtype=bool)


def _ints(values: pa.ChunkedArray) -> np.ndarray:
    text = pc.if_else(pc.equal(pc.fill_null(values, ""), ""), "0", values)
    return np.asarray(pc.cast(text, pa.int64()).to_numpy(zero_copy_only=False), np.int64)


def _numbers(values: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """Floats of a numeric text column (NaN when empty) and a mask of unreadable values."""
    try:  # the usual case: every value a number
        out = pc.cast(values, pa.float64())
        return (np.array(out.to_numpy(zero_copy_only=False), dtype=np.float64),
                np.zeros(len(values), bool))
    except pa.ArrowInvalid:
        pass
    text = pc.utf8_trim_whitespace(values)
    empty = _mask(pc.equal(text, ""))
    ok = _mask(pc.match_substring_regex(text, r"^\d+(?:\.\d+)?$"))
    numeric = pc.if_else(pa.chunked_array([pa.array(ok)]), text, "0")
    out = np.array(pc.cast(numeric, pa.float64()).to_numpy(zero_copy_only=False),
                   dtype=np.float64)
    out[~ok] = np.nan
    return out, ~ok & ~empty


def _objects(values: pa.ChunkedArray) -> np.ndarray:
    """Python strings of a column, built once per distinct value."""
    encoded = pc.dictionary_encode(values).combine_chunks()
    names = np.asarray([*encoded.dictionary.to_pylist(), ""], dtype=object)
    index = encoded.indices.fill_null(len(names) - 1).to_numpy(zero_copy_only=False)
    return names[np.asarray(index, np.int64)]


def _labels(col: tuple[str, pa.ChunkedArray] | None, n: int, default: str) -> np.ndarray:
    if col is None:
        return np.full(n, default, dtype=object)
    text = pc.utf8_trim_whitespace(col[1])
    return _objects(pc.if_else(pc.equal(text, ""), default, text))

