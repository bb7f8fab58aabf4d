"""CP-SAT model of a chunk of jobs maximising profit (thesis §6.5, Eq. 6.2–6.5).

- **Time**: slots of ``inst.step`` seconds; job ``i`` starts at slot ``s_i ∈ [release_i,
  H]`` and holds its nodes ``ceil(d_i/step)`` slots; its *profit* counts its real duration
  ``d_i`` (seconds), so the model's objective is the evaluator's
  (:func:`dispatchlab.dispatchers.offline_plan.planner.objective.evaluate`).
- **Allocation** (count encoding, ``/work/shared/notes/cpsat.md``; CP-SAT has no
  ``alternative``): a job whose allocation is *fixed* (Relaxation-Search's multi-unit jobs)
  is one interval with fixed demands on its nodes; a *free* job has integer units
  ``u[i,n]`` on each candidate node ``n`` (its hinted nodes plus ``extra_nodes`` spread over
  the machine), a presence literal ``p[i,n] ⇔ u[i,n] ≥ 1``, one optional interval per
  candidate sharing ``s_i``, demand ``req·u`` and ``Σ_n u[i,n] = units_i``. One cumulative
  per node and requested resource (capacity minus what is still running at the origin).
- **Objective** (Eq. 6.3): per segment ``s`` of the profit window and job ``i`` that can
  overlap it, ``ov[i,s] = max(0, min(x_i + d_i, b_s) − max(x_i, a_s))`` seconds (``x_i =
  step·s_i``, min/max equalities). ``W_s = Σ_i P_i·ov[i,s]`` (mW·s), ``G = Σ_i cores_i ·
  Σ_s ov[i,s]``; the cooling energy ``J_s`` of segment ``s`` is ``len_s·C(W_s/len_s)``,
  ``C`` the cooling power, piecewise linear between the PUE table's breakpoints (Eq. 6.4's
  LUT for the segment's temperature row): when ``C`` is convex in the row (the project's
  tables), ``J_s ≥ m_k·W_s + len_s·b_k`` for every piece ``k`` (exact at any optimum, since
  profit falls as ``J_s`` rises; a linear relaxation CP-SAT's LP uses); otherwise one
  Boolean per piece selects it (``W_s`` in the piece's range, ``J_s`` on its line). The
  profit in currency is ``objective / scale``.
- **Tariff** (the run's ``energy_price`` rows): segments are also cut at every price change,
  and segment ``s``'s energy ``W_s + J_s`` weighs ``ρ_s = K2_s / K2_max`` (its price over the
  highest); without a tariff ``ρ_s = 1``, and the model is the one above.
- **Integers**: power in mW, ``W_s``/``J_s`` in mW·s (mJ); slopes ``m_k`` rounded to
  ``1/M`` with ``M`` as large as int64 allows (≤ 10⁶); the per-second job coefficients
  rounded to integers after scaling by ``scale = 3.6e9/K2`` (currency → integer units; ``K2``
  the highest price under a tariff, so every weighted coefficient stays in range). The
  relative error against the evaluator is below 10⁻⁵ (tested).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from dispatchlab.dispatchers.offline_plan.planner.heuristic import Schedule, busy_slots
from dispatchlab.dispatchers.offline_plan.planner.instance import PlanInstance
from dispatchlab.dispatchers.offline_plan.planner.objective import ProfitModel, Segment

_INT_LIMIT = 4 * 10**18


@dataclass
class PlanModel:
    """A built model and the handles to read a schedule back."""

    model: cp_model.CpModel
    start: list[cp_model.IntVar]
    units: list[dict[int, cp_model.IntVar | int]]  # per job: node → units var (or constant)
    scale: float
    segments: list[Segment]
    objective: cp_model.LinearExpr
    stats: dict[str, int] = field(default_factory=dict)

    def read(self, solver: Any) -> Schedule:
        """The solution as a schedule (``solver``: a CpSolver, or anything with its
        ``value`` method such as the CP guard's answer)."""
        starts = np.array([solver.value(v) for v in self.start], dtype=np.int64)
        alloc = []
        for per_node in self.units:
            pairs = []
            for n in sorted(per_node):
                u = per_node[n]
                val = u if isinstance(u, int) else int(solver.value(u))
                if val:
                    pairs.append((n, val))
            alloc.append(tuple(pairs))
        return Schedule(starts, alloc)


def candidate_nodes(inst: PlanInstance, hint: Schedule, j: int, extra: int) -> list[int]:
    """The hinted nodes of job ``j`` plus ``extra`` others spread evenly over the machine
    from its first hinted node (deterministic)."""
    hinted = [n for n, _ in hint.alloc[j]]
    n_nodes = inst.n_nodes
    out = set(hinted)
    if extra > 0 and n_nodes > len(out):
        stride = max(1, n_nodes // (extra + 1))
        base = hinted[0] if hinted else 0
        k = 1
        while len(out) < min(n_nodes, len(hinted) + extra) and k <= n_nodes:
            out.add((base + k * stride + (k * stride) // n_nodes) % n_nodes)
            k += 1
    return sorted(out)


def build_model(
    inst: PlanInstance,
    pm: ProfitModel,
    hint: Schedule,
    fixed_alloc: Sequence[bool] | None = None,
    extra_nodes: int = 4,
    horizon_slot: int | None = None,
    lower_bound: int | None = None,
    background: Sequence[float] | None = None,
) -> PlanModel:
    """The CP-SAT model of ``inst`` with ``hint`` as a complete hint (module doc).

    ``fixed_alloc[i]``: keep job ``i`` on its hinted nodes (Eq. 6.5's second constraint);
    ``horizon_slot``: the latest start allowed (default: the later of the hint's last start
    and the window end); ``lower_bound``: require the integer objective ≥ this (Eq. 6.5's
    first constraint, ``best + 1`` for a strictly better plan); ``background``: IT energy
    (J) per segment of ``pm.segments()`` drawn by jobs outside the model (a neighbourhood
    of a larger plan), which the segments' cooling must include."""
    n = len(inst)
    m = cp_model.CpModel()
    step = inst.step
    release = inst.release_slot
    slots = inst.slots
    dur = inst.duration
    window_end_slot = -(-(pm.end - inst.origin) // step)
    hmax = int(max(int(hint.start.max(initial=0)), window_end_slot)
               if horizon_slot is None else horizon_slot)
    fixed = [False] * n if fixed_alloc is None else list(fixed_alloc)
    n_nodes, n_res = inst.capacity.shape
    per_node: list[list[tuple[cp_model.IntervalVar, list[cp_model.LinearExprT]]]] = [
        [] for _ in range(n_nodes)]
    starts: list[cp_model.IntVar] = []
    units: list[dict[int, cp_model.IntVar | int]] = []
    n_optional = 0
    for i in range(n):
        lo = int(release[i])
        hi = max(hmax, int(hint.start[i]), lo)
        s = m.new_int_var(lo, hi, f"s{i}")
        m.add_hint(s, int(hint.start[i]))
        starts.append(s)
        req = inst.req[i]
        hinted = dict(hint.alloc[i])
        if fixed[i]:
            iv = m.new_fixed_size_interval_var(s, int(slots[i]), f"a{i}")
            for node, held in hinted.items():
                per_node[node].append((iv, [int(held * req[r]) for r in range(n_res)]))
            units.append({node: int(held) for node, held in hinted.items()})
            continue
        cand = candidate_nodes(inst, hint, i, extra_nodes)
        uvars: dict[int, cp_model.IntVar | int] = {}
        total = []
        for node in cand:
            cap_units = int(min((inst.capacity[node, r] // req[r]) for r in range(n_res)
                                if req[r] > 0))
            top = min(int(inst.units[i]), cap_units)
            if top <= 0:
                continue
            p = m.new_bool_var(f"p{i}_{node}")
            if top == 1 or inst.units[i] == 1:
                u: cp_model.IntVar = p
            else:
                u = m.new_int_var(0, top, f"u{i}_{node}")
                m.add(u >= 1).only_enforce_if(p)
                m.add(u == 0).only_enforce_if(~p)
                m.add_hint(u, int(hinted.get(node, 0)))
            m.add_hint(p, node in hinted)
            iv = m.new_optional_fixed_size_interval_var(s, int(slots[i]), p, f"a{i}_{node}")
            per_node[node].append((iv, [u * int(req[r]) for r in range(n_res)]))
            uvars[node] = u
            total.append(u)
            n_optional += 1
        m.add(sum(total) == int(inst.units[i]))
        units.append(uvars)
    # capacity: one cumulative per node and requested resource, minus what still runs
    for node in range(n_nodes):
        items = per_node[node]
        if not items:
            continue
        for r in range(n_res):
            cap = int(inst.capacity[node, r])
            ivs, dem = [], []
            for iv, d in items:
                if not (isinstance(d[r], int) and d[r] == 0):
                    ivs.append(iv)
                    dem.append(d[r])
            if not ivs:
                continue
            for since, until, usage in inst.busy:
                held = int(usage[node, r])
                a, b = busy_slots(since, until, inst.origin, step)
                if held and b > a:
                    ivs.append(m.new_fixed_size_interval_var(a, b - a, f"b{node}_{r}"))
                    dem.append(held)
            m.add_cumulative(ivs, dem, cap)
    segments = pm.segments()
    prices = pm.prices
    k2 = pm.top_price()
    scale = 3.6e9 / (k2 if k2 > 0 else 1.0)
    power_mw = np.rint(inst.power * 1000.0).astype(np.int64)
    cores = inst.units * inst.cores_per_unit
    income = np.rint(scale * prices.core_hour * cores / 3600.0).astype(np.int64)
    terms: list[cp_model.LinearExprT] = []
    n_overlap = 0
    for k, seg in enumerate(segments):
        a, b = seg.start - inst.origin, seg.end - inst.origin
        # the segment's energy weighs its price against the scale's (1 without a tariff)
        weight = seg.price / k2 if k2 > 0 else 0.0
        # per-second value of a running job here: K1·cores/3600 − K2_s·P (integer units)
        job_coef = income - (np.rint(power_mw * weight).astype(np.int64) if k2 > 0 else 0)
        w_terms = []
        for i in range(n):
            x_lo, x_hi = int(release[i]) * step, max(hmax, int(hint.start[i])) * step
            if x_hi + int(dur[i]) <= a or x_lo >= b or dur[i] == 0:
                continue
            ov = _overlap_var(m, starts[i], step, int(dur[i]), a, b, x_lo, x_hi, f"{i}_{k}")
            hs = int(hint.start[i]) * step
            m.add_hint(ov, max(0, min(hs + int(dur[i]), b) - max(hs, a)))
            w_terms.append(int(power_mw[i]) * ov)
            terms.append(int(job_coef[i]) * ov)
            n_overlap += 1
        base = 0 if background is None else round(1000.0 * background[k])
        if weight > 0 and (w_terms or base):
            j_s = _cooling_var(m, pm, seg, sum(w_terms) + base, f"{k}", weight)
            terms.append(-j_s)
    objective = cp_model.LinearExpr.sum(terms)
    m.maximize(objective)
    if lower_bound is not None:
        m.add(objective >= lower_bound)
    return PlanModel(m, starts, units, scale, segments, objective,
                     {"jobs": n, "fixed_alloc": int(sum(fixed)), "optional_intervals":
                      n_optional, "overlaps": n_overlap, "segments": len(segments),
                      "horizon_slot": hmax})


def _overlap_var(m: cp_model.CpModel, s: cp_model.IntVar, step: int, d: int, a: int, b: int,
                 x_lo: int, x_hi: int, tag: str) -> cp_model.IntVar:
    """``max(0, min(step·s + d, b) − max(step·s, a))`` as a variable."""
    length = min(d, b - a)
    if x_lo >= a and x_hi + d <= b:  # always inside the segment
        return m.new_constant(d)
    end_in = m.new_int_var(min(x_lo + d, b), min(x_hi + d, b), f"e{tag}")
    m.add_min_equality(end_in, [s * step + d, b])
    start_in = m.new_int_var(max(x_lo, a), max(x_hi, a), f"b{tag}")
    m.add_max_equality(start_in, [s * step, a])
    ov = m.new_int_var(0, length, f"o{tag}")
    m.add_max_equality(ov, [0, end_in - start_in])
    return ov


def _cooling_var(m: cp_model.CpModel, pm: ProfitModel, seg: Segment,
                 w_mws: cp_model.LinearExprT, tag: str, weight: float = 1.0) -> cp_model.IntVar:
    """``weight · J_s`` (mJ) for segment energy ``w_mws`` (mW·s), module doc (``weight``: the
    segment's price over the model's scale price, 1 without a tariff)."""
    slopes, inter = pm.pieces(seg.temperature)
    slopes, inter = slopes * weight, inter * weight
    top_w = pm.table.max_power * 1000.0 * seg.length
    top_j = int(np.ceil(max(slopes.max() * top_w + 1000.0 * seg.length * inter.max(), 0.0)))
    top_j = max(top_j, int(np.ceil(weight * pm.cooling_power(pm.table.max_power,
                                                             seg.temperature)
                                   * 1000.0 * seg.length)))
    j = m.new_int_var(0, top_j, f"J{tag}")
    w = m.new_int_var(0, int(top_w), f"W{tag}")
    m.add(w == w_mws)
    big = max(1.0, top_w * max(1.0, float(slopes.max())))
    mult = int(min(10**6, max(1, _INT_LIMIT // int(big * 4))))
    if pm.convex(seg.temperature):
        for mk, bk in zip(slopes, inter, strict=True):
            m.add(mult * j >= round(mult * mk) * w
                  + round(mult * 1000.0 * seg.length * bk))
        return j
    bounds = pm.piece_bounds(seg.temperature) * 1000.0 * seg.length
    choose = [m.new_bool_var(f"z{tag}_{k}") for k in range(len(slopes))]
    m.add_exactly_one(choose)
    for k, z in enumerate(choose):
        m.add(w >= int(bounds[k])).only_enforce_if(z)
        m.add(w <= int(bounds[k + 1])).only_enforce_if(z)
        m.add(mult * j >= round(mult * slopes[k]) * w
              + round(mult * 1000.0 * seg.length * inter[k])).only_enforce_if(z)
    return j


def solver_for(det_time: float, seed: int = 0, wall: float = 60.0) -> cp_model.CpSolver:
    """A reproducible single-worker solver: deterministic-time budget ``det_time`` (wall
    ``wall`` s as a safety net), presolve off as the per-node model needs
    (``cpsat.md``), the hint repaired when infeasible."""
    solver = cp_model.CpSolver()
    p = solver.parameters
    p.num_workers = 1
    p.random_seed = seed
    p.max_deterministic_time = det_time
    p.max_time_in_seconds = wall
    p.cp_model_presolve = False
    p.cp_model_probing_level = 0
    p.use_feasibility_jump = False
    return solver
