"""Jobs a fixed power cap can never let start, found before the run.

Under a fixed cap (``power_cap=`` and no ``power_cap`` scenario rows) a job whose power on
the empty machine — idle nodes included when they count — is above the cap waits forever:
the run used to end with ``left job(s) queued on an idle machine``. Each job is costed on
its packed placement (its units on the nodes where a unit costs least, each filled before
the next: the cheapest placement when a node's power grows by less for each further unit,
as in the node model, whose first core costs the most).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

from dispatchlab.engine.budget import EPS
from dispatchlab.engine.power_meter import MachinePower
from dispatchlab.platform.platform import units_fitting

IntArray = npt.NDArray[np.int64]


def over_cap(meter: MachinePower, req: IntArray, min_units: IntArray, cap: float,
             skip: set[int]) -> Iterator[tuple[int, str]]:
    """(job, reason) for each job not in ``skip`` that cannot start under ``cap`` W even
    on the empty machine."""
    view = meter.view
    empty = view.capacity
    base = meter.nodes_total
    groups: dict[tuple[tuple[int, ...], int], list[int]] = {}
    for j in range(len(req)):
        if j not in skip:
            groups.setdefault((tuple(req[j].tolist()), int(min_units[j])), []).append(j)
    for (row, units), jobs in groups.items():
        placement = _packed(meter, np.array(row, dtype=np.int64), units, jobs[0], empty)
        if placement is None:
            continue  # no placement at all: the capacity check reports it
        nodes, counts = placement
        for j in jobs:
            need = meter.start_delta(j, nodes, counts, empty)
            if base + need > cap + EPS:
                yield j, (f"needs {need:.6g} W on the empty machine, which draws {base:.6g} W "
                          f"on its own: over the fixed power cap of {cap:.6g} W")


def _packed(meter: MachinePower, row: IntArray, units: int, job: int, free: IntArray
            ) -> tuple[IntArray, IntArray] | None:
    fit = units_fitting(free, row)
    nodes = np.flatnonzero(fit > 0)
    if int(fit[nodes].sum()) < units:
        return None
    per_unit = [meter.start_delta(job, np.array([n]), np.array([int(fit[n])]), free)
                / int(fit[n]) for n in nodes.tolist()]
    chosen: list[int] = []
    counts: list[int] = []
    left = units
    for k in np.argsort(per_unit, kind="stable").tolist():
        n = int(nodes[k])
        take = min(left, int(fit[n]))
        chosen.append(n)
        counts.append(take)
        left -= take
        if not left:
            break
    order = np.argsort(chosen)
    return (np.array(chosen, dtype=np.int64)[order], np.array(counts, dtype=np.int64)[order])
