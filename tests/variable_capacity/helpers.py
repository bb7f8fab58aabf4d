"""Small builders for the variable-capacity tests."""

from __future__ import annotations

from typing import Any

from dispatchlab import Workload, simulate
from dispatchlab.engine.capacity import counts_to_scenario


def vc_jobs(*rows: tuple[int, int, int], checkpoint: int = 0) -> Workload:
    """Jobs as ``(submit, length, cores)``: one machine each, exact lengths."""
    sub, length, cores = (list(c) for c in zip(*rows, strict=True))
    return Workload.from_columns(submit=sub, runtime=length, walltime=length,
                                 units=[1] * len(rows), req={"cores": cores},
                                 checkpoint=[checkpoint] * len(rows))


def run(wl: Workload, platform: str, strategy: Any, capacity: list[tuple[int, int]],
        seed: int = 0) -> Any:
    """Simulate under a capacity series ``[(time, alive), ...]``, audited."""
    times, counts = zip(*capacity, strict=True)
    scen = counts_to_scenario(list(times), list(counts), "test")
    return simulate(wl, platform, strategy, seed=seed, scenario=scen, walltime_kill=False)


def segments(res: Any) -> list[tuple[int, int, int, int, int]]:
    """``(job, t0, t1, node, outcome)`` per segment, in log order."""
    seg = res.recorder.segments
    return [(int(seg.job[k]), int(seg.t0[k]), int(seg.t1[k]),
             int(seg.nodes[seg.offsets[k]]), int(seg.outcome[k])) for k in range(len(seg))]
