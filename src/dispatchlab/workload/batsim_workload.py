"""Batsim workloads (JSON): read them as dispatchlab workloads and write any workload as one.

A Batsim workload is ``{"nb_res": N, "jobs": [...], "profiles": {...}}``; each job has an
``id`` (a number or a string, ``"w0!12"`` naming workload ``w0``), a ``subtime`` (s), a
``walltime`` (s; absent or -1: none), ``res`` (resources = Batsim hosts) and a
``profile`` naming what it runs. Run times come from the profile, under every type name
Batsim has used (renamed in 3.0 and again in 5.0, see its ``docs/changelog.rst`` and
``src/profiles.cpp``; the 5.0 development name ``ptask_homogeneous`` is still in one of
its test workloads):

- a delay (``delay``; 5.0: ``DelayProfile``): ``delay`` seconds;
- a homogeneous parallel task (``msg_par_hg`` before 3.0, ``parallel_homogeneous`` in
  3.0-4.x, ``ptask_homogeneous`` in 5.0 development, ``ParallelTaskHomogeneousProfile`` in
  5.0): each host computes ``cpu`` flops, so ``cpu / speed`` seconds on hosts of
  ``speed`` flop/s (give ``speed`` or a SimGrid ``platform`` file);
- its *total* variant (``msg_par_hg_tot``, ``parallel_homogeneous_total``, or the
  homogeneous type with ``generation_strategy`` ``DefinedAmountsSpreadUniformly``): the
  ``cpu`` flops are spread over the job's ``res`` hosts, ``cpu / res / speed`` seconds;
- the ``com`` bytes exchanged are not modelled (counted as ``communication_ignored``);
- any other type (``ParallelTaskProfile`` / ``parallel``, compositions, SMPI and usage
  trace replays, …) needs Batsim's network simulation: such jobs are dropped and counted
  per type (``dropped_profiles``), or are an error with ``unsupported="error"``.

Each Batsim resource is one unit of one core (a Batsim host running one job at a time);
with a ``platform`` file each unit is a whole host of its ``core`` count. Fractional
times are rounded (submit) or rounded up (run time, walltime) to whole seconds, counted.

The writer gives every job a delay profile of its run time, typed as the Batsim version
asked for reads it (``DelayProfile`` from 5.0, the default; ``delay`` before), ``res`` =
its units, and keeps what Batsim ignores but dispatchlab needs to read the same workload
back in extra fields (Batsim up to 4.x forwards a job's unknown fields to the scheduler;
5.0 reads the fields it knows, ``src/jobs.cpp``, and skips the others): ``user``,
``queue``, ``app``, ``logged_wait``, array/heterogeneous ids and, when a unit is not one
core, ``req``; top-level ``dispatchlab`` holds the origin, time zone and queue table.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from dispatchlab.atomic_output import atomic_output
from dispatchlab.errors import WorkloadError
from dispatchlab.platform.platform import CORES
from dispatchlab.workload.accounting import requested_times
from dispatchlab.workload.limits import MAX_ID, MAX_SECONDS, limit_text, too_big
from dispatchlab.workload.load_report import LoadReport, header_number
from dispatchlab.workload.workload import UNKNOWN, Queue, Workload

#: Profile type names with a run time here, by what they compute (every name Batsim used).
DELAY_PROFILES = ("delay", "DelayProfile")
HOMOGENEOUS_PROFILES = ("msg_par_hg", "parallel_homogeneous", "ptask_homogeneous",
                        "ParallelTaskHomogeneousProfile")
TOTAL_PROFILES = ("msg_par_hg_tot", "parallel_homogeneous_total")
SUPPORTED_PROFILES = DELAY_PROFILES + HOMOGENEOUS_PROFILES + TOTAL_PROFILES
#: ``generation_strategy`` values that spread ``cpu`` over the hosts (5.0, 5.0 development).
SPREAD_STRATEGIES = ("DefinedAmountsSpreadUniformly", "defined_amount_spread_uniformly")
#: Batsim major versions the writer knows, and the current one (its default).
BATSIM_VERSIONS = (1, 2, 3, 4, 5)
CURRENT_BATSIM = 5


def delay_profile_type(version: int | str = CURRENT_BATSIM) -> str:
    """The delay profile's type name in Batsim ``version`` (``5``, ``"4.2.1"``, …)."""
    text = str(version).strip().lstrip("v")
    major = text.split(".", 1)[0]
    if not major.isdigit() or int(major) not in BATSIM_VERSIONS:
        raise WorkloadError(f"unknown Batsim version {version!r} (known: "
                            f"{', '.join(map(str, BATSIM_VERSIONS))})", field="batsim_version")
    return "DelayProfile" if int(major) >= 5 else "delay"


@dataclass(frozen=True)
class BatsimOptions:
    """How a Batsim workload becomes jobs.

    - ``speed``: flop/s of a host, for homogeneous parallel task profiles.
    - ``platform``: a SimGrid/Batsim platform XML giving the hosts' cores and speed (a
      speed is needed only by profiles that compute: hosts of several speeds are an error
      only then).
    - ``unsupported``: jobs whose profile has no run time here are ``drop``ped (counted)
      or an ``error``.
    """

    speed: float | None = None
    platform: str | None = None
    unsupported: Literal["drop", "error"] = "drop"

    def __post_init__(self) -> None:
        if self.speed is not None and not (self.speed > 0 and math.isfinite(self.speed)):
            raise WorkloadError("speed must be a positive number of flop/s", field="speed")
        if self.unsupported not in ("drop", "error"):
            raise WorkloadError("unsupported must be drop or error", field="unsupported")


@dataclass(kw_only=True)
class BatsimReport(LoadReport):
    """What reading a Batsim workload did."""

    format: str = "batsim"
    dropped_profiles: dict[str, int] = field(default_factory=dict)
    dropped_unsupported_profile: int = 0
    communication_ignored: int = 0
    estimate_from_runtime: int = 0
    runtime_over_request: int = 0
    fractional_times_rounded: int = 0
    job_ids_assigned: int = 0
    header: dict[str, str] = field(default_factory=dict)


def load_batsim(path: str | Path, options: BatsimOptions | None = None) -> Workload:
    """Load a Batsim workload JSON file as a workload."""
    opts = options or BatsimOptions()
    p = Path(path)
    src = str(p)
    doc = _read_json(p)
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
        raise WorkloadError("not a Batsim workload: expected an object with a 'jobs' list",
                            source=src, field="jobs")
    profiles = doc.get("profiles", {})
    if not isinstance(profiles, dict):
        raise WorkloadError("must be an object of named profiles", source=src,
                            field="profiles")
    speed, cores_per_host = opts.speed, 1
    no_speed = "give speed=flop/s or platform=a SimGrid XML"
    if opts.platform is not None:
        from dispatchlab.platform.simgrid import read_simgrid_platform

        plat = read_simgrid_platform(opts.platform)
        cores_per_host = plat.uniform_cores()
        if speed is None and len(set(plat.speeds)) == 1:
            speed = plat.speeds[0]
        elif speed is None:
            no_speed = (f"its hosts have {len(set(plat.speeds))} different speeds in "
                        f"{plat.source}; give speed=flop/s")
    extra: dict[str, Any] = doc["dispatchlab"] if isinstance(doc.get("dispatchlab"), dict) \
        else {}
    report = BatsimReport(source=src, records=len(doc["jobs"]))
    nb_res = doc.get("nb_res")
    if nb_res is not None:
        if isinstance(nb_res, bool) or not isinstance(nb_res, int) or nb_res <= 0:
            raise WorkloadError(f"must be a positive integer, got {nb_res!r}", source=src,
                                field="nb_res")
        report.header = {"MaxNodes": str(nb_res), "MaxProcs": str(nb_res * cores_per_host)}
    rows: list[dict[str, Any]] = []
    dropped: Counter[str] = Counter()
    for k, job in enumerate(doc["jobs"]):
        row = _job_row(job, k, profiles, speed, src, report, no_speed)
        if isinstance(row, str):
            if opts.unsupported == "error":
                raise WorkloadError(f"profile type '{row}' has no run time outside Batsim "
                                    f"(supported: {', '.join(SUPPORTED_PROFILES)})",
                                    source=src, job=_job_number(job), field="profile")
            dropped[row] += 1
            continue
        rows.append(row)
    report.dropped_profiles = dict(sorted(dropped.items()))
    report.dropped_unsupported_profile = sum(dropped.values())
    _assign_ids(rows, report)
    return _workload(rows, extra, cores_per_host, report, src)


def _read_json(p: Path) -> Any:
    from dispatchlab.workload.delimited import read_bytes

    try:
        return json.loads(read_bytes(p))
    except json.JSONDecodeError as exc:
        raise WorkloadError(f"invalid JSON: {exc.msg} (column {exc.colno})", source=str(p),
                            line=exc.lineno) from None


def _job_number(job: Any) -> int | None:
    jid = job.get("id") if isinstance(job, dict) else None
    text = str(jid).rsplit("!", 1)[-1] if jid is not None else ""
    return int(text) if text.isdigit() else None


def _number(job: dict[str, Any], key: str, src: str, k: int, *, required: bool = True,
            positive: bool = False, limit: int | None = MAX_SECONDS) -> float | None:
    value = job.get(key)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise WorkloadError(f"job #{k + 1}: must be a number, got {value!r}", source=src,
                            job=_job_number(job), field=key)
    if value < 0 or (positive and value <= 0):
        raise WorkloadError(f"job #{k + 1}: must be {'positive' if positive else '≥ 0'}, "
                            f"got {value!r}", source=src, job=_job_number(job), field=key)
    if limit is not None and too_big(value, limit):
        raise WorkloadError(f"job #{k + 1}: {value:g} is beyond {limit_text(limit)}",
                            source=src, job=_job_number(job), field=key)
    return float(value)


def _whole(value: Any, src: str, where: str, limit: int) -> int:
    """``value`` as a whole number within ``±limit``; a WorkloadError naming ``where``
    otherwise (a string or 1e300 used to end in a ValueError or OverflowError)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            too_big(value, limit) or value != int(value):
        raise WorkloadError(f"must be a whole number below {limit_text(limit)}, got "
                            f"{value!r}", source=src, field=where)
    return int(value)


def _job_row(job: Any, k: int, profiles: dict[str, Any], speed: float | None, src: str,
             report: BatsimReport, no_speed: str) -> dict[str, Any] | str:
    """The job's columns, or the name of its unsupported profile type (``no_speed``: what
    to say when a computing profile has no speed)."""
    if not isinstance(job, dict):
        raise WorkloadError(f"job #{k + 1} is not an object", source=src, field="jobs")
    if "id" not in job:
        raise WorkloadError(f"job #{k + 1} has no id", source=src, field="id")
    subtime = _number(job, "subtime", src, k)
    res = _number(job, "res", src, k, positive=True, limit=MAX_ID)
    assert subtime is not None and res is not None
    if res != int(res):
        raise WorkloadError(f"job #{k + 1}: must be a whole number of resources, got {res}",
                            source=src, job=_job_number(job), field="res")
    walltime = job.get("walltime")
    wall = None if walltime is None or walltime == -1 else _number(job, "walltime", src, k)
    name = job.get("profile")
    profile = profiles.get(name) if isinstance(name, str) else None
    if not isinstance(profile, dict):
        raise WorkloadError(f"job #{k + 1}: profile {name!r} is not defined in 'profiles'",
                            source=src, job=_job_number(job), field="profile")
    kind = profile.get("type")
    if kind in DELAY_PROFILES:
        run = _number(profile, "delay", src, k)
    elif kind in HOMOGENEOUS_PROFILES or kind in TOTAL_PROFILES:
        cpu = _number(profile, "cpu", src, k, limit=None)
        if speed is None:
            raise WorkloadError(f"profile {name!r} is {kind}: its run time needs the hosts' "
                                f"speed ({no_speed})", source=src, job=_job_number(job),
                                field="profile")
        assert cpu is not None
        spread = (kind in TOTAL_PROFILES
                  or profile.get("generation_strategy") in SPREAD_STRATEGIES)
        run = cpu / (res if spread else 1.0) / speed
        if too_big(run, MAX_SECONDS):
            raise WorkloadError(f"job #{k + 1}: run time cpu / speed = {run:g} s is beyond "
                                f"{limit_text(MAX_SECONDS)}", source=src,
                                job=_job_number(job), field="cpu")
        if (profile.get("com") or 0) > 0:
            report.communication_ignored += 1
    else:
        return str(kind)
    assert run is not None
    fractional = subtime != int(subtime) or run != int(run) or (wall is not None
                                                                and wall != int(wall))
    report.fractional_times_rounded += int(fractional)
    return {"id": job["id"], "subtime": round(subtime), "walltime": wall,
            "runtime": math.ceil(run), "res": int(res), "job": job}


def _assign_ids(rows: list[dict[str, Any]], report: BatsimReport) -> None:
    """Integer job ids: the number in ``"w0!12"`` / ``12`` / ``"12"``; fresh ones above the
    largest for other ids or repeats (counted)."""
    ids: list[int | None] = []
    seen: set[int] = set()
    for row in rows:
        text = str(row["id"]).rsplit("!", 1)[-1]
        num = int(text) if text.isdigit() else None
        if num is not None and num >= MAX_ID:
            raise WorkloadError(f"job id {row['id']} is beyond {limit_text(MAX_ID)}",
                                source=report.source, field="id")
        if num is not None and num in seen:
            num = None
        if num is not None:
            seen.add(num)
        ids.append(num)
    top = max(seen, default=0)
    for row, num in zip(rows, ids, strict=True):
        if num is None:
            top += 1
            num = top
            report.job_ids_assigned += 1
        row["job_id"] = num


def _workload(rows: list[dict[str, Any]], extra: dict[str, Any], cores_per_host: int,
              report: BatsimReport, src: str) -> Workload:
    n = len(rows)
    jobs = [r["job"] for r in rows]
    runtime = np.array([r["runtime"] for r in rows], np.int64)
    wall = np.array([np.nan if r["walltime"] is None else r["walltime"] for r in rows],
                    np.float64)
    walltime, _ = requested_times(wall, runtime, report)
    submit = np.array([r["subtime"] for r in rows], np.int64)
    req_extra = [j.get("req") if isinstance(j.get("req"), dict) else None for j in jobs]
    named = extra.get("resources")
    resources = ([str(r) for r in named] if isinstance(named, list) and named
                 else sorted({str(k) for r in req_extra if r for k in r}) or [CORES])
    req = {name: np.array([_whole((r or {}).get(name, cores_per_host if name == CORES else 0),
                                  src, f"req.{name} of job {rows[k]['id']}", MAX_ID)
                           for k, r in enumerate(req_extra)], np.int64) for name in resources}
    queues = [Queue(str(q["name"]), _whole(q.get("ewt", 3600), src,
                                           f"dispatchlab.queues[{k}].ewt", MAX_SECONDS))
              for k, q in enumerate(extra.get("queues", []))
              if isinstance(q, dict) and "name" in q]

    def labels(key: str, default: str) -> list[str]:
        return [str(j.get(key, default)) for j in jobs]

    def ints(key: str) -> np.ndarray:
        return np.array([_whole(j.get(key, UNKNOWN), src, f"{key} of job {rows[k]['id']}",
                                MAX_ID)
                         for k, j in enumerate(jobs)], np.int64)

    origin = extra.get("origin_unix")
    report.jobs = n
    meta = {"format": "batsim", "load_report": report.as_dict()}
    return Workload.from_columns(
        job_id=np.array([r["job_id"] for r in rows], np.int64), submit=submit,
        walltime=walltime, runtime=runtime, units=np.array([r["res"] for r in rows], np.int64),
        req=req, queue=labels("queue", queues[0].name if queues else "default") if n else None,
        queues=queues or None, user=labels("user", "-") if n else None,
        app=labels("app", "-") if n else None, logged_wait=ints("logged_wait"),
        array=ints("array"), hetjob=ints("hetjob"),
        origin_unix=int(origin) if isinstance(origin, int) else None,
        timezone=extra.get("timezone") if isinstance(extra.get("timezone"), str) else None,
        source=src, meta=meta)


def write_batsim(workload: Workload, path: str | Path, *, nb_res: int | None = None,
                 workload_name: str | None = None,
                 batsim_version: int | str = CURRENT_BATSIM) -> Path:
    """Write ``workload`` as a Batsim workload JSON (see the module docstring), its delay
    profiles typed for ``batsim_version``.

    ``nb_res`` (the platform's resource count) defaults to the SWF header's ``MaxProcs``
    for 1-core units, else the widest job's units.
    """
    wl = workload
    p = Path(path)
    delay_type = delay_profile_type(batsim_version)
    one_core = wl.resources == (CORES,) and bool((wl.req[:, 0] == 1).all())
    if nb_res is None:
        nb_res = header_number(wl.meta, "MaxProcs") if one_core else None
        nb_res = nb_res or (int(wl.units.max()) if wl.n_jobs else 1)
    if wl.n_jobs and nb_res < int(wl.units.max()):
        raise WorkloadError(f"nb_res {nb_res} is below the widest job's {int(wl.units.max())} "
                            "resources", source=str(p), field="nb_res")
    queue_names = [q.name for q in wl.queues]
    users, apps = np.array(wl.users, dtype=object), np.array(wl.apps, dtype=object)
    qn = np.array(queue_names, dtype=object)
    delays = np.unique(wl.runtime)
    prefix = f"{workload_name}!" if workload_name else ""
    cols: dict[str, list[Any]] = {
        "id": [f"{prefix}{int(j)}" if prefix else int(j) for j in wl.job_id],
        "subtime": wl.submit.tolist(), "walltime": wl.walltime.tolist(),
        "res": wl.units.tolist(), "profile": [f"delay_{int(r)}" for r in wl.runtime],
        "user": users[wl.user].tolist(), "queue": qn[wl.queue].tolist(),
        "app": apps[wl.app].tolist(), "logged_wait": wl.logged_wait.tolist(),
    }
    for name in ("array", "hetjob"):
        col = getattr(wl, name)
        if (col >= 0).any():
            cols[name] = col.tolist()
    if not one_core:
        cols["req"] = [dict(zip(wl.resources, row, strict=True))
                       for row in wl.req.tolist()]
    keys = list(cols)
    jobs = [dict(zip(keys, values, strict=True)) for values in zip(*cols.values(), strict=True)]
    doc: dict[str, Any] = {
        "nb_res": int(nb_res),
        "jobs": jobs,
        "profiles": {f"delay_{int(d)}": {"type": delay_type, "delay": int(d)} for d in delays},
        "dispatchlab": {"source": wl.source, "origin_unix": wl.origin_unix,
                        "resources": list(wl.resources),
                        "timezone": wl.timezone,
                        "queues": [{"name": q.name, "ewt": q.ewt} for q in wl.queues]},
    }
    with atomic_output(p) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(doc, separators=(",", ":")))  # the C encoder: ~5× json.dump
        fh.write("\n")
    return p


