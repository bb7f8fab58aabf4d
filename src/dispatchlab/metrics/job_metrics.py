"""Per-job metrics (SPEC §2): wait, slowdown, bounded slowdown, tardiness vs. queue ewt."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dispatchlab.engine.placements import end_nodes, flat_placements, placement_sizes
from dispatchlab.engine.recorder import Recorder

#: Default bound of bounded slowdown, seconds.
TAU = 10


def job_table(rec: Recorder, tau: int = TAU) -> pd.DataFrame:
    """One row per job with times, placement and the SPEC §2 metrics."""
    wl = rec.workload
    start = rec.start_time
    end = rec.end_time
    ran = start >= 0
    wait = np.where(ran, start - wl.submit, -1)
    run = np.where(ran, end - start, 0)
    ewt = wl.ewt()
    wait_f = wait.astype(np.float64)
    run_f = run.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        slowdown = (wait_f + run_f) / np.maximum(run_f, 1.0)
        bsld = np.maximum(1.0, (wait_f + run_f) / np.maximum(run_f, float(tau)))
        wqt = np.where(ewt > 0, wait_f / ewt, np.nan)
        tard = np.maximum(0, wait - ewt).astype(np.float64)
        wtard = np.where(ewt > 0, tard / ewt, np.nan)
    nodes_used = placement_sizes(rec)
    node_names = rec.platform.node_names
    queue_names = np.array([q.name for q in wl.queues], dtype=object)
    df = pd.DataFrame(
        {
            "job_id": wl.job_id,
            "submit": wl.submit,
            "start": start,
            "end": end,
            "wait": wait,
            "run": run,
            "requested": wl.walltime,
            "actual_runtime": wl.runtime,
            "units": wl.units,
            "nodes_used": nodes_used,
            "node_list": node_lists(rec, nodes_used, node_names),
            "killed": ran & (wl.runtime > wl.walltime),
            "slowdown": slowdown,
            "bounded_slowdown": bsld,
            "queue": queue_names[wl.queue],
            "ewt": ewt,
            "weighted_queue_time": wqt,
            "tardiness": tard,
            "weighted_tardiness": wtard,
            "late": ran & (wait > ewt),
            "logged_wait": wl.logged_wait,
            "rejected": ~ran,
        }
    )
    for r, name in enumerate(wl.resources):
        df.insert(list(df.columns).index("nodes_used"), f"req_{name}", wl.req[:, r])
    if rec.rejected:
        reasons = np.full(len(start), "", dtype=object)
        for j, why in rec.rejected.items():
            reasons[j] = why
        df["reject_reason"] = reasons
    if wl.origin_unix is not None:
        for col in ("submit", "start", "end"):
            df.insert(list(df.columns).index(col) + 1, f"{col}_at",
                      local_timestamps(df[col].to_numpy(), wl.origin_unix, wl.timezone))
    if (rec.planned >= 0).any():
        df["planned_start"] = rec.planned
    for col in ("array", "hetjob"):  # job-array / heterogeneous-job ids, when used
        if (getattr(wl, col) >= 0).any():
            df[col] = getattr(wl, col)
    for col in ("slowdown", "bounded_slowdown"):
        df.loc[~ran, col] = np.nan
    return df


def local_timestamps(seconds: np.ndarray, origin_unix: int, tz: str | None) -> pd.Series:
    """ISO 8601 local date-times of relative ``seconds`` (empty where the value is < 0)."""
    secs = np.asarray(seconds, dtype=np.int64)
    utc = pd.DatetimeIndex(pd.to_datetime(secs + origin_unix, unit="s", utc=True))
    local = utc
    if tz:
        try:
            local = utc.tz_convert(tz)
        except (KeyError, ValueError):  # unknown zone name: keep UTC, still absolute
            local = utc
    naive = local.tz_localize(None).to_numpy().astype("datetime64[s]")
    offset = (naive - utc.tz_localize(None).to_numpy().astype("datetime64[s]")).astype(np.int64)
    body = np.datetime_as_string(naive, unit="s").astype(object)
    suffix = np.empty(len(secs), dtype=object)
    for off in np.unique(offset).tolist():
        sign = "+" if off >= 0 else "-"
        hh, mm = divmod(abs(int(off)) // 60, 60)
        suffix[offset == off] = f"{sign}{hh:02d}:{mm:02d}"
    text = body + suffix
    text[secs < 0] = ""
    return pd.Series(text, dtype=object)


def node_lists(rec: Recorder, sizes: np.ndarray, names: tuple[str, ...]) -> np.ndarray:
    """Per job ``"n3 n4*2"`` (unit count when > 1), ``"n0..n99 (40 nodes)"`` beyond 16
    nodes, ``""`` when it never ran (``sizes``: nodes per job). String work is done on whole
    arrays at once; only the placements of jobs on at most 16 nodes are gathered."""
    out = np.full(len(sizes), "", dtype=object)
    name = np.array(names, dtype=object)
    short = (sizes > 0) & (sizes <= 16)
    if short.any():
        _, nk, ck = flat_placements(rec, short)
        top = int(ck.max())
        k = sizes[short]
        ends = np.cumsum(k) - 1
        if len(names) * (top + 1) <= len(nk):  # look every "name*count" token up at once
            text = [[(n if c == 1 else f"{n}*{c}") for c in range(top + 1)] for n in names]
            token = np.array([[w + " " for w in row] for row in text], dtype=object)[nk, ck]
            token[ends] = np.array(text, dtype=object)[nk[ends], ck[ends]]
        else:
            times = np.array([""] + ["" if c == 1 else f"*{c}" for c in range(1, top + 1)],
                             dtype=object)
            token = name[nk] + times[ck] + " "
            token[ends] = name[nk[ends]] + times[ck[ends]]
        out[short] = np.add.reduceat(token, ends - k + 1)
    long = np.flatnonzero(sizes > 16)
    if len(long):
        first, last = end_nodes(rec, long)
        out[long] = (name[first] + ".." + name[last] + " ("
                     + sizes[long].astype(str).astype(object) + " nodes)")
    return out
