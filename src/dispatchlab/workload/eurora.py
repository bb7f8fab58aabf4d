"""Reader for the Eurora job batches of Borghesi's power-aware simulator (``*.log_crypt``).

One job per line, ``;``-separated, with the allocation between two ``__`` markers::

    498716;xxx;yyy;debug;2014-03-31 11:24:53__34;1;0;0;4194304#__2014-03-31 11:25:16;
    2014-03-31 11:26:36;1;1;4;00:30;NA;NA;COMPLETED;0

Interpretation (checked against all 212,830 lines of the shared data set):

- before ``__``: job id, executable, user, queue, arrival date-time (local time of CINECA,
  ``Europe/Rome``). Queue ``R`` is a PBS reservation queue (anonymised ``R<id>``) and is
  read as ``reservation``.
- between the markers: one entry per PBS *chunk* ``node;cores;gpus;mics;memory_kb``,
  separated by ``#``. A chunk is one job unit (several chunks may sit on one node, e.g.
  ``55;2;0;0;4194304`` six times). All chunks of a job are identical, so the per-unit
  request is the chunk: cores, GPUs, MICs, and memory in KB (4194304 KB = 4 GB),
  converted to MB (rounded up).
- after ``__``: start, end (date-times), requested nodes (= number of units), requested
  cores (total = units × cores per unit), requested memory (total, in GB for most jobs
  but in MB when PBS was given ``mb`` — ``200`` next to 204800 KB chunks — so it is only
  cross-checked, never used), the user's wall-time ``HH:MM`` (or ``HH:MM:SS``), two
  ``NA`` fields, the final status (always ``COMPLETED``) and a synthetic application type
  0/1/2 (counted in the report).

Columns: units = requested nodes; runtime = end − start; walltime = the estimate;
submit = arrival − first arrival (``origin_unix`` = the first arrival); ``logged_wait`` =
start − arrival; queues with the expected waiting times of ``system_queues``. Times are
converted through the time zone, so DST changes are handled. Anomalies are counted in the
:class:`EuroraReport` (``workload.meta["load_report"]``): exact duplicate lines (eight
historical batches list every job twice) are dropped, run times above the wall-time are
kept (the engine kills such jobs at the wall-time) unless ``overrun`` says otherwise.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np

from dispatchlab.errors import WorkloadError
from dispatchlab.platform.platform import CORES
from dispatchlab.traces.resolve import resolve_source
from dispatchlab.workload.input_file import input_file
from dispatchlab.workload.load_report import LoadReport, count
from dispatchlab.workload.workload import Queue, Workload

#: Expected waiting time (s) per queue, from the data set's ``system_configs/system_queues``.
EURORA_QUEUES: dict[str, int] = {
    "debug": 3600,
    "parallel": 21600,
    "np_longpar": 86400,
    "longpar": 86400,
    "reservation": 1800,
}
#: Local time zone of CINECA (Bologna), in which the date-times are written.
EURORA_TIMEZONE = "Europe/Rome"
#: Per-unit resources of a Eurora job, in Workload column order.
EURORA_RESOURCES = (CORES, "mem", "gpu", "mic")

Overrun = Literal["keep", "clip", "extend"]
Duplicates = Literal["drop", "error"]
CoresFrom = Literal["chunks", "requested"]
UnitsFrom = Literal["requested", "chunks"]

_RESERVATION = re.compile(r"^R\d*$")
_N_PRE = 5
_N_POST_MIN = 6


@dataclass(frozen=True)
class EuroraOptions:
    """How Eurora lines become jobs; every choice is counted in the report.

    - ``overrun``: a run time above the wall-time is ``keep`` (killed at the wall-time in
      simulation), ``clip`` (run time := wall-time) or ``extend`` (wall-time := run time).
    - ``duplicates``: exact duplicate lines are ``drop``ped or an ``error``; two different
      lines with one job id are always an error.
    - ``queues``: expected waiting times (s) added to / overriding :data:`EURORA_QUEUES`.
    - ``power_predictions``: a ``job_id;watts`` file (``eurora_power_predictions``) that
      fills the ``power`` column (jobs without a prediction get NaN).
    - ``cores``: cores per unit from the ``chunks`` (default) or ``requested`` total ÷ units
      (rounded up). They agree on every historical job; the synthetic batches' multi-node
      jobs give chunks of *units* cores next to 16 × units requested (counted as
      ``cores_mismatch``).
    - ``units``: job units from the ``requested`` nodes (default) or the number of
      ``chunks`` listed between the markers (PA-HPC-SIM's reading: its ``JobReader`` counts
      the chunks, so ``8;8;0;0;204800#8;8;0;0;204800#`` next to 1 requested node is a 2-unit
      job there). They differ on one line of the historical 100/200-job batches.
    - ``skip_bad_lines``: count and skip malformed lines instead of failing.
    """

    overrun: Overrun = "keep"
    cores: CoresFrom = "chunks"
    duplicates: Duplicates = "drop"
    queues: Mapping[str, int] | None = None
    timezone: str = EURORA_TIMEZONE
    power_predictions: str | None = None
    skip_bad_lines: bool = False
    units: UnitsFrom = "requested"

    def __post_init__(self) -> None:
        if self.overrun not in ("keep", "clip", "extend"):
            raise WorkloadError(
                f"overrun must be keep, clip or extend, not {self.overrun!r}", field="overrun"
            )
        if self.cores not in ("chunks", "requested"):
            raise WorkloadError(
                f"cores must be chunks or requested, not {self.cores!r}", field="cores"
            )
        if self.units not in ("requested", "chunks"):
            raise WorkloadError(
                f"units must be requested or chunks, not {self.units!r}", field="units"
            )
        if self.duplicates not in ("drop", "error"):
            raise WorkloadError(
                f"duplicates must be drop or error, not {self.duplicates!r}", field="duplicates"
            )
        for name, ewt in (self.queues or {}).items():
            if isinstance(ewt, bool) or not isinstance(ewt, int) or ewt < 0:
                raise WorkloadError(
                    f"expected waiting time of queue '{name}' must be a "
                    f"non-negative integer, got {ewt!r}",
                    field="queues",
                )
        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise WorkloadError(f"unknown time zone {self.timezone!r}", field="timezone") from None
        if self.power_predictions is not None:
            object.__setattr__(self, "power_predictions", str(self.power_predictions))


@dataclass(kw_only=True)
class EuroraReport(LoadReport):
    """What loading a Eurora batch did: lines read and every anomaly counted."""

    READ: ClassVar[str] = "lines"
    bad_lines_skipped: int = count("malformed lines skipped")
    duplicate_lines_dropped: int = count("duplicate lines dropped")
    runtime_over_walltime: int = count("run time above wall-time (killed at wall-time "
                                       "unless clipped/extended)")
    runtime_clipped: int = count("run time clipped to the wall-time")
    walltime_extended: int = count("wall-time extended to the run time")
    chunk_count_mismatch: int = count("chunk count differs from requested nodes (the "
                                      "option 'units' says which is used)")
    cores_mismatch: int = count("requested cores differ from units × chunk cores")
    heterogeneous_chunks: int = count("jobs with unequal chunks (largest per resource used)")
    reservation_queue: int = count("jobs of reservation queues ('R…') put in 'reservation'")
    unknown_queues: list[str] = field(default_factory=list)
    power_predicted: int = count("jobs with a power prediction")
    app_types: dict[str, int] = field(default_factory=dict)

    def notes(self) -> list[str]:
        """The queues whose expected wait is unknown."""
        if not self.unknown_queues:
            return []
        return [f"queues without a known expected wait: {', '.join(self.unknown_queues)}"]


@dataclass(slots=True)
class _Job:
    job_id: int
    app: str
    user: str
    queue: str
    arrival: int
    start: int
    end: int
    units: int
    chunks: int
    req: tuple[int, int, int, int]
    walltime: int
    app_type: str
    flags: tuple[str, ...]  # report counters this job adds to (counted once it is kept)


def load_eurora(path: str | Path, options: EuroraOptions | None = None) -> Workload:
    """Load one Eurora batch file as a :class:`Workload` (cores, mem [MB], gpu, mic)."""
    opts = options or EuroraOptions()
    p = input_file(path, folder_message="is a folder; load one batch file "
                   "(list_eurora_batches() lists them)")
    src = str(p)
    tz = ZoneInfo(opts.timezone)
    rep = EuroraReport(source=src)
    jobs: list[_Job] = []
    seen: dict[int, tuple[str, int]] = {}
    with open(p, encoding="utf-8", errors="replace") as fh:
        for lineno, raw in enumerate(fh, start=1):
            line = raw.strip()
            if not line:
                continue
            rep.records += 1
            try:
                job = _parse_line(line, tz, src, lineno, opts.cores)
            except WorkloadError:
                if opts.skip_bad_lines:
                    rep.bad_lines_skipped += 1
                    continue
                raise
            if job.job_id in seen:
                first_text, first_line = seen[job.job_id]
                if first_text != line or opts.duplicates == "error":
                    what = ("job id also used on line {} with different fields"
                            if first_text != line else "duplicate of line {}")
                    raise WorkloadError(what.format(first_line), source=src, line=lineno,
                                        job=job.job_id, field="job_id")
                rep.duplicate_lines_dropped += 1
                continue
            seen[job.job_id] = (line, lineno)
            jobs.append(job)
            for flag in job.flags:
                setattr(rep, flag, getattr(rep, flag) + 1)
    if not jobs:
        raise WorkloadError("no jobs in the file", source=src)

    n = len(jobs)
    arrival = np.fromiter((j.arrival for j in jobs), np.int64, n)
    start = np.fromiter((j.start for j in jobs), np.int64, n)
    end = np.fromiter((j.end for j in jobs), np.int64, n)
    walltime = np.fromiter((j.walltime for j in jobs), np.int64, n)
    runtime = end - start
    over = runtime > walltime
    rep.runtime_over_walltime = int(over.sum())
    if opts.overrun == "clip":
        rep.runtime_clipped = rep.runtime_over_walltime
        runtime = np.minimum(runtime, walltime)
    elif opts.overrun == "extend":
        rep.walltime_extended = rep.runtime_over_walltime
        walltime = np.maximum(walltime, runtime)
    req = np.array([j.req for j in jobs], dtype=np.int64).reshape(n, len(EURORA_RESOURCES))
    rep.app_types = dict(sorted(Counter(j.app_type for j in jobs).items()))

    table = dict(EURORA_QUEUES)
    table.update(opts.queues or {})
    names = [j.queue for j in jobs]
    rep.unknown_queues = sorted({q for q in names if q not in table})
    power = None
    if opts.power_predictions is not None:
        predicted = load_power_predictions(opts.power_predictions)
        power = np.array([predicted.get(j.job_id, math.nan) for j in jobs], dtype=np.float64)
        rep.power_predicted = int(np.isfinite(power).sum())
    rep.jobs = n
    origin = int(arrival.min())
    meta: dict[str, Any] = {
        "format": "eurora",
        "options": _options_dict(opts),
        "load_report": rep.as_dict(),
    }
    return Workload.from_columns(
        job_id=np.fromiter((j.job_id for j in jobs), np.int64, n),
        submit=arrival - origin,
        walltime=walltime,
        runtime=runtime,
        units=np.fromiter((j.chunks if opts.units == "chunks" else j.units for j in jobs),
                          np.int64, n),
        req={r: req[:, k] for k, r in enumerate(EURORA_RESOURCES)},
        queue=names,
        queues=[Queue(q, ewt) for q, ewt in table.items()],
        user=[j.user for j in jobs],
        app=[j.app for j in jobs],
        power=power,
        logged_wait=start - arrival,
        origin_unix=origin,
        timezone=opts.timezone,
        source=src,
        meta=meta,
    )


def _parse_line(line: str, tz: ZoneInfo, src: str, lineno: int, cores_from: CoresFrom) -> _Job:
    """One job from one line; a WorkloadError naming file, line and field otherwise."""

    def fail(msg: str, fld: str | None = None, job: int | None = None) -> WorkloadError:
        return WorkloadError(msg, source=src, line=lineno, job=job, field=fld)

    sections = line.split("__")
    if len(sections) != 3:
        raise fail(f"expected two '__' markers around the used nodes, found {len(sections) - 1}")
    pre, used, post = sections[0].split(";"), sections[1], sections[2].split(";")
    if len(pre) != _N_PRE:
        raise fail(
            f"expected {_N_PRE} ';'-separated fields before '__' (job id, executable, "
            f"user, queue, arrival), found {len(pre)}"
        )
    if len(post) < _N_POST_MIN:
        raise fail(
            f"expected at least {_N_POST_MIN} fields after '__' (start, end, nodes, "
            f"cores, memory, wall-time), found {len(post)}"
        )
    try:
        job_id = int(pre[0])
    except ValueError:
        raise fail(f"not an integer: {pre[0]!r}", "job_id") from None
    if job_id < 0:
        raise fail(f"negative job id {job_id}", "job_id")

    def when(text: str, fld: str) -> int:
        try:
            stamp = datetime.fromisoformat(text.strip())
        except ValueError:
            raise fail(f"not a date-time (YYYY-MM-DD HH:MM:SS): {text!r}", fld, job_id) from None
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=tz)
        return int(stamp.timestamp())

    def count(text: str, fld: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise fail(f"not an integer: {text!r}", fld, job_id) from None
        if v < 0:
            raise fail(f"negative value {v}", fld, job_id)
        return v

    arrival = when(pre[4], "arrival")
    start = when(post[0], "start")
    end = when(post[1], "end")
    if start < arrival:
        raise fail(f"start {post[0]} is before the arrival {pre[4]}", "start", job_id)
    if end < start:
        raise fail(f"end {post[1]} is before the start {post[0]}", "end", job_id)
    units = count(post[2], "requested_nodes")
    if units == 0:
        raise fail("a job needs at least one node", "requested_nodes", job_id)
    req_cores = count(post[3], "requested_cores")
    walltime = _walltime(post[5])
    if walltime is None:
        raise fail(f"not a wall-time HH:MM or HH:MM:SS: {post[5]!r}", "walltime", job_id)
    if walltime <= 0:
        raise fail("wall-time must be positive", "walltime", job_id)

    chunks: list[tuple[int, int, int, int]] = []
    for part in used.split("#"):
        if not part:
            continue
        fields = part.split(";")
        if len(fields) != 5:
            raise fail(
                f"used-node entry {part!r} should be node;cores;gpus;mics;memory_kb",
                "used_nodes",
                job_id,
            )
        c, g, m, kb = (count(x, "used_nodes") for x in fields[1:])
        chunks.append((c, -(-kb // 1024), g, m))
    if not chunks:
        raise fail("no used nodes between the '__' markers", "used_nodes", job_id)
    queue = pre[3].strip()
    if not queue:
        raise fail("empty queue name", "queue", job_id)
    flags: list[str] = []
    if _RESERVATION.match(queue):
        flags.append("reservation_queue")
        queue = "reservation"
    per_unit = chunks[0]
    if any(ch != per_unit for ch in chunks):
        flags.append("heterogeneous_chunks")
        per_unit = (
            max(ch[0] for ch in chunks),
            max(ch[1] for ch in chunks),
            max(ch[2] for ch in chunks),
            max(ch[3] for ch in chunks),
        )
    if len(chunks) != units:
        flags.append("chunk_count_mismatch")
    if units * per_unit[0] != req_cores:
        flags.append("cores_mismatch")
        if cores_from == "requested":
            per_unit = (-(-req_cores // units), per_unit[1], per_unit[2], per_unit[3])
    return _Job(
        job_id=job_id,
        app=pre[1],
        user=pre[2],
        queue=queue,
        arrival=arrival,
        start=start,
        end=end,
        units=units,
        chunks=len(chunks),
        req=per_unit,
        walltime=walltime,
        app_type=post[9].strip() if len(post) > 9 else "-",
        flags=tuple(flags),
    )


def _walltime(text: str) -> int | None:
    parts = text.strip().split(":")
    if len(parts) not in (2, 3) or not all(p.isdigit() for p in parts):
        return None
    h, m = int(parts[0]), int(parts[1])
    s = int(parts[2]) if len(parts) == 3 else 0
    if m >= 60 or s >= 60:
        return None
    return h * 3600 + m * 60 + s


def _options_dict(opts: EuroraOptions) -> dict[str, Any]:
    out = asdict(opts)
    out["queues"] = dict(opts.queues) if opts.queues is not None else None
    return out


def load_power_predictions(path: str | Path) -> dict[int, float]:
    """``job_id → watts`` from an ``eurora_power_predictions`` file (``498459.node129;93.0``)
    or ``trace:eurora-power-predictions``."""
    p = input_file(resolve_source(path), folder_message="is a folder, not a job_id;watts file")
    out: dict[int, float] = {}
    with open(p, encoding="utf-8") as fh:
        try:
            lines = fh.readlines()
        except UnicodeDecodeError:
            raise WorkloadError("not a UTF-8 text file (a compressed or binary file?); "
                                "expected job_id;watts lines", source=str(p)) from None
        for lineno, raw in enumerate(lines, start=1):
            line = raw.strip()
            if not line:
                continue
            key, sep, value = line.replace(",", ";").partition(";")
            try:
                job = int(key.split(".", 1)[0])
                watts = float(value)
            except ValueError:
                raise WorkloadError("expected job_id;watts", source=str(p), line=lineno) from None
            if not sep or not math.isfinite(watts) or watts < 0:
                raise WorkloadError(
                    "expected job_id;watts with non-negative watts", source=str(p), line=lineno
                )
            out[job] = watts
    return out


def load_system_queues(path: str | Path) -> dict[str, int]:
    """Queue name → expected waiting time (s) from a ``system_queues`` file."""
    p = input_file(path)
    out: dict[str, int] = {}
    for lineno, raw in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        parts = raw.split()
        if not parts:
            continue
        if len(parts) != 2 or not parts[1].isdigit():
            raise WorkloadError("expected 'queue seconds'", source=str(p), line=lineno)
        out[parts[0]] = int(parts[1])
    return out


def list_eurora_batches(folder: str | Path) -> list[Path]:
    """Every ``*.log_crypt`` batch below ``folder``, in natural order (50 before 100)."""
    root = Path(folder)
    if not root.is_dir():
        raise WorkloadError("not a folder", source=str(root))
    return sorted(root.rglob("*.log_crypt"), key=lambda f: _natural_key(f.relative_to(root)))


def _natural_key(path: Path) -> list[tuple[int, int | str]]:
    key: list[tuple[int, int | str]] = []
    for part in path.parts:
        for tok in re.split(r"(\d+)", part):
            if tok:
                key.append((0, int(tok)) if tok.isdigit() else (1, tok))
    return key
