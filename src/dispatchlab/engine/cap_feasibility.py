"""Jobs a fixed power cap can never let start, found before the run.

Under a fixed cap (``power_cap=`` and no ``power_cap`` scenario rows) a job whose power on
the empty machine — idle nodes included when they count — is above the cap waits forever:
the run used to end with ``left job(s) queued on an idle machine``. A job is refused only
when a lower bound of what it adds to the empty machine's power is above what the cap
leaves, so no job that some placement would let start is refused:

- node power model: every unit costs at least the cheapest average cost of a unit on any
  node it fits on (a node's power is affine in its units in use, so its average is least
  with one unit or with the node full);
- job power (a column or predictions): the job's own figure (0 for a job that falls back
  on the node model) less the idle power of the nodes it could occupy, at most one a unit.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from dispatchlab.arrays import IntArray
from dispatchlab.engine.budget import EPS
from dispatchlab.engine.power_meter import MachinePower
from dispatchlab.platform.platform import units_fitting


def over_cap(meter: MachinePower, req: IntArray, min_units: IntArray, cap: float,
             skip: set[int]) -> Iterator[tuple[int, str]]:
    """(job, reason) for each job not in ``skip`` that cannot start under ``cap`` W even
    on the empty machine."""
    empty = meter.view.capacity
    base = meter.nodes_total
    groups: dict[tuple[tuple[int, ...], int], list[int]] = {}
    for j in range(len(req)):
        if j not in skip:
            groups.setdefault((tuple(req[j].tolist()), int(min_units[j])), []).append(j)
    unit_w: dict[tuple[int, ...], float] = {}  # node mode: cheapest unit of a request
    for (row, units), jobs in groups.items():
        fit = units_fitting(empty, np.array(row, dtype=np.int64))
        nodes = np.flatnonzero(fit > 0)
        if int(fit[nodes].sum()) < units:
            continue  # no placement at all: the capacity check reports it
        if meter.node_mode:
            if row not in unit_w:
                unit_w[row] = min(_cheapest_unit(meter, jobs[0], n, int(fit[n]), empty)
                                  for n in nodes.tolist())
            bound = units * unit_w[row]
        else:
            idle = meter.table["idle"][nodes] if meter.table is not None else np.zeros(0)
            credit = float(np.sort(idle)[::-1][:units].sum())
        for j in jobs:
            need = bound if meter.node_mode else _own_power(meter, j, nodes[:1]) - credit
            if base + need > cap + EPS:
                yield j, (f"needs at least {need:.6g} W on the empty machine, which draws "
                          f"{base:.6g} W on its own: over the fixed power cap of {cap:.6g} W")


def _cheapest_unit(meter: MachinePower, job: int, node: int, fit: int, free: IntArray
                   ) -> float:
    one = meter.start_delta(job, np.array([node]), np.array([1]), free)
    full = meter.start_delta(job, np.array([node]), np.array([fit]), free) / fit
    return min(one, full)


def _own_power(meter: MachinePower, job: int, node: IntArray) -> float:
    """The job's own figure; 0 when it falls back on the node model (placement-bound)."""
    jobs = meter.jobs
    has = getattr(jobs, "has_figure", None)
    if has is not None and not has(job):
        return 0.0
    return meter.job_part(job, node, np.array([1]))
