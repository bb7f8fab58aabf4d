"""The Curie-based workloads of Bridi's thesis ch. 6 (§6.8.1) and ch. 7 (§7.6), as close as
our trace allows.

The thesis extracts from the CEA Curie log a **low** workload (8,125 jobs submitted in 30
days) and a **high** one (33,583 jobs in 23 days) for a machine of 300 nodes × 32 cores ×
128 GB, and draws each job's power per core from U(7.8, 11.11) W. It does not say which days
or which jobs. Its machine is 300 of Curie's 360 *fat* nodes (ch. 5: "tested on 300 out of
360 of the fat nodes"), the only nodes of 2011; the cleaned log we have
(``CEA-Curie-2011-2.1-cln.swf.gz``) starts in February 2012, so the thesis's windows are not
in it. Our substitutes, from the fat-node partition (``large``, partition 4 of the log; jobs
of at most 9,600 processors, i.e. that fit the machine):

- **low**: every ``large`` job submitted in the 30 days from 2012-07-11 00:00 (Paris):
  8,165 jobs (thesis 8,125), offered load ≈ 0.62 of 9,600 cores.
- **high**: no 23 days of the ``large`` partition hold 33,583 jobs (at most ≈ 21,500). We
  take the 33,583 consecutive ``large`` jobs from 2012-08-28 00:00 (Paris), which span
  45.7 days, and compress their submission times linearly onto 23 days (offered load ≈ 1.39:
  the queue keeps growing while jobs arrive and drains after day 23, as the thesis's
  Fig. 6.6 shows for its high workload).

Ch. 7's three traces (low 3,207 jobs in 30 days, medium 8,125 in 30 days, high 10,892 in
23 days; which days is not said):

- **ch7-medium**: the ch. 6 ``low`` window (8,165 jobs, load 0.62);
- **ch7-high**: the 23 days from 2012-03-07, 10,861 jobs (load 0.98), the 23-day window
  whose count is closest to 10,892;
- **ch7-low**: no 30-day window holds as few as 3,207 jobs (the fewest: 4,670 from
  2012-02-06); that window thinned to 3,207 jobs drawn uniformly at random (seed 0),
  load ≈ 0.4 — a thinning, not a window of the log.

Queue: every job is in queue ``large`` whose expected wait is the mean wait of the whole
log's ``large`` partition (11,400 s, 3.17 h), the thesis's ``aqt(partition)``: DARDIS
takes ``lst = est + aqt`` (ch. 5, §5.5).

Jobs: ``p`` = allocated processors; records without a run time or with no allocated
processor (jobs cancelled before they started) are dropped (counted in ``meta``). Units:
``n = ceil(p / 32)`` units of ``p / n`` cores when that divides, else ``p`` one-core units
(so a job holds exactly ``p`` cores). Wall-time: the requested time, or the run time when
missing or shorter. Power: the whole job's W = ``p`` × U(7.8, 11.11) W (seeded). Times
count from midnight (Europe/Paris) of the first day, so ``submit % 86400`` is the time of
day, as the temperature profiles (``gen:temperature``) assume.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

from dispatchlab.errors import WorkloadError
from dispatchlab.keyvalue import parse_int
from dispatchlab.traces.resolve import resolve_source
from dispatchlab.workload.generators.registry import canonical_spec, register_generator
from dispatchlab.workload.workload import Workload

#: The cleaned Curie log, through the trace catalogue (a local copy, else fetched once).
DEFAULT_TRACE = "trace:CEA-Curie"
#: The fat-node partition of the log (``; Partition: 4 large``).
LARGE = 4
CORES_PER_NODE = 32
MACHINE_CORES = 300 * CORES_PER_NODE
#: Job power per core, W (thesis §6.8.1, from [167]).
POWER_PER_CORE = (7.8, 11.11)
TZ = "Europe/Paris"
#: level -> (first day, days of submissions, jobs or None for "every job of the window").
LEVELS: dict[str, tuple[str, int, int | None]] = {
    "low": ("2012-07-11", 30, None),
    "high": ("2012-08-28", 23, 33_583),
    "ch7-low": ("2012-02-06", 30, None),
    "ch7-medium": ("2012-07-11", 30, None),
    "ch7-high": ("2012-03-07", 23, None),
}
#: level -> jobs kept, drawn uniformly at random (seed 0) from the window's.
THINNED: dict[str, int] = {"ch7-low": 3207}
_SWF = ("id", "submit", "wait", "run", "procs", "cpu", "mem", "reqprocs", "reqtime",
        "reqmem", "status", "uid", "gid", "app", "queue", "part", "prev", "think")


def _read(trace: str) -> tuple[pd.DataFrame, int]:
    p = Path(resolve_source(trace))
    if not p.is_file():
        raise WorkloadError(f"Curie trace not found: {p}", field="trace")
    origin = None
    import gzip

    opener = gzip.open if p.suffix == ".gz" else open
    with opener(p, "rt") as f:
        for line in f:
            if not line.startswith(";"):
                break
            if "UnixStartTime:" in line:
                origin = int(line.split(":", 1)[1])
    if origin is None:
        raise WorkloadError(f"{p}: no UnixStartTime header", field="trace")
    df = pd.read_csv(p, sep=r"\s+", comment=";", names=list(_SWF), header=None)
    return df, origin


def curie_thesis(level: str = "low", seed: int = 0, trace: str = DEFAULT_TRACE) -> Workload:
    """The thesis ch. 6 ``low`` or ``high`` Curie workload (module doc)."""
    if level not in LEVELS:
        raise WorkloadError(f"level must be one of {', '.join(LEVELS)}, got {level!r}",
                            field="level")
    first, days, count = LEVELS[level]
    df, origin = _read(trace)
    ok = (df["run"] >= 0) & (df["procs"] > 0) & (df["submit"] >= 0)
    dropped = int((~ok).sum())
    df = df[ok & (df["part"] == LARGE) & (df["procs"] <= MACHINE_CORES)]
    waits = df["wait"].to_numpy(np.int64)
    aqt = round(float(waits[waits >= 0].mean()))
    df = df.sort_values(["submit", "id"], kind="stable")
    tz = ZoneInfo(TZ)
    day0 = int(datetime.fromisoformat(first).replace(tzinfo=tz).timestamp())
    t = df["submit"].to_numpy(np.int64) + origin
    if count is None:
        end = int((datetime.fromisoformat(first).replace(tzinfo=tz)
                   + pd.Timedelta(days=days)).timestamp())
        sel = (t >= day0) & (t < end)
        sub = t[sel] - day0
    else:
        idx = np.flatnonzero(t >= day0)[:count]
        if len(idx) < count:
            raise WorkloadError(f"{trace}: only {len(idx)} jobs from {first}", field="trace")
        sel = np.zeros(len(t), bool)
        sel[idx] = True
        raw = t[sel] - day0
        # compress the submissions linearly onto `days` days (last one just before the end)
        sub = np.floor(raw * ((days * 86400 - 1) / max(int(raw[-1]), 1))).astype(np.int64)
    w = df[sel]
    if level in THINNED:
        keep = np.sort(np.random.default_rng(0).choice(len(w), THINNED[level], replace=False))
        w, sub = w.iloc[keep], sub[keep]
    p = w["procs"].to_numpy(np.int64)
    run = w["run"].to_numpy(np.int64)
    req = w["reqtime"].to_numpy(np.int64)
    wall = np.where(req >= run, req, run)
    wall = np.maximum(wall, 1)
    n = -(-p // CORES_PER_NODE)
    even = p % n == 0
    units = np.where(even, n, p)
    cores = np.where(even, p // n, 1)
    rng = np.random.default_rng(seed)
    power = p * rng.uniform(*POWER_PER_CORE, size=len(p))
    spec = canonical_spec("curie-thesis", {"level": level, "seed": seed})
    return Workload.from_columns(
        submit=sub, walltime=wall, runtime=run, units=units, req={"cores": cores},
        job_id=w["id"].to_numpy(np.int64), power=power, origin_unix=day0, timezone=TZ,
        source=spec, queue=np.full(len(p), "large"), queues={"large": aqt},
        meta={"aqt_s": aqt, "generator": "curie-thesis", "level": level, "seed": seed,
              "trace": trace,
              "first_day": first, "days": days, "dropped_uncleanable": dropped,
              "walltime_raised_to_runtime": int((req < run).sum()),
              "one_core_units": int((~even).sum()),
              "time_compression": None if count is None else
              (days * 86400 - 1) / max(int((t[sel] - day0)[-1]), 1),
              "offered_load": float((p * run).sum() / (MACHINE_CORES * days * 86400))})


def _level(text: str) -> str:
    if text not in LEVELS:
        raise ValueError(f"expected one of {', '.join(LEVELS)}")
    return text


register_generator(
    "curie-thesis", curie_thesis,
    "Bridi thesis Curie workloads on the fat-node partition, job power U(7.8, 11.11) W per "
    "core: ch. 6 low (30 days) and high (33,583 jobs on 23 days); ch. 7 ch7-low (3,207 "
    "jobs of 30 days), ch7-medium (30 days) and ch7-high (23 days)",
    {"level": _level, "seed": parse_int, "trace": str})


