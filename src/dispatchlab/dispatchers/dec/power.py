"""DEC's relaxed power (Borghesi et al. 2015 §5.1): power as one more pooled resource.

The relaxation the paper states, made exact here:

1. **Active power only** — idle nodes are not charged in the CP model; the mapper counts them.
2. **Cheapest nodes** — a job's figure is the least its units can draw on any node able to
   host one.
3. **Linear** — the node model's costlier first core is spread over the node's cores: every
   core costs ``core + (core_first − core) / C_n`` (``C_n`` the node's cores), each GPU
   ``gpu``, each MIC ``mic``. For any ``k ≤ C_n`` busy cores ``k · rate ≤ core_first +
   (k − 1) · core`` (since ``k / C_n ≤ 1``), so the sum over the jobs on a node never exceeds
   the node's true active power: the figure is a lower bound, exact on a full node.

With a job power source (a prediction file or a column) a job that has its own figure draws
that figure; one that falls back on the node model is costed as above. Figures are rounded
down to whole watts (still a lower bound), caps down to whole watts.

The cap: the one in force now, then the changes the scenario announces (``power_cap`` rows).
The cumulative's capacity is the largest cap ahead; lower caps become fixed *padding*
intervals that eat the difference (the OR-Tools recipe for a capacity profile). Running
jobs hold what they certainly draw (their engine figure; with the node model the machine's
active power now, split among them) until their predicted end (fixed intervals, as for the
other resources); where they already exceed a cap that fell, the padding is clipped so the
model stays feasible and nothing can start before they end.
"""

from __future__ import annotations

import math

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.dispatchers.cp.instance import Busy, Instance
from dispatchlab.engine.state import SystemView

#: End of the last padding interval (the cap after the last announced change lasts).
FAR = 1 << 40


class LinearPower:
    """The relaxed (linear, cheapest-node, active-only) power of each job, in W."""

    def __init__(self, view: SystemView):
        plat = view.platform
        table = plat.power_table
        res = list(plat.resources)
        cap = plat.capacity
        rates = np.zeros(cap.shape, dtype=np.float64)  # W per unit of each resource, per node
        if table is not None:
            if "cores" in res:
                c = res.index("cores")
                cores = np.maximum(cap[:, c], 1).astype(np.float64)
                rates[:, c] = table["core"] + (table["core_first"] - table["core"]) / cores
            for name in ("gpu", "mic"):
                if name in res:
                    rates[:, res.index(name)] = table[name]
        self.rates: FloatArray = rates
        self.capacity: IntArray = cap
        meter = view.power_model
        self.jobs = getattr(meter, "jobs", None)  # a job power source, or None (node model)

    def node_figure(self, req: IntArray, units: int) -> float:
        """Cheapest linear active power of ``units`` units asking ``req`` each."""
        mask = req > 0
        if not mask.any():
            return 0.0
        capable = (self.capacity[:, mask] >= req[mask]).all(axis=1)
        if not capable.any():
            return 0.0
        per_unit = self.rates[capable] @ req.astype(np.float64)
        return float(units * per_unit.min())

    def figure(self, view: SystemView, job: int) -> float:
        """The job's relaxed power (W)."""
        jobs = self.jobs
        if jobs is not None:
            has = getattr(jobs, "has_figure", None)
            if has is None or has(job):
                none = np.zeros(0, dtype=np.int64)
                return float(jobs.job_power(job, none, none))
        return self.node_figure(view.req[job], int(view.jobs.units[job]))


def cap_steps(view: SystemView) -> list[tuple[int, float]]:
    """The cap in force from now on: ``(relative time, W)``, the first at 0 (``inf``: none)."""
    budget = view.budget
    steps = [(0, math.inf if budget is None else float(budget.cap))]
    scenario = view.scenario
    if scenario is not None:
        times, values = scenario.steps("power_cap")
        for t, v in zip(times.tolist(), values.tolist(), strict=True):
            if t > view.now:
                steps.append((int(t) - view.now, float(v) if not math.isnan(v) else math.inf))
    return steps


def cap_at(steps: list[tuple[int, float]], t: int) -> float:
    """The cap in force at relative time ``t`` among :func:`cap_steps`' ``steps``."""
    cap = steps[0][1]
    for s, c in steps:
        if s <= t:
            cap = c
    return cap


def add_power(
    inst: Instance,
    view: SystemView,
    power: LinearPower,
    remaining: list[tuple[int, int]],
    figures: dict[int, int],
) -> dict[str, float]:
    """Append power as the last pooled resource of ``inst`` (capacity, demands, running
    jobs, padding). ``remaining``: ``(running job, predicted remaining time)``;
    ``figures``: job → relaxed W (filled for the queued and running jobs). Returns what was
    used (``cap_max``, ``running_w``) for the decision log."""
    known = view.jobs.known
    col = np.zeros(known, dtype=np.int64)
    for j in list(inst.jobs) + list(inst.fixed):
        figures.setdefault(j, math.floor(power.figure(view, j)))
    figures.update(_running_figures(view, power, [j for j, _ in remaining]))
    steps = cap_steps(view)
    finite = [c for _, c in steps if math.isfinite(c)]
    run_by_end: dict[int, int] = {}
    for j, rem in remaining:
        occ = max(rem, 1)
        run_by_end[occ] = run_by_end.get(occ, 0) + figures[j]
    run0 = sum(run_by_end.values())
    queued = sum(figures[j] for j in list(inst.jobs) + list(inst.fixed))
    cap_max = max([math.floor(c) for c in finite] + [run0])
    if len(finite) < len(steps):  # some stretch has no cap: room for everything then
        cap_max = max(cap_max, run0 + queued)
    for j in list(inst.jobs) + list(inst.fixed):  # a job above every cap: the mapper decides
        col[j] = min(figures[j], cap_max)
    inst.req = np.hstack([inst.req[:known], col[:, None]])

    # running jobs: their figure in the busy group of their predicted end
    busy = []
    for b in inst.busy:
        usage = np.hstack([b.usage, [[run_by_end.get(b.rem, 0)]]]).astype(np.int64)
        busy.append(Busy(b.rem, usage))
    inst.busy = busy
    n_res = inst.cap.shape[1]
    inst.cap = np.hstack([inst.cap, [[cap_max]]]).astype(np.int64)

    # padding: cap_max − cap(t), clipped to what the running jobs leave
    cuts = sorted({t for t, _ in steps} | set(run_by_end))
    pads: list[tuple[int, int, int]] = []
    for k, t in enumerate(cuts):
        c = cap_at(steps, t)
        pad = 0 if not math.isfinite(c) else cap_max - math.floor(c)
        running = sum(w for end, w in run_by_end.items() if end > t)
        pad = max(0, min(pad, cap_max - running))
        end = cuts[k + 1] if k + 1 < len(cuts) else FAR
        if pads and pads[-1][2] == pad and pads[-1][1] == t:
            pads[-1] = (pads[-1][0], end, pad)
        else:
            pads.append((t, end, pad))
    inst.pads = []
    for start, end, pad in pads:
        if pad > 0:
            usage = np.zeros((1, n_res + 1), dtype=np.int64)
            usage[0, n_res] = pad
            inst.pads.append((start, end, usage))
    pad0 = pads[0][2] if pads and pads[0][0] == 0 else 0
    inst.free = np.hstack([inst.free, [[cap_max - run0 - pad0]]]).astype(np.int64)
    return {"cap_max": float(cap_max), "running_w": float(run0)}


def _running_figures(view: SystemView, power: LinearPower, jobs: list[int]) -> dict[int, int]:
    """What the running jobs certainly draw: with a job power source, each job's figure
    where it runs (the engine's own); with the node model, the machine's active power now
    (IT power minus what the nodes would draw idle) split among them in proportion to
    their linear figures on the nodes they occupy."""
    meter = view.power_model
    out: dict[int, int] = {}
    if not jobs:
        return out
    if power.jobs is not None:
        for j in jobs:
            run = view.running[j]
            out[j] = math.floor(meter.job_part(j, run.nodes, run.counts))
        return out
    lin = {}
    for j in jobs:
        run = view.running[j]
        per_unit = power.rates[run.nodes] @ view.req[j].astype(np.float64)
        lin[j] = float((per_unit * run.counts).sum())
    assert view.budget is not None
    active = float(view.budget.used) - float(meter.nodes_power(view.capacity.copy()))
    total = sum(lin.values())
    for j in jobs:
        share = lin[j] / total if total > 0 else 1.0 / len(jobs)
        out[j] = math.floor(max(active, 0.0) * share)
    return out
