"""The Curie workload of the DARDIS experiment (thesis §5.5): a 22-day window of the CEA
Curie trace on 300 fat nodes × 32 cores, each job's latest start from its partition's
average queue time.

How the jobs are chosen (the thesis says only "22 days of regular workload", 35,538
jobs): Curie's fat nodes (4 × 8 cores, 128 GB) form its ``large`` partition (SWF
partition 4), so we keep that partition's jobs, leaving out those asking more than the
9,600 cores of the 300 nodes (counted). Over the whole trace the partition's work is
~0.7 of the 300 nodes' capacity: a load fit for them. (All partitions together, in any
22-day window with ~35,000 jobs, ask ~3.8 times what 300 fat nodes hold: they ran on the
80,640 thin cores.) No 22-day window of the ``large`` partition reaches 35,538 jobs; we
take the window of 22 consecutive days, each with submissions, holding the most jobs
(~20,000).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np

from dispatchlab.workload.swf import read_swf_table
from dispatchlab.workload.workload import Workload

TRACE = Path(__file__).resolve().parents[2] / ".." / "shared" / "traces" / "swf" / \
    "CEA-Curie-2011-2.1-cln.swf.gz"
NODES, CORES = 300, 32
DAYS = 22
# SWF columns (0-based)
SUBMIT, WAIT, RUN, PROCS, REQ_PROCS, REQ_TIME, PARTITION = 1, 2, 3, 4, 7, 8, 15
LARGE = 4  # the fat-node partition ("large" in the trace header)
UNIX_START = 1296571124  # the trace header's UnixStartTime


@dataclass(frozen=True)
class Window:
    """The chosen window: first day (trace day index), job count, daily variation."""

    first_day: int
    jobs: int
    cv: float
    too_big: int


def _clean(table: np.ndarray) -> np.ndarray:
    procs = np.where(table[:, PROCS] > 0, table[:, PROCS], table[:, REQ_PROCS])
    ok = (table[:, SUBMIT] >= 0) & (procs > 0) & (table[:, RUN] >= 0)
    out = table[ok].copy()
    out[:, PROCS] = procs[ok]
    return out


def choose_window(table: np.ndarray) -> Window:
    """The 22-day window of the module docstring (most jobs; ties: least variation)."""
    day = (table[:, SUBMIT] // 86400).astype(np.int64)
    fits = table[:, PROCS] <= NODES * CORES
    days = np.arange(day.min(), day.max() + 1)
    counts = np.bincount(day[fits] - day.min(), minlength=len(days))
    best: Window | None = None
    for i in range(len(days) - DAYS + 1):
        c = counts[i:i + DAYS]
        if (c == 0).any():
            continue
        cv = float(c.std() / c.mean())
        if best is None or (c.sum(), -cv) > (best.jobs, -best.cv):
            first = int(days[i])
            inside = (day >= first) & (day < first + DAYS)
            best = Window(first, int(c.sum()), cv, int((inside & ~fits).sum()))
    if best is None:
        raise RuntimeError("no 22 consecutive days with submissions")
    return best


def curie_workload(path: Path = TRACE) -> tuple[Workload, Window, dict[str, int]]:
    """The window's jobs (1-core units, pooled), partitions as queues whose expected
    wait is the partition's average logged wait in the window; ``est`` = arrival,
    ``lst`` = arrival + that average."""
    table, _, _ = read_swf_table(path)
    table = _clean(table)
    table = table[table[:, PARTITION] == LARGE]
    win = choose_window(table)
    day = table[:, SUBMIT] // 86400
    keep = (day >= win.first_day) & (day < win.first_day + DAYS) & \
        (table[:, PROCS] <= NODES * CORES)
    t = table[keep]
    t = t[np.argsort(t[:, SUBMIT], kind="stable")]
    # time 0 = local (Paris) midnight of the window's first day, so that the day/night
    # profile's hours are wall-clock hours
    start_unix = UNIX_START + win.first_day * 86400
    local = datetime.fromtimestamp(start_unix, ZoneInfo("Europe/Paris"))
    since_midnight = local.hour * 3600 + local.minute * 60 + local.second
    submit = (t[:, SUBMIT] - win.first_day * 86400 + since_midnight).astype(np.int64)
    runtime = t[:, RUN].astype(np.int64)
    walltime = np.where(t[:, REQ_TIME] > 0, t[:, REQ_TIME], runtime).astype(np.int64)
    walltime = np.maximum(walltime, 1)
    part = t[:, PARTITION].astype(np.int64)
    wait = t[:, WAIT]
    aqt = {f"p{p}": int(np.rint(wait[(part == p) & (wait >= 0)].mean()))
           if ((part == p) & (wait >= 0)).any() else 0 for p in np.unique(part)}
    lst = submit + np.array([aqt[f"p{p}"] for p in part], dtype=np.int64)
    wl = Workload.from_columns(
        submit=submit, walltime=walltime, runtime=np.minimum(runtime, walltime),
        units=t[:, PROCS].astype(np.int64), req={"cores": np.ones(len(t), np.int64)},
        queue=[f"p{p}" for p in part], queues=aqt, est=submit, lst=lst,
        origin_unix=start_unix - since_midnight, timezone="Europe/Paris",
        source=f"{path.name} days {win.first_day}–{win.first_day + DAYS - 1}")
    return wl, win, aqt
