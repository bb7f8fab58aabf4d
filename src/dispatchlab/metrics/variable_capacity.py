"""Variable-capacity metrics (Robert et al., SPEC §7), from the recorder's logs alone.

``GOODPUT(T)`` as the slides define it: the work of the jobs complete at ``T`` plus the
elapsed part ``(T − s_i) c_i`` of the jobs running at ``T``, over the work the alive
machines could do in ``[start, T)`` (``n_c Σ_t M_alive(t)``). Segment by segment (which
also covers checkpoints): a segment that completed by ``T`` counts its whole length, one in
progress at ``T`` its elapsed part, an aborted or preempted one only what its checkpoint
kept, a killed or cancelled one nothing; each times its cores. Without checkpoints this is
the slides' formula exactly (an aborted job's earlier runs count nothing).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.arrays import IntArray
from dispatchlab.engine.recorder import ABORTED, COMPLETED, PREEMPTED, RECONFIGURED, Recorder
from dispatchlab.platform.node_states import ON


def alive_steps(rec: Recorder) -> tuple[IntArray, IntArray, IntArray]:
    """Alive (usable) nodes and cores as step functions: change times (first 0), node
    counts, core counts; every node is on at time 0 unless the log says otherwise."""
    cores = rec.platform.capacity[:, rec.platform.resources.index("cores")]
    log = np.frombuffer(rec.node_log, dtype=np.int64).reshape(-1, 3)
    on = np.ones(rec.platform.n_nodes, dtype=bool)
    times, nodes, cap = [0], [int(on.sum())], [int(cores.sum())]
    n_on, c_on = nodes[0], cap[0]
    for t, node, state in log.tolist():
        now_on = state == ON
        if now_on != on[node]:
            on[node] = now_on
            sign = 1 if now_on else -1
            n_on += sign
            c_on += sign * int(cores[node])
        if t == times[-1]:
            nodes[-1], cap[-1] = n_on, c_on
        else:
            times.append(t)
            nodes.append(n_on)
            cap.append(c_on)
    return (np.array(times, dtype=np.int64), np.array(nodes, dtype=np.int64),
            np.array(cap, dtype=np.int64))


def _integral(times: IntArray, values: IntArray, a: int, b: int) -> float:
    """∫_a^b of a step function (value ``values[k]`` from ``times[k]``)."""
    if b <= a:
        return 0.0
    ends = np.append(times[1:], max(b, int(times[-1]) + 1))
    lo = np.clip(times, a, b)
    hi = np.clip(ends, a, b)
    return float(((hi - lo) * values).sum())


def segment_cores(rec: Recorder) -> IntArray:
    """Cores held by each segment."""
    seg = rec.segments
    units = np.add.reduceat(seg.counts.astype(np.int64), seg.offsets[:-1]) if len(seg) \
        else np.empty(0, np.int64)
    per_unit = rec.req[:, rec.platform.resources.index("cores")]
    return units * per_unit[seg.job]


def goodput(rec: Recorder, t_end: int, start: int = 0) -> dict[str, float]:
    """``GOODPUT(T)`` over ``[start, T)`` with its parts (core-seconds)."""
    seg = rec.segments
    c = segment_cores(rec)
    t0 = np.maximum(seg.t0, start)
    t1 = np.minimum(seg.t1, t_end)
    length = np.maximum(t1 - t0, 0)
    over = seg.t1 <= t_end
    done = over & (seg.outcome == COMPLETED)
    running = (seg.t0 < t_end) & ~over
    kept = over & np.isin(seg.outcome, (ABORTED, PREEMPTED, RECONFIGURED))
    kept_len = np.maximum(length - seg.lost, 0)
    completed = float((length[done] * c[done]).sum())
    elapsed = float((length[running] * c[running]).sum())
    saved = float((kept_len[kept] * c[kept]).sum())
    times, _, cap = alive_steps(rec)
    alive = _integral(times, cap, start, t_end)
    useful = completed + elapsed + saved
    return {"goodput": useful / alive if alive > 0 else 0.0, "completed_work": completed,
            "running_work": elapsed, "checkpointed_work": saved, "alive_work": alive}


def vc_metrics(rec: Recorder, t_end: int, start: int = 0) -> dict[str, Any]:
    """Goodput, stretch, aborted volume and count, utilization of alive capacity, and the
    alive machines, all over ``[start, T)``."""
    g = goodput(rec, t_end, start)
    seg = rec.segments
    wl = rec.workload
    c = segment_cores(rec)
    in_window = (seg.t1 <= t_end) & (seg.t1 > start)
    fin = in_window & (seg.outcome == COMPLETED)
    jobs = seg.job[fin]
    stretch = (seg.t1[fin] - wl.submit[jobs]) / np.maximum(wl.runtime[jobs], 1)
    ab = in_window & (seg.outcome == ABORTED)
    used = float((np.maximum(np.minimum(seg.t1, t_end) - np.maximum(seg.t0, start), 0)
                  * c).sum())
    times, nodes, _ = alive_steps(rec)
    span = max(t_end - start, 1)
    return {
        **g,
        "window": [start, t_end],
        "completed_jobs": len(jobs),
        "max_stretch": float(stretch.max()) if len(jobs) else 0.0,
        "mean_stretch": float(stretch.mean()) if len(jobs) else 0.0,
        "aborted_count": int(ab.sum()),
        "aborted_jobs": len(np.unique(seg.job[ab])),
        "aborted_volume": float((seg.lost[ab] * c[ab]).sum()),
        "aborted_time": float((seg.t1[ab] - seg.t0[ab]).sum()),
        "utilization_alive": used / g["alive_work"] if g["alive_work"] > 0 else 0.0,
        "mean_alive_nodes": _integral(times, nodes, start, t_end) / span,
        "min_alive_nodes": int(nodes[(times < t_end)].min()),
        "max_alive_nodes": int(nodes[(times < t_end)].max()),
    }


def alive_nodes_at(rec: Recorder, at: IntArray) -> IntArray:
    """Alive node count in force at each time of ``at``."""
    times, nodes, _ = alive_steps(rec)
    k = np.searchsorted(times, at, side="right") - 1
    return nodes[np.maximum(k, 0)]
