"""Run the compiled slot loop and record its outcome exactly as the general engine would."""

from __future__ import annotations

import time
from array import array
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from dispatchlab.engine.compiled.eligibility import SlotRun
from dispatchlab.engine.compiled.kernel import slot_loop_kernel
from dispatchlab.engine.compiled.slot_loop import STUCK
from dispatchlab.engine.placements import Placements
from dispatchlab.engine.recorder import Recorder
from dispatchlab.engine.simulator import Simulator
from dispatchlab.errors import DispatchlabError


def run_slots(sim: Simulator, run: SlotRun) -> Recorder:
    """Simulate ``sim`` (which :func:`slot_run` accepted) in the compiled loop.

    Per-decision dispatcher time cannot be measured inside the loop: each decision point
    is charged the loop's total time divided by the number of decision points.
    """
    wl, plat = sim.workload, sim.platform
    n = wl.n_jobs
    rec = Recorder(wl, plat, sim.req)
    skip = np.zeros(n, dtype=np.bool_)
    if int(wl.units.max()) > int(run.slots.sum()):  # the engine's errors and reasons
        rejected = sim._check_feasible(rec)
        skip[list(rejected)] = True
    kernel = slot_loop_kernel()  # loaded before the clock starts, like the general engine
    if sim.progress is not None:
        sim.progress(0, n)
    wall0 = time.perf_counter()
    (status, start, end, planned, offsets, nodes, counts, points, n_points, backfilled,
     bad_job) = kernel(
        _own(wl.submit), _own(np.minimum(wl.runtime, wl.walltime)), _own(wl.units),
        _own(run.estimate), _own(run.rank), skip, _own(run.slots), run.easy, run.depth)
    loop_seconds = time.perf_counter() - wall0
    if status == STUCK:
        raise DispatchlabError(
            f"dispatcher '{sim.dispatcher.name}' left job(s) queued on an idle machine with "
            f"no pending event (first job id: {int(wl.job_id[bad_job])})")
    if status != 0:  # pragma: no cover - the slot invariant rules this out
        raise DispatchlabError(f"compiled engine: slot accounting broke at job "
                               f"{int(wl.job_id[bad_job])}")
    started = start >= 0
    rec.alloc_nodes = cast(list[Any], Placements(nodes, offsets, started))
    rec.alloc_counts = cast(list[Any], Placements(counts, offsets, started))
    rec._start = start.tolist()
    rec._end = end.tolist()
    rec.planned = planned
    pts = points[:n_points]
    rec.decision_at = array("q", pts[:, 0].tobytes())
    rec.decision_cpu = array("d", [loop_seconds / max(n_points, 1)]) * n_points
    free_total = plat.total[None, :] - pts[:, 3:4] * sim.req[0][None, :]
    rec.samples = array("q", np.ascontiguousarray(
        np.hstack((pts[:, :3], free_total)), dtype=np.int64).tobytes())
    stats: dict[str, Any] = {"backfilled": int(backfilled)} if run.easy else {}
    rec.finish(time.perf_counter() - wall0, stats)
    if sim.progress is not None:
        sim.progress(n, n)
    return rec


def _own(a: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
    """A writable C-contiguous int64 copy: one array type, so one compiled signature."""
    return np.array(a, dtype=np.int64, order="C")
