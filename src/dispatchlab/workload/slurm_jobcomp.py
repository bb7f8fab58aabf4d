"""Reader for Slurm's job completion log (``JobCompType=jobcomp/filetxt``) as a workload.

Each line is one finished job as ``Key=Value`` pairs (``JobId=7 UserId=ann(1000) …
JobState=COMPLETED Partition=main TimeLimit=2 StartTime=2026-11-27T04:18:33
EndTime=… NodeList=n[2-3] NodeCnt=2 ProcCnt=6 … SubmitTime=…``); times are the
controller's local time, time limits whole minutes (or ``UNLIMITED`` /
``Partition_Limit``), all read with :mod:`~dispatchlab.workload.slurm_spellings`. A job
becomes ``ProcCnt`` CPUs and ``NodeCnt`` nodes, requested time ``TimeLimit × 60``, run
time ``EndTime − StartTime``; the queue is the partition, the user the name before
``(uid)``, the application ``Name``. Slurm logs ``SubmitTime`` from 17.11 on
(``jobcomp_filetxt.c``); in a log written before, where no record has one, a job's
submit time is its start time (``submit_from_start`` counts the records: the log knows
no waits); a record without it among records with it is a truncated line.
:func:`read_jobcomp` keeps every record with its realized start, end and node list (the
twin check compares them with a simulation);
:func:`load_jobcomp` makes the workload through :func:`~dispatchlab.workload.accounting.
build_workload`, the cleaning rules shared with sacct and PBS, each counted in
``meta["load_report"]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from dispatchlab.errors import WorkloadError
from dispatchlab.workload.accounting import (
    AccountingOptions,
    AccountingReport,
    JobRecords,
    build_workload,
    normalise_states,
)
from dispatchlab.workload.delimited import read_bytes
from dispatchlab.workload.slurm_spellings import limit_column, machine_timezone, time_column
from dispatchlab.workload.workload import UNKNOWN, Workload

_PAIR = re.compile(r"(?:^|\s)([A-Za-z]+)=(\S*)")
_NAME = re.compile(r"(?:^|\s)Name=(.*?)(?=\s+[A-Za-z]+=|\s*$)")
_REQUIRED = ("JobId", "JobState", "Partition", "TimeLimit", "StartTime", "EndTime",
             "ProcCnt", "NodeList", "UserId")
#: Logged from Slurm 17.11 on: required unless no record of the log has it.
_SINCE_17_11 = "SubmitTime"
_EXPECTED = {"JobId": "a whole number", "ProcCnt": "a whole number",
             "NodeCnt": "a whole number",
             "TimeLimit": "whole minutes, [days-]hh:mm:ss, UNLIMITED or Partition_Limit",
             "SubmitTime": "YYYY-MM-DDTHH:MM:SS, Unknown or None",
             "StartTime": "YYYY-MM-DDTHH:MM:SS, Unknown or None",
             "EndTime": "YYYY-MM-DDTHH:MM:SS, Unknown or None"}


@dataclass(frozen=True)
class JobCompRecord:
    """One line of the completion log (times in Unix seconds; ``time_limit`` in s, -1 when
    unlimited or the partition's)."""

    line: int
    job_id: int
    user: str
    partition: str
    state: str
    time_limit: int
    submit: int
    start: int | None
    end: int | None
    node_list: str
    procs: int


@dataclass
class _Columns:
    """The log's records as columns (NaN = not logged)."""

    line: npt.NDArray[np.int64]
    text: dict[str, list[str]]
    job_id: npt.NDArray[np.int64]
    submit: npt.NDArray[np.float64]
    start: npt.NDArray[np.float64]
    end: npt.NDArray[np.float64]
    limit: npt.NDArray[np.float64]
    unlimited: npt.NDArray[np.bool_]
    partition_limit: npt.NDArray[np.bool_]
    procs: npt.NDArray[np.float64]
    nodes: npt.NDArray[np.float64]

    def take(self, rows: npt.NDArray[np.int64]) -> _Columns:
        """The records at ``rows``."""
        return _Columns(
            line=self.line[rows], text={k: [v[i] for i in rows] for k, v in self.text.items()},
            **{k: getattr(self, k)[rows] for k in (
                "job_id", "submit", "start", "end", "limit", "unlimited", "partition_limit",
                "procs", "nodes")})


def _fields(text: str) -> dict[str, str]:
    """``Key=Value`` pairs of one line; values hold no blank except ``Name``'s, which runs
    to the next key (one ``findall`` per line: a year of a large machine's log is
    millions of lines)."""
    out = dict(_PAIR.findall(text))
    if "Name" in out:
        name = _NAME.search(text)
        if name is not None:
            out["Name"] = name.group(1)
    return out


def _counts(values: list[str]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """Whole numbers (NaN when empty) and a mask of unreadable values."""
    ok = [v.isascii() and v.isdigit() for v in values]
    out = np.array([float(v) if good else np.nan for v, good in zip(values, ok, strict=True)],
                   np.float64)
    bad = np.array([bool(v) and not good for v, good in zip(values, ok, strict=True)], bool)
    return out, bad


def _records(src: Path, report: AccountingReport | None,
             skip_bad_lines: bool) -> list[tuple[int, dict[str, str]]]:
    """``(line, fields)`` of every record; an incomplete one is an error naming its line
    and first missing key (skipped and counted with ``skip_bad_lines``)."""
    if not src.is_file():
        raise WorkloadError("file not found", source=str(src))
    try:
        text = read_bytes(src).decode("utf-8", "replace")
    except OSError as err:
        raise WorkloadError(f"cannot read the job completion log: {err}", source=str(src)
                            ) from None
    out = []
    old_log = f"{_SINCE_17_11}=" not in text
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        f = _fields(raw)
        missing = [k for k in _REQUIRED if k not in f]
        if not old_log and _SINCE_17_11 not in f:
            missing.append(_SINCE_17_11)
        if missing:
            if skip_bad_lines and report is not None:
                report.bad_lines_skipped += 1
                continue
            what = ("an incomplete jobcomp/filetxt record (truncated line?)" if "JobId" in f
                    else "not a jobcomp/filetxt record")
            raise WorkloadError(f"{what}: no {', '.join(missing)}", source=str(src),
                                line=number, field=missing[0])
        out.append((number, f))
    return out


def _columns(src: Path, timezone: str, report: AccountingReport | None,
             skip_bad_lines: bool) -> _Columns:
    """Every record's values, parsed with Slurm's spellings; an unreadable value is an
    error naming the file, line and field (skipped and counted with ``skip_bad_lines``)."""
    rows = _records(src, report, skip_bad_lines)
    text = {k: [f.get(k, "") for _, f in rows] for k in (
        "JobId", "JobState", "Partition", "TimeLimit", "StartTime", "EndTime", "SubmitTime",
        "ProcCnt", "NodeCnt", "NodeList", "UserId", "Name")}
    ids, bad_id = _counts(text["JobId"])
    bad_id |= np.isnan(ids)
    limit, unlimited, partition_limit, bad_limit = limit_column(text["TimeLimit"])
    times, bad_times, ambiguous = {}, {}, np.zeros(len(rows), bool)
    for key in ("SubmitTime", "StartTime", "EndTime"):
        times[key], bad_times[key], amb = time_column(text[key], timezone)
        ambiguous |= amb
    procs, bad_procs = _counts(text["ProcCnt"])
    nodes, bad_nodes = _counts(text["NodeCnt"])
    bad = {"JobId": bad_id, "TimeLimit": bad_limit, **bad_times, "ProcCnt": bad_procs,
           "NodeCnt": bad_nodes}
    any_bad = np.logical_or.reduce(list(bad.values())) if rows else np.zeros(0, bool)
    cols = _Columns(
        line=np.array([n for n, _ in rows], np.int64), text=text,
        job_id=np.nan_to_num(ids, nan=-1).astype(np.int64), submit=times["SubmitTime"],
        start=times["StartTime"], end=times["EndTime"], limit=limit, unlimited=unlimited,
        partition_limit=partition_limit, procs=procs, nodes=nodes)
    if any_bad.any():
        if not (skip_bad_lines and report is not None):
            i = int(np.flatnonzero(any_bad)[0])
            key = next(k for k, mask in bad.items() if mask[i])
            raise WorkloadError(f"unreadable value {text[key][i]!r} (expected "
                                f"{_EXPECTED[key]})", source=str(src),
                                line=int(cols.line[i]), field=key)
        report.bad_lines_skipped += int(any_bad.sum())
        cols = cols.take(np.flatnonzero(~any_bad))
        ambiguous = ambiguous[~any_bad]
    if report is not None:
        report.ambiguous_local_times += int(ambiguous.sum())
    return cols


def _user(value: str) -> str:
    """``ann(1000)`` → ``ann``."""
    return value.split("(")[0]


def read_jobcomp(path: str | Path, timezone: str | None = None) -> list[JobCompRecord]:
    """Every record of a jobcomp/filetxt log, in file order (errors name file, line and
    field); local times are read in ``timezone`` (default: this machine's, where the live
    mode's controller runs)."""
    src = Path(path)
    cols = _columns(src, timezone or machine_timezone(), None, False)
    no_submit = np.isnan(cols.submit)
    if no_submit.any():
        i = int(np.flatnonzero(no_submit)[0])
        raise WorkloadError("unknown submit time", source=str(src), line=int(cols.line[i]),
                            job=int(cols.job_id[i]), field="SubmitTime")

    def times(values: npt.NDArray[np.float64]) -> list[int | None]:
        return [None if v != v else int(v) for v in values.tolist()]  # v != v: NaN

    limits = np.where(np.isnan(cols.limit), -1, np.ceil(cols.limit)).astype(np.int64).tolist()
    procs = np.nan_to_num(cols.procs).astype(np.int64).tolist()
    text = cols.text
    return [JobCompRecord(line=line, job_id=job, user=_user(user), partition=part,
                          state=state, time_limit=limit, submit=int(submit), start=start,
                          end=end, node_list=nodes, procs=cpus)
            for line, job, user, part, state, limit, submit, start, end, nodes, cpus in zip(
                cols.line.tolist(), cols.job_id.tolist(), text["UserId"], text["Partition"],
                text["JobState"], limits, cols.submit.tolist(), times(cols.start),
                times(cols.end), text["NodeList"], procs, strict=True)]


def load_jobcomp(path: str | Path, options: AccountingOptions | None = None, *,
                 partition: str | None = None) -> Workload:
    """The jobs of a completion log (optionally of one ``partition``, the others counted
    in ``dropped_other_partition``) as a workload, cleaned by the accounting rules.

    Without ``options`` the log's local times are read in this machine's time zone (the
    live mode's case); through :func:`~dispatchlab.workload.load.load_workload` they take
    ``timezone`` like the other Slurm formats (default UTC).
    """
    opts = options or AccountingOptions(timezone=machine_timezone())
    src = Path(path)
    report = AccountingReport(source=str(src), format="jobcomp")
    cols = _columns(src, opts.timezone, report, opts.skip_bad_lines)
    report.records = len(cols.line)
    if cols.line.size and not any(cols.text[_SINCE_17_11]):  # written before Slurm 17.11
        report.submit_from_start = int((~np.isnan(cols.start)).sum())
        cols.submit = np.where(np.isnan(cols.start), cols.end, cols.start)
    if partition is not None:
        mine = np.array([p == partition for p in cols.text["Partition"]], bool)
        report.dropped_other_partition = int((~mine).sum())
        cols = cols.take(np.flatnonzero(mine))
    n = len(cols.line)
    rec = JobRecords(
        line=cols.line, job_id=cols.job_id, submit=cols.submit, start=cols.start,
        end=cols.end, runtime=np.full(n, np.nan), walltime=cols.limit,
        unlimited=cols.unlimited, partition_limit=cols.partition_limit, cpus=cols.procs,
        nodes=cols.nodes, state=normalise_states(np.array(cols.text["JobState"], object)),
        queue=np.array(cols.text["Partition"], object),
        user=np.array([_user(u) for u in cols.text["UserId"]], object),
        app=np.array(cols.text["Name"], object), array=np.full(n, UNKNOWN, np.int64),
        hetjob=np.full(n, UNKNOWN, np.int64))
    wl = build_workload(
        rec, report, opts, "jobcomp",
        {"id": "JobId", "submit": "SubmitTime", "start": "StartTime", "end": "EndTime",
         "cpus": "ProcCnt", "nodes": "NodeCnt", "state": "JobState"},
        duplicates="a requeued job whose runs all finished, or the logs of two clusters "
        "joined")
    if wl.n_jobs == 0:
        raise WorkloadError("no job that ran" + (f" in partition {partition!r}"
                                                 if partition else ""), source=str(src))
    return wl
