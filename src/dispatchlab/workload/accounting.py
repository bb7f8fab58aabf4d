"""From resource managers' accounting records to a workload, with every drop counted.

The Slurm and PBS readers parse their files into :class:`JobRecords` (one row per job,
absolute Unix times, NaN where the log says nothing) and hand them to
:func:`build_workload`, which applies one set of rules, each counted in the
:class:`AccountingReport` stored in ``workload.meta["load_report"]``:

- a job that never started is dropped: cancelled before it started
  (``dropped_cancelled_before_start``), failed before it started
  (``dropped_failed_before_start``), or still pending/running when the log was written
  (``dropped_unfinished``);
- records of other partitions, when the reader is asked for one (``dropped_other_partition``);
- jobs that ran and then failed, hit their limit or were cancelled are kept (they held
  the machine) and counted (``kept_failed``, ``kept_timeout``, ``kept_cancelled_running``,
  ``kept_preempted``); their ids are kept in ``meta["swf_status"]`` under the SWF status
  they have (``"0"`` failed, timed out or preempted, ``"5"`` cancelled), so an SWF
  written from the workload says so;
- a job without a processor count is dropped (``dropped_no_cpus``);
- a job's width (CPUs) is what the system allocated it; where the record holds no
  allocation the request is used, counted (``width_from_request``; the others are
  ``width_from_allocation``); each reader says which fields are which;
- a missing, ``UNLIMITED`` or ``Partition_Limit`` time limit becomes the run time
  (``estimate_from_runtime``, of which ``unlimited_walltime`` / ``partition_limit_walltime``);
- a run time or time limit with a fraction of a second is rounded up to whole seconds
  (``fractional_rounded``, one per job, as the SWF reader counts its roundings);
- a start before the submit time (clock skew) gives a zero logged wait
  (``start_before_submit``); local times made ambiguous by a DST change are counted
  (``ambiguous_local_times``);
- job-array elements / heterogeneous-job components that disagree on what dispatchlab
  requires them to share are kept as independent jobs (``array_groups_unmarked``,
  ``het_groups_unmarked``).

Anything else wrong (a finished job without a start, an end before the start, an unknown
state) is an error naming the file, line, job and field.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.errors import WorkloadError
from dispatchlab.platform.platform import CORES
from dispatchlab.workload.limits import MAX_ID, MAX_SECONDS, limit_text
from dispatchlab.workload.load_report import LoadReport, count
from dispatchlab.workload.workload import UNKNOWN, Queue, Workload, check_time_base

ObjArray = npt.NDArray[np.object_]

UnitMode = Literal["pool", "nodes"]

#: Slurm job states (sacct's long names), by what they mean for a log replay.
COMPLETED_STATES = frozenset({"COMPLETED"})
FAILED_STATES = frozenset({"FAILED", "NODE_FAIL", "BOOT_FAIL", "OUT_OF_MEMORY", "SPECIAL_EXIT"})
TIMEOUT_STATES = frozenset({"TIMEOUT", "DEADLINE"})
CANCELLED_STATES = frozenset({"CANCELLED"})
PREEMPTED_STATES = frozenset({"PREEMPTED"})
UNFINISHED_STATES = frozenset({
    "PENDING", "RUNNING", "SUSPENDED", "REQUEUED", "RESIZING", "REVOKED", "COMPLETING",
    "CONFIGURING", "STOPPED", "SIGNALING", "STAGE_OUT", "REQUEUE_FED", "REQUEUE_HOLD",
    "RESV_DEL_HOLD", "POWER_UP_NODE", "UPDATE_DB", "LAUNCH_FAILED"})
KNOWN_STATES = (COMPLETED_STATES | FAILED_STATES | TIMEOUT_STATES | CANCELLED_STATES
                | PREEMPTED_STATES | UNFINISHED_STATES)
#: sacct's two-letter state codes (``--state`` and some exports use them).
STATE_CODES = {
    "BF": "BOOT_FAIL", "CA": "CANCELLED", "CD": "COMPLETED", "CF": "CONFIGURING",
    "CG": "COMPLETING", "DL": "DEADLINE", "F": "FAILED", "NF": "NODE_FAIL",
    "OOM": "OUT_OF_MEMORY", "PD": "PENDING", "PR": "PREEMPTED", "R": "RUNNING",
    "RQ": "REQUEUED", "RS": "RESIZING", "RV": "REVOKED", "S": "SUSPENDED", "TO": "TIMEOUT",
    "SE": "SPECIAL_EXIT", "ST": "STOPPED", "RD": "RESV_DEL_HOLD", "SO": "STAGE_OUT",
}


@dataclass(frozen=True)
class AccountingOptions:
    """How accounting records become jobs.

    - ``timezone``: IANA zone in which the log's date-times without an offset were written
      (sacct prints the local time of the machine that ran it); only the absolute dates
      and DST changes depend on it.
    - ``units``: ``pool`` = each allocated CPU is a 1-core unit (as SWF's default);
      ``nodes`` = the job's node count of whole units, ``cores_per_node`` cores each (or
      its CPUs spread evenly over its nodes, rounded up).
    - ``skip_bad_lines``: count and skip malformed lines instead of failing.
    - ``rebase``: the first kept job arrives at 0 (the origin moves along).
    - ``columns``: the column names of a sacct export written without its header line
      (``--noheader``), as its ``--format`` listed them (a list, or one comma-separated
      string).
    """

    timezone: str = "UTC"
    units: UnitMode = "pool"
    cores_per_node: int | None = None
    skip_bad_lines: bool = False
    rebase: bool = True
    columns: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        check_time_base(None, self.timezone, None)
        if isinstance(self.columns, str):
            object.__setattr__(self, "columns", tuple(self.columns.split(",")))
        if self.columns is not None:
            names = tuple(str(c).strip() for c in self.columns)
            if not names or not all(names):
                raise WorkloadError("columns must name every column (e.g. JobID,Submit,"
                                    "Start,End,NCPUS,State)", field="columns")
            object.__setattr__(self, "columns", names)
        if self.units not in ("pool", "nodes"):
            raise WorkloadError(f"units must be pool or nodes, not {self.units!r}",
                                field="units")
        if self.cores_per_node is not None and self.cores_per_node <= 0:
            raise WorkloadError("cores_per_node must be positive", field="cores_per_node")


@dataclass(kw_only=True)
class AccountingReport(LoadReport):
    """What reading an accounting log did: records read and every count of a change."""

    format: str
    bad_lines_skipped: int = 0
    steps_skipped: int = 0
    other_records_skipped: int = 0
    dropped_other_partition: int = 0
    dropped_cancelled_before_start: int = 0
    dropped_failed_before_start: int = 0
    dropped_unfinished: int = 0
    dropped_no_cpus: int = 0
    kept_failed: int = 0
    kept_timeout: int = 0
    kept_cancelled_running: int = 0
    kept_preempted: int = 0
    estimate_from_runtime: int = 0
    unlimited_walltime: int = 0
    partition_limit_walltime: int = 0
    runtime_over_request: int = 0
    start_before_submit: int = 0
    ambiguous_local_times: int = 0
    array_groups_unmarked: int = 0
    het_groups_unmarked: int = 0
    job_ids_assigned: int = 0
    width_from_allocation: int = 0
    width_from_request: int = 0
    submit_from_start: int = 0
    fractional_rounded: int = count("fractional run times or time limits rounded up to "
                                    "whole seconds")
    #: Final states of the jobs kept (those dropped are in the ``dropped_*`` counts).
    states: dict[str, int] = field(default_factory=dict)
    header: dict[str, str] = field(default_factory=dict)


@dataclass
class JobRecords:
    """Job-level records as columns; times are absolute Unix seconds, NaN = not logged.

    ``line`` is each record's line in the file (for errors; 0 when the format has no
    lines), ``runtime`` the logged run
    time when the format has one (NaN: end − start), ``walltime`` the limit in seconds
    (NaN: none), ``unlimited`` / ``partition_limit`` mark why it is missing, ``nodes``
    the node count (NaN: unknown), ``state`` Slurm-style state names, ``cpus_requested``
    where ``cpus`` is the request (the record held no allocation; None: none is).
    """

    line: IntArray
    job_id: IntArray
    submit: FloatArray
    start: FloatArray
    end: FloatArray
    runtime: FloatArray
    walltime: FloatArray
    unlimited: npt.NDArray[np.bool_]
    partition_limit: npt.NDArray[np.bool_]
    cpus: FloatArray
    nodes: FloatArray
    state: ObjArray
    queue: ObjArray
    user: ObjArray
    app: ObjArray
    array: IntArray
    hetjob: IntArray
    cpus_requested: npt.NDArray[np.bool_] | None = None


def normalise_states(raw: ObjArray) -> ObjArray:
    """``CANCELLED by 1234`` → ``CANCELLED``, ``CD`` → ``COMPLETED``; unknown kept as is."""
    codes, uniques = factorize(raw)
    names = []
    for u in uniques:
        word = str(u).strip().split(" ")[0].rstrip("+").upper()
        names.append(STATE_CODES.get(word, word))
    return np.asarray(names, dtype=object)[codes]


def factorize(values: npt.ArrayLike) -> tuple[IntArray, ObjArray]:
    """Codes and distinct values (in order of first appearance), hashing not sorting."""
    import pandas as pd

    codes, uniques = pd.factorize(np.asarray(values, dtype=object))
    return np.asarray(codes, np.int64), np.asarray(uniques, dtype=object)


def _in(codes: IntArray, uniques: ObjArray, names: frozenset[str]) -> npt.NDArray[np.bool_]:
    return np.isin(codes, np.flatnonzero([str(u) in names for u in uniques]))


def line_of(rec: JobRecords, i: int) -> int | None:
    """Record ``i``'s line in the file (None for formats without lines, such as JSON)."""
    line = int(rec.line[i])
    return line if line > 0 else None


def check_states(rec: JobRecords, source: str, field: str = "State") -> None:
    """An unknown state is an error naming its line and ``field`` (a log replay must know
    each one)."""
    codes, uniques = factorize(rec.state)
    unknown = _in(codes, uniques, frozenset(uniques.astype(str).tolist()) - KNOWN_STATES)
    if unknown.any():
        i = int(np.flatnonzero(unknown)[0])
        raise WorkloadError(f"unknown job state {rec.state[i]!r} (known: "
                            f"{', '.join(sorted(KNOWN_STATES))})", source=source,
                            line=line_of(rec, i), job=int(rec.job_id[i]), field=field)


def check_unique_ids(rec: JobRecords, src: str, field: str, why: str,
                     rows: IntArray | None = None) -> None:
    """Two kept job records (``rows``; default all) with one id is an error naming both
    lines (``why``: the likely cause in this format); the replay cannot tell which one to
    use. Dropped records (a requeued job's earlier, unfinished runs) do not count."""
    rows = np.arange(len(rec.job_id)) if rows is None else rows
    order = rows[np.argsort(rec.job_id[rows], kind="stable")]
    same = np.flatnonzero(rec.job_id[order][1:] == rec.job_id[order][:-1])
    if len(same):
        i, j = sorted((int(order[same[0]]), int(order[same[0] + 1])))
        where = f"on line {int(rec.line[i])}" if rec.line[i] > 0 else "earlier"
        raise WorkloadError(f"job id {int(rec.job_id[i])} appears twice, also {where} "
                            f"({why})", source=src, line=line_of(rec, j),
                            job=int(rec.job_id[j]), field=field)


class RequestedTimeCounts(Protocol):
    """A load report that counts how requested times were filled in."""

    estimate_from_runtime: int
    runtime_over_request: int


def requested_times(wall: FloatArray, runtime: IntArray,
                    report: RequestedTimeCounts) -> tuple[IntArray, npt.NDArray[np.bool_]]:
    """Each job's requested time in whole seconds (the logged one rounded up; its run time,
    at least 1 s, where none was logged: NaN or ≤ 0) and which were missing; both counts
    go to ``report``."""
    missing = np.isnan(wall) | (wall <= 0)
    report.estimate_from_runtime = int(missing.sum())
    walltime = np.where(missing, np.maximum(runtime, 1),
                        np.ceil(np.nan_to_num(wall, nan=1.0))).astype(np.int64)
    report.runtime_over_request = int((runtime > walltime).sum())
    return walltime, missing


def build_workload(rec: JobRecords, report: AccountingReport, opts: AccountingOptions,
                   fmt: str, fields: dict[str, str], duplicates: str) -> Workload:
    """The workload of ``rec`` after the module's rules; ``fields`` names the file's
    column for each of ``submit``, ``start``, ``end``, ``cpus``, ``nodes``, ``id`` (for
    errors), ``duplicates`` the likely cause of two kept records with one id."""
    src = report.source
    check_states(rec, src, fields.get("state", "State"))
    codes, uniques = factorize(rec.state)
    n = len(codes)

    def fail(mask: npt.NDArray[np.bool_], fld: str, msg: str) -> WorkloadError:
        i = int(np.flatnonzero(mask)[0])
        return WorkloadError(f"{msg} ({int(mask.sum())} record(s))", source=src,
                             line=line_of(rec, i), job=int(rec.job_id[i]), field=fld)

    no_submit = np.isnan(rec.submit)
    if no_submit.any():
        raise fail(no_submit, fields["submit"], "no submit time")
    started = ~np.isnan(rec.start)
    cancelled = _in(codes, uniques, CANCELLED_STATES)
    failed = _in(codes, uniques, FAILED_STATES)
    unfinished = _in(codes, uniques, UNFINISHED_STATES)
    # a job cancelled while pending may carry start = end on no node: it never ran
    no_nodes = ~np.isnan(rec.nodes) & (rec.nodes == 0)
    never = ~started | (cancelled & no_nodes & (rec.start == rec.end))
    keep = np.ones(n, bool)
    for mask, attr in ((never & cancelled, "dropped_cancelled_before_start"),
                       (never & failed, "dropped_failed_before_start"),
                       (unfinished, "dropped_unfinished")):
        setattr(report, attr, int((mask & keep).sum()))
        keep &= ~mask
    if (never & keep).any():
        raise fail(never & keep, fields["start"], "a finished job without a start time")
    no_end = keep & np.isnan(rec.end)
    if no_end.any():
        raise fail(no_end, fields["end"], "a finished job without an end time")
    backwards = keep & (rec.end < rec.start)
    if backwards.any():
        raise fail(backwards, fields["end"], "end before start")
    for arr, fld, limit in ((rec.cpus, fields["cpus"], MAX_ID),
                            (rec.nodes, fields["nodes"], MAX_ID),
                            (rec.runtime, "runtime", MAX_SECONDS),
                            (rec.walltime, "walltime", MAX_SECONDS)):
        known = keep & ~np.isnan(arr)
        big = known & (np.abs(arr) >= limit)  # before any cast to int64 (it would wrap)
        if big.any():
            raise fail(big, fld, f"value {arr[big][0]:g} is beyond {limit_text(limit)}")
        if limit == MAX_ID and (known & (arr != np.floor(arr))).any():
            frac = known & (arr != np.floor(arr))
            raise fail(frac, fld, f"{arr[frac][0]:g} is not a whole number")
    no_cpus = keep & ~(rec.cpus > 0)
    report.dropped_no_cpus = int(no_cpus.sum())
    keep &= ~no_cpus
    report.kept_failed = int((keep & failed).sum())
    report.kept_timeout = int((keep & _in(codes, uniques, TIMEOUT_STATES)).sum())
    report.kept_cancelled_running = int((keep & cancelled).sum())
    report.kept_preempted = int((keep & _in(codes, uniques, PREEMPTED_STATES)).sum())
    counts = np.bincount(codes[keep], minlength=len(uniques))  # the kept jobs' states:
    report.states = {str(u): int(c) for u, c in sorted(zip(uniques, counts, strict=True))
                     if c}  # the dropped ones are in the dropped_* counts
    failed_run = keep & (failed | _in(codes, uniques, TIMEOUT_STATES | PREEMPTED_STATES))
    swf_status = {code: rec.job_id[mask].tolist() for code, mask in (
        ("0", failed_run), ("5", keep & cancelled)) if mask.any()}
    requested = (np.zeros(n, bool) if rec.cpus_requested is None else rec.cpus_requested)
    report.width_from_request = int((keep & requested).sum())
    report.width_from_allocation = int((keep & ~requested).sum())

    idx = np.flatnonzero(keep)
    check_unique_ids(rec, src, fields["id"], duplicates, idx)
    runtime_f = np.where(np.isnan(rec.runtime[idx]), rec.end[idx] - rec.start[idx],
                         rec.runtime[idx])
    runtime = np.ceil(np.maximum(runtime_f, 0)).astype(np.int64)
    wall_f = rec.walltime[idx]
    report.fractional_rounded = int(((runtime_f > 0) & (runtime_f != np.floor(runtime_f))
                                     | (wall_f > 0) & (wall_f != np.floor(wall_f))).sum())
    walltime, missing = requested_times(rec.walltime[idx], runtime, report)
    report.unlimited_walltime = int((missing & rec.unlimited[idx]).sum())
    report.partition_limit_walltime = int((missing & rec.partition_limit[idx]).sum())
    submit = rec.submit[idx].astype(np.int64)
    start = rec.start[idx].astype(np.int64)
    early = start < submit
    report.start_before_submit = int(early.sum())
    logged_wait = np.maximum(start - submit, 0)

    cpus = np.rint(rec.cpus[idx]).astype(np.int64)
    if opts.units == "pool":
        units, cores = cpus, np.ones(len(idx), np.int64)
    else:
        nodes = rec.nodes[idx]
        if np.isnan(nodes).any() or (nodes <= 0).any():
            bad = np.zeros(n, bool)
            bad[idx] = np.isnan(nodes) | (nodes <= 0)
            raise fail(bad, fields["nodes"], "whole-node units need each job's node count")
        units = np.rint(nodes).astype(np.int64)
        cores = (np.full(len(idx), opts.cores_per_node, np.int64) if opts.cores_per_node
                 else -(-cpus // units))

    origin = int(submit.min()) if len(submit) else None
    shift = origin if (opts.rebase and origin is not None) else 0
    array = _consistent_groups(rec.array[idx], (submit, walltime, units, cores,
                                                rec.queue[idx]), report, "array_groups_unmarked")
    het = _consistent_groups(rec.hetjob[idx], (submit, walltime, runtime, rec.queue[idx]),
                             report, "het_groups_unmarked")
    report.jobs = len(idx)
    meta: dict[str, Any] = {"format": fmt, "options": asdict(opts),
                            "load_report": report.as_dict(), "time_shift": shift}
    if swf_status:
        meta["swf_status"] = swf_status
    labels = {k: sorted_codes(getattr(rec, k)[idx]) for k in ("queue", "user", "app")}
    wl = Workload.from_columns(
        job_id=rec.job_id[idx], submit=submit - shift, walltime=walltime, runtime=runtime,
        units=units, req={CORES: cores}, queue=labels["queue"][0],
        user=labels["user"][0], app=labels["app"][0],
        logged_wait=logged_wait, array=array, hetjob=het,
        origin_unix=None if origin is None else (origin if opts.rebase else 0),
        timezone=opts.timezone, source=src, meta=meta, validate=False)
    wl = replace(wl, queues=tuple(Queue(q) for q in labels["queue"][1]),
                 users=labels["user"][1], apps=labels["app"][1])
    wl.validate()
    return wl


def sorted_codes(values: ObjArray) -> tuple[IntArray, tuple[str, ...]]:
    """Codes into the sorted distinct labels (as ``Workload.from_columns`` would give)."""
    codes, uniques = factorize(values)
    names = uniques.astype(str)
    order = np.argsort(names, kind="stable")
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return rank[codes], tuple(names[order].tolist())


def _consistent_groups(group: IntArray, shared: tuple[npt.NDArray[Any], ...],
                       report: AccountingReport, counter: str) -> IntArray:
    """``group`` with the groups whose members disagree on a ``shared`` column set to -1,
    counted in ``report.<counter>``."""
    out = np.array(group, dtype=np.int64)
    member = out >= 0
    if not member.any():
        return out
    ids, inverse = np.unique(out[member], return_inverse=True)
    inverse = inverse.reshape(-1)
    bad = np.zeros(len(ids), bool)
    for col in shared:
        values = np.asarray(col)[member]
        codes = np.unique(values.astype(str) if values.dtype == object else values,
                          return_inverse=True)[1].reshape(-1)
        lo = np.full(len(ids), np.iinfo(np.int64).max)
        hi = np.full(len(ids), np.iinfo(np.int64).min)
        np.minimum.at(lo, inverse, codes)
        np.maximum.at(hi, inverse, codes)
        bad |= lo != hi
    setattr(report, counter, getattr(report, counter) + int(bad.sum()))
    rows = np.flatnonzero(member)
    out[rows[bad[inverse]]] = UNKNOWN
    return out
