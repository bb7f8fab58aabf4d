"""A workload: jobs held as columns (structure of arrays), sorted by submit time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import tzinfo
from typing import Any

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.errors import WorkloadError
from dispatchlab.workload.limits import COLUMN_LIMITS, MAX_ID, first_beyond, limit_text

#: Marker for "unknown" in integer columns (as in SWF).
UNKNOWN = -1


@dataclass(frozen=True)
class Queue:
    """A submission queue; ``ewt`` is its expected waiting time in seconds."""

    name: str
    ewt: int = 3600


@dataclass(frozen=True, eq=False)
class Workload:
    """Jobs as numpy columns, row ``i`` is job ``i`` (the engine's job index).

    Times are integer seconds relative to the workload origin. Each job asks for
    ``units[i]`` identical units needing ``req[i, r]`` of resource ``resources[r]`` on one
    node. ``walltime`` is the requested time (the kill limit), ``runtime`` the actual one.
    ``origin_unix`` / ``timezone`` give the absolute time of 0, when the source has one.
    ``array[i]`` ≥ 0 marks job ``i`` as an element of that job array (elements share
    submit time, request, wall-time and queue); ``hetjob[i]`` ≥ 0 marks it as a component
    of that heterogeneous job (components have their own request, share submit time,
    wall-time, run time and queue, and must start at the same instant). -1 = neither.

    Optional execution columns (:mod:`dispatchlab.engine.work`): a *malleable* job may run
    on any number of units in ``[min_units, max_units]`` (rigid: both equal ``units``),
    ``runtime`` on ``units`` units scaling as ``(units / n)^alpha`` on ``n``; ``data`` is
    what a reconfiguration must move; ``checkpoint`` > 0 is the interval (s of work) at
    which the job saves its progress (0: an aborted job restarts from zero).
    """

    job_id: IntArray
    submit: IntArray
    walltime: IntArray
    runtime: IntArray
    units: IntArray
    req: IntArray
    resources: tuple[str, ...]
    queue: IntArray
    queues: tuple[Queue, ...]
    user: IntArray
    users: tuple[str, ...]
    app: IntArray
    apps: tuple[str, ...]
    power: FloatArray
    est: IntArray
    lst: IntArray
    logged_wait: IntArray
    origin_unix: int | None = None
    timezone: str | None = None
    source: str = "<memory>"
    meta: Mapping[str, Any] = field(default_factory=dict)
    array: IntArray = field(default_factory=lambda: np.empty(0, np.int64))
    hetjob: IntArray = field(default_factory=lambda: np.empty(0, np.int64))
    min_units: IntArray = field(default_factory=lambda: np.empty(0, np.int64))
    max_units: IntArray = field(default_factory=lambda: np.empty(0, np.int64))
    alpha: FloatArray = field(default_factory=lambda: np.empty(0, np.float64))
    data: FloatArray = field(default_factory=lambda: np.empty(0, np.float64))
    checkpoint: IntArray = field(default_factory=lambda: np.empty(0, np.int64))

    def __post_init__(self) -> None:
        n = len(self.job_id)
        check_time_base(self.origin_unix, self.timezone, self.source)
        for name in ("array", "hetjob"):  # optional columns: empty = nobody is a member
            col = _ints(getattr(self, name))
            object.__setattr__(self, name, np.full(n, UNKNOWN, np.int64) if len(col) == 0
                               else col)
        units = np.asarray(self.units, dtype=np.int64)
        defaults: dict[str, tuple[Any, Any]] = {  # optional execution columns: rigid jobs
            "min_units": (units, np.int64), "max_units": (units, np.int64),
            "alpha": (1.0, np.float64), "data": (0.0, np.float64), "checkpoint": (0, np.int64)}
        for name, (default, dtype) in defaults.items():
            col = np.asarray(getattr(self, name))
            if len(col) == 0:
                col = np.array(np.broadcast_to(default, (n,)), dtype=dtype)
            else:
                col = _ints(col) if dtype is np.int64 else np.asarray(col, dtype=np.float64)
            object.__setattr__(self, name, col)
        for name in ("submit", "walltime", "runtime", "units", "queue", "user", "app",
                     "power", "est", "lst", "logged_wait", "array", "hetjob", *defaults):
            if len(getattr(self, name)) != n:
                raise WorkloadError(f"column has {len(getattr(self, name))} rows, expected {n}",
                                    source=self.source, field=name)
        if self.req.shape != (n, len(self.resources)):
            raise WorkloadError(f"req must be {n} × {len(self.resources)}", source=self.source,
                                field="req")
        for arr in (self.job_id, self.submit, self.walltime, self.runtime, self.units, self.req,
                    self.queue, self.user, self.app, self.power, self.est, self.lst,
                    self.logged_wait, self.array, self.hetjob, self.min_units, self.max_units,
                    self.alpha, self.data, self.checkpoint):
            arr.setflags(write=False)

    def __len__(self) -> int:
        return len(self.job_id)

    @property
    def n_jobs(self) -> int:
        """Number of jobs."""
        return len(self.job_id)

    @classmethod
    def from_columns(
        cls,
        *,
        submit: Sequence[int] | IntArray,
        walltime: Sequence[int] | IntArray,
        runtime: Sequence[int] | IntArray,
        units: Sequence[int] | IntArray,
        req: Mapping[str, Sequence[int] | IntArray],
        job_id: Sequence[int] | IntArray | None = None,
        queue: Sequence[str] | IntArray | None = None,
        queues: Sequence[Queue] | Mapping[str, int] | None = None,
        user: Sequence[str] | IntArray | None = None,
        app: Sequence[str] | IntArray | None = None,
        power: Sequence[float] | FloatArray | None = None,
        est: Sequence[int] | IntArray | None = None,
        lst: Sequence[int] | IntArray | None = None,
        logged_wait: Sequence[int] | IntArray | None = None,
        array: Sequence[int] | IntArray | None = None,
        hetjob: Sequence[int] | IntArray | None = None,
        min_units: Sequence[int] | IntArray | None = None,
        max_units: Sequence[int] | IntArray | None = None,
        alpha: Sequence[float] | FloatArray | None = None,
        data: Sequence[float] | FloatArray | None = None,
        checkpoint: Sequence[int] | IntArray | None = None,
        origin_unix: int | None = None,
        timezone: str | None = None,
        source: str = "<memory>",
        meta: Mapping[str, Any] | None = None,
        validate: bool = True,
    ) -> Workload:
        """Build and validate a workload from plain columns; rows are sorted by submit time."""
        sub = _ints(submit)
        n = len(sub)
        jid = np.arange(1, n + 1, dtype=np.int64) if job_id is None else _ints(job_id)
        resources = tuple(req)
        req_m = (np.column_stack([_ints(req[r]) for r in resources]) if resources
                 else np.zeros((n, 0), np.int64)).reshape(n, len(resources))
        queue_objs, queue_idx = _encode_queues(queue, queues, n, source)
        users, user_idx = _encode(user, n, "-")
        apps, app_idx = _encode(app, n, "-")
        cols: dict[str, Any] = {
            "job_id": jid,
            "submit": sub,
            "walltime": _ints(walltime),
            "runtime": _ints(runtime),
            "units": _ints(units),
            "req": req_m,
            "queue": queue_idx,
            "user": user_idx,
            "app": app_idx,
            "power": (np.full(n, np.nan) if power is None
                      else np.asarray(power, dtype=np.float64)),
            "est": np.full(n, UNKNOWN, np.int64) if est is None else _ints(est),
            "lst": np.full(n, UNKNOWN, np.int64) if lst is None else _ints(lst),
            "logged_wait": (np.full(n, UNKNOWN, np.int64) if logged_wait is None
                            else _ints(logged_wait)),
            "array": np.full(n, UNKNOWN, np.int64) if array is None else _ints(array),
            "hetjob": np.full(n, UNKNOWN, np.int64) if hetjob is None else _ints(hetjob),
        }
        units_i = cols["units"]
        cols["min_units"] = units_i.copy() if min_units is None else _ints(min_units)
        cols["max_units"] = units_i.copy() if max_units is None else _ints(max_units)
        cols["alpha"] = np.ones(n) if alpha is None else np.asarray(alpha, dtype=np.float64)
        cols["data"] = np.zeros(n) if data is None else np.asarray(data, dtype=np.float64)
        cols["checkpoint"] = (np.zeros(n, np.int64) if checkpoint is None
                              else _ints(checkpoint))
        order = np.lexsort((cols["job_id"], cols["submit"]))
        if not np.array_equal(order, np.arange(n)):
            cols = {k: v[order] for k, v in cols.items()}
        wl = cls(resources=resources, queues=queue_objs, users=users, apps=apps,
                 origin_unix=origin_unix, timezone=timezone, source=source,
                 meta=dict(meta or {}), **cols)
        if validate:
            wl.validate()
        return wl

    def validate(self) -> None:
        """Check every job; raise a WorkloadError naming the first bad job and field."""
        for name in COLUMN_LIMITS:
            i = first_beyond(name, np.asarray(getattr(self, name)))
            if i is not None:
                value = np.asarray(getattr(self, name))[i]
                shown = int(value.max() if value.ndim else value)
                raise WorkloadError(f"value {shown:g} is beyond {limit_text(COLUMN_LIMITS[name])}",
                                    source=self.source, job=int(self.job_id[i]), field=name)
        checks: list[tuple[str, npt.NDArray[np.bool_], str]] = [
            ("submit", self.submit < 0, "negative submit time"),
            ("walltime", self.walltime <= 0, "requested time must be positive"),
            ("runtime", self.runtime < 0, "negative run time"),
            ("units", self.units <= 0, "a job needs at least one unit"),
            ("req", np.asarray((self.req < 0).any(axis=1)), "negative resource request"),
            ("req", np.asarray((self.req == 0).all(axis=1)), "a unit must request some resource"),
            ("queue", (self.queue < 0) | (self.queue >= max(len(self.queues), 1)),
             "unknown queue"),
            ("min_units", (self.min_units < 1) | (self.min_units > self.units),
             "min_units must be within [1, units]"),
            ("max_units", self.max_units < self.units, "max_units must be at least units"),
            ("alpha", ~((self.alpha > 0) & (self.alpha <= 1)), "alpha must be within (0, 1]"),
            ("data", ~(self.data >= 0), "data must be a non-negative number"),
            ("checkpoint", self.checkpoint < 0, "checkpoint interval must be ≥ 0"),
        ]
        for fld, bad, msg in checks:
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise WorkloadError(f"{msg} ({int(bad.sum())} job(s) affected)",
                                    source=self.source, job=int(self.job_id[i]), field=fld)
        self._validate_groups("array", ("submit", "walltime", "units", "queue"), True)
        self._validate_groups("hetjob", ("submit", "walltime", "runtime", "queue"), False)
        ids = self.job_id
        increasing = len(ids) < 2 or bool((ids[1:] > ids[:-1]).all())  # the usual case
        if not increasing and len(np.unique(ids)) != len(ids):
            vals, counts = np.unique(self.job_id, return_counts=True)
            raise WorkloadError("duplicate job id", source=self.source,
                                job=int(vals[counts > 1][0]), field="job_id")

    def _validate_groups(self, column: str, shared: tuple[str, ...], same_req: bool) -> None:
        """Members of one array / heterogeneous job must agree on the ``shared`` fields."""
        ids = getattr(self, column)
        member = np.flatnonzero(ids >= 0)
        if not len(member):
            return
        order = member[np.argsort(ids[member], kind="stable")]
        first = np.r_[True, ids[order][1:] != ids[order][:-1]]
        lead = order[np.maximum.accumulate(np.where(first, np.arange(len(order)), 0))]
        checks = [(f, getattr(self, f)) for f in shared]
        if same_req:
            checks.append(("req", self.req))
        for fld, col in checks:
            differ = col[order] != col[lead]
            if differ.ndim > 1:
                differ = differ.any(axis=1)
            if differ.any():
                k = int(np.flatnonzero(differ)[0])
                what = "job array" if column == "array" else "heterogeneous job"
                raise WorkloadError(
                    f"{what} {int(ids[order[k]])}: {fld} differs from job "
                    f"{int(self.job_id[lead[k]])} of the same {what}",
                    source=self.source, job=int(self.job_id[order[k]]), field=fld)

    def take(self, index: IntArray | slice) -> Workload:
        """A new workload with the selected rows (order kept)."""
        cols = {k: getattr(self, k)[index] for k in _ROW_COLUMNS}
        return replace(self, **cols)

    def ewt(self) -> IntArray:
        """Each job's queue expected waiting time (seconds)."""
        table = np.array([q.ewt for q in self.queues] or [0], dtype=np.int64)
        return np.asarray(table[self.queue], dtype=np.int64)

    def req_of(self, resource: str) -> IntArray:
        """Per-unit request of one resource (zeros when the workload never asks for it)."""
        if resource not in self.resources:
            return np.zeros(self.n_jobs, np.int64)
        return np.asarray(self.req[:, self.resources.index(resource)], dtype=np.int64)

    def to_frame(self) -> Any:
        """The workload as a pandas DataFrame (one row per job, readable labels)."""
        import pandas as pd

        data: dict[str, Any] = {
            "job_id": self.job_id,
            "submit": self.submit,
            "walltime": self.walltime,
            "runtime": self.runtime,
            "units": self.units,
        }
        for r, name in enumerate(self.resources):
            data[f"req_{name}"] = self.req[:, r]
        data["queue"] = np.array([q.name for q in self.queues], dtype=object)[self.queue] \
            if self.queues else "-"
        data["user"] = np.array(self.users, dtype=object)[self.user] if self.users else "-"
        data["app"] = np.array(self.apps, dtype=object)[self.app] if self.apps else "-"
        data["power"] = self.power
        data["est"] = self.est
        data["lst"] = self.lst
        data["logged_wait"] = self.logged_wait
        if (self.array >= 0).any():
            data["array"] = self.array
        if (self.hetjob >= 0).any():
            data["hetjob"] = self.hetjob
        if self.is_malleable:
            data.update(min_units=self.min_units, max_units=self.max_units, alpha=self.alpha,
                        data=self.data)
        if (self.checkpoint > 0).any():
            data["checkpoint"] = self.checkpoint
        return pd.DataFrame(data)

    @property
    def is_malleable(self) -> bool:
        """True when some job may run on another number of units than it asks for."""
        return bool(((self.min_units != self.units) | (self.max_units != self.units)).any())


_ROW_COLUMNS = ("job_id", "submit", "walltime", "runtime", "units", "req", "queue", "user",
                "app", "power", "est", "lst", "logged_wait", "array", "hetjob", "min_units",
                "max_units", "alpha", "data", "checkpoint")


def _ints(values: Sequence[int] | IntArray) -> IntArray:
    arr = np.asarray(values)
    if arr.dtype.kind == "f":
        if np.isnan(arr).any():
            raise WorkloadError("missing value in an integer column")
        if (np.abs(arr) >= 2.0**63).any():
            raise WorkloadError(f"value {np.abs(arr).max():g} is beyond {limit_text(MAX_ID)}")
        arr = np.rint(arr)
    try:
        return np.ascontiguousarray(arr, dtype=np.int64)
    except OverflowError:
        raise WorkloadError(f"a value is beyond {limit_text(MAX_ID)}") from None


def _encode(
    values: Sequence[str] | IntArray | None, n: int, default: str
) -> tuple[tuple[str, ...], IntArray]:
    """Categories and codes; numeric input is labelled by its decimal value."""
    if values is None:
        return (default,), np.zeros(n, np.int64)
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        cats_i, idx = np.unique(arr, return_inverse=True)
        return tuple(str(int(c)) for c in cats_i), idx.astype(np.int64).reshape(-1)
    cats, idx = np.unique(arr.astype(str), return_inverse=True)
    return tuple(str(c) for c in cats), idx.astype(np.int64).reshape(-1)


def _encode_queues(
    queue: Sequence[str] | IntArray | None,
    queues: Sequence[Queue] | Mapping[str, int] | None,
    n: int,
    source: str,
) -> tuple[tuple[Queue, ...], IntArray]:
    if isinstance(queues, Mapping):
        defined = [Queue(name, int(ewt)) for name, ewt in queues.items()]
    else:
        defined = list(queues or [])
    if queue is None:
        if not defined:
            defined = [Queue("default")]
        return tuple(defined), np.zeros(n, np.int64)
    names_t, idx = _encode(queue, n, "default")
    names = list(names_t)
    by_name = {q.name: q for q in defined}
    order = [q.name for q in defined]
    for name in names:
        if name not in by_name:
            by_name[name] = Queue(str(name))
            order.append(str(name))
    position = {name: i for i, name in enumerate(order)}
    remap = np.array([position[str(name)] for name in names], dtype=np.int64)
    return tuple(by_name[name] for name in order), remap[idx]


#: Latest accepted ``origin_unix`` (year ~5138): later dates are not representable.
MAX_ORIGIN = 10**11


def zone_or_utc(name: str | None) -> tzinfo:
    """The IANA zone ``name`` for writing dates; UTC when it is None or unknown."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name) if name else ZoneInfo("UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def check_time_base(origin: object, timezone: object, source: str | None) -> None:
    """``origin_unix`` an integer in ``[0, 10¹¹]`` (or None), ``timezone`` a known IANA zone
    name (or None): an unknown zone used to become UTC without a word."""
    if origin is not None and (isinstance(origin, bool) or not isinstance(origin, (int, np.integer))
                               or not 0 <= int(origin) <= MAX_ORIGIN):
        raise WorkloadError(f"must be whole Unix seconds between 0 and {MAX_ORIGIN:.0e}, got "
                            f"{origin!r}", source=source, field="origin_unix")
    if timezone is not None:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(str(timezone))
        except (ZoneInfoNotFoundError, ValueError):
            raise WorkloadError(f"unknown time zone {timezone!r} (an IANA name such as "
                                "Europe/Rome)", source=source, field="timezone") from None
