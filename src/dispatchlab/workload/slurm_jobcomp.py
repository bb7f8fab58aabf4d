"""Reader for Slurm's job completion log (``JobCompType=jobcomp/filetxt``) as a workload.

Each line is one finished job as ``Key=Value`` pairs (``JobId=7 UserId=ann(1000) …
JobState=COMPLETED Partition=main TimeLimit=2 StartTime=2026-11-27T04:18:33
EndTime=… NodeList=n[2-3] NodeCnt=2 ProcCnt=6 … SubmitTime=…``); times are the
controller's local time, time limits whole minutes (or ``UNLIMITED``). A job becomes
``ProcCnt`` one-core units (the ``pool`` view of SWF), requested time ``TimeLimit × 60``,
run time ``EndTime − StartTime``; the queue is the partition, the user the name before
``(uid)``. :func:`read_jobcomp` keeps every record with its realized start, end and node
list (the twin check compares them with a simulation); :func:`load_jobcomp` makes the
workload and counts each cleaning step in ``meta["load_report"]``.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dispatchlab.errors import WorkloadError
from dispatchlab.platform.platform import CORES
from dispatchlab.workload.workload import Workload

_PAIR = re.compile(r"(?:^|\s)([A-Za-z]+)=")
_REQUIRED = ("JobId", "JobState", "Partition", "TimeLimit", "StartTime", "EndTime",
             "SubmitTime", "ProcCnt", "NodeList", "UserId")


@dataclass(frozen=True)
class JobCompRecord:
    """One line of the completion log (times in Unix seconds; ``time_limit`` in s, -1 when
    unlimited)."""

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
class JobCompReport:
    """What loading did: records read and what each cleaning step changed."""

    source: str
    records: int = 0
    dropped_never_started: int = 0
    dropped_other_partition: int = 0
    estimate_from_runtime: int = 0
    runtime_over_request: int = 0
    jobs: int = 0
    states: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def _fields(text: str) -> dict[str, str]:
    """``Key=Value`` pairs of one line (values may be empty; a value runs to the next key)."""
    marks = list(_PAIR.finditer(text))
    out: dict[str, str] = {}
    for k, m in enumerate(marks):
        stop = marks[k + 1].start() if k + 1 < len(marks) else len(text)
        out[m.group(1)] = text[m.end():stop].strip()
    return out


def _local_time(value: str) -> int | None:
    """``YYYY-MM-DDTHH:MM:SS`` in the local time zone → Unix seconds (``Unknown``/``None``
    → None)."""
    if value in ("Unknown", "None", "", "0"):
        return None
    return int(time.mktime(time.strptime(value, "%Y-%m-%dT%H:%M:%S")))


def _time_limit_s(value: str) -> int:
    """Whole minutes (or ``UNLIMITED``/``Partition_Limit`` → -1) → seconds."""
    if value in ("UNLIMITED", "Partition_Limit", "NONE"):
        return -1
    return int(value) * 60


def read_jobcomp(path: str | Path) -> list[JobCompRecord]:
    """Every record of a jobcomp/filetxt log, in file order (errors name file, line and
    field)."""
    src = Path(path)
    try:
        text = src.read_text()
    except OSError as err:
        raise WorkloadError(f"cannot read the job completion log: {err}", source=str(src)
                            ) from None
    records = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        f = _fields(raw)
        missing = [k for k in _REQUIRED if k not in f]
        if missing:
            raise WorkloadError(f"not a jobcomp/filetxt record (no {', '.join(missing)})",
                                source=str(src), line=number, field=missing[0])
        current = "JobId"
        try:
            job_id = int(f["JobId"])
            current = "TimeLimit"
            limit = _time_limit_s(f["TimeLimit"])
            current = "SubmitTime"
            submit = _local_time(f["SubmitTime"])
            current = "StartTime"
            start = _local_time(f["StartTime"])
            current = "EndTime"
            end = _local_time(f["EndTime"])
            current = "ProcCnt"
            procs = int(f["ProcCnt"])
        except ValueError:
            raise WorkloadError(f"unreadable value {f[current]!r}", source=str(src),
                                line=number, field=current) from None
        if submit is None:
            raise WorkloadError("unknown submit time", source=str(src), line=number,
                                job=job_id, field="SubmitTime")
        records.append(JobCompRecord(
            line=number, job_id=job_id, user=f["UserId"].split("(")[0],
            partition=f["Partition"], state=f["JobState"], time_limit=limit, submit=submit,
            start=start, end=end, node_list=f["NodeList"], procs=procs))
    return records


def load_jobcomp(path: str | Path, *, partition: str | None = None,
                 rebase: bool = True) -> Workload:
    """The jobs of a completion log that ran (optionally of one ``partition``) as a
    workload of one-core units; ``rebase`` puts the first submission at 0."""
    src = str(path)
    rep = JobCompReport(source=src)
    kept: list[JobCompRecord] = []
    for r in read_jobcomp(path):
        rep.records += 1
        if partition is not None and r.partition != partition:
            rep.dropped_other_partition += 1
            continue
        if r.start is None or r.end is None or r.node_list in ("", "(null)", "None"):
            rep.dropped_never_started += 1
            continue
        if r.end < r.start:
            raise WorkloadError(f"ends ({r.end}) before it starts ({r.start})", source=src,
                                line=r.line, job=r.job_id, field="EndTime")
        rep.states[r.state] = rep.states.get(r.state, 0) + 1
        kept.append(r)
    if not kept:
        raise WorkloadError("no job that ran" + (f" in partition {partition!r}"
                                                 if partition else ""), source=src)
    runtime = [max(r.end - r.start, 0) for r in kept]  # type: ignore[operator]
    walltime = []
    for r, rt in zip(kept, runtime, strict=True):
        if r.time_limit < 0:
            rep.estimate_from_runtime += 1
            walltime.append(max(rt, 1))
        else:
            walltime.append(r.time_limit)
            rep.runtime_over_request += rt > r.time_limit
    origin = min(r.submit for r in kept) if rebase else 0
    rep.jobs = len(kept)
    return Workload.from_columns(
        submit=[r.submit - origin for r in kept], walltime=walltime, runtime=runtime,
        units=[r.procs for r in kept], req={CORES: [1] * len(kept)},
        job_id=[r.job_id for r in kept], queue=[r.partition for r in kept],
        user=[r.user for r in kept],
        logged_wait=[r.start - r.submit for r in kept],  # type: ignore[operator]
        origin_unix=origin, source=src,
        meta={"format": "slurm-jobcomp", "load_report": rep.as_dict()})
