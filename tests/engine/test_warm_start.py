"""A simulator warm-started from a mid-run state decides as the original did there."""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.engine.decisions import Start
from dispatchlab.engine.simulator import Simulator
from dispatchlab.engine.warm_start import Placed, warm_start
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.workload.workload import Workload


def _workload(seed: int, n: int = 60) -> Workload:
    rng = np.random.default_rng(seed)
    walltime = rng.integers(10, 400, n)
    return Workload.from_columns(
        submit=np.sort(rng.integers(0, 600, n)), walltime=walltime,
        runtime=(walltime * rng.uniform(0.1, 1.0, n)).astype(int) + 1,
        units=rng.integers(1, 13, n), req={"cores": [1] * n})


def _states(wl: Workload, spec: str) -> list[tuple[int, dict, list, list]]:
    """(now, running, queue, starts) at every decision point of a full simulation."""
    sim = Simulator(wl, resolve_platform("nodes=4,cores=4"), get_dispatcher(spec))
    seen = []
    real = sim.dispatcher.decide

    def spy(view, events):  # type: ignore[no-untyped-def]
        running = {j: (r.start, r.nodes.copy(), r.counts.copy())
                   for j, r in view.running.items()}
        out = real(view, events)
        starts = [(d.job, d.nodes.tolist(), d.counts.tolist()) for d in out
                  if isinstance(d, Start)]
        seen.append((view.now, running, list(view.queue), starts))
        return out

    sim.dispatcher.decide = spy  # type: ignore[method-assign]
    sim.run()
    return seen


@pytest.mark.parametrize("spec", ["easy", "fifo", "easy-sjf", "pbs-fifo", "wfp3", "conservative"])
@pytest.mark.parametrize("seed", [1, 2])
def test_warm_start_decides_as_the_simulation_did(spec: str, seed: int) -> None:
    """Memoryless dispatchers decide the same starts; conservative backfilling's book of
    reservations depends on its history (made at each submission, compressed since), so
    warm-started it rebuilds the book in priority order: its starts are valid (the engine
    checked them) but may differ."""
    wl = _workload(seed)
    states = _states(wl, spec)
    checked = 0
    for now, running, queue, starts in states[5::7]:
        if not queue:
            continue
        keep = sorted(set(running) | set(queue))
        sub = Workload.from_columns(
            submit=wl.submit[keep], walltime=wl.walltime[keep], runtime=wl.walltime[keep],
            units=wl.units[keep], req={"cores": [1] * len(keep)}, job_id=keep)
        row = {j: k for k, j in enumerate(keep)}
        sim = Simulator(sub, resolve_platform("nodes=4,cores=4"), get_dispatcher(spec))
        placed = [Placed(row[j], s, nodes, counts) for j, (s, nodes, counts) in running.items()]
        got = warm_start(sim, now, placed)
        mine = [(keep[d.job], d.nodes.tolist(), d.counts.tolist()) for d in got
                if isinstance(d, Start)]
        if spec != "conservative":
            assert mine == starts, f"t={now}"
        checked += 1
    assert checked >= 3
