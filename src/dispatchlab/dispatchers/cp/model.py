"""CP-SAT models of the dispatching problem: pooled (HCP) and per-node (PCP).

Both: one start variable ``o_i ∈ [0, H − d_i]`` per queued job (relative to now), a
fixed-size interval per job, running jobs as fixed intervals of their remaining time
(merged when they end together), cumulatives only for resources some model job uses.

- HCP: one cumulative per resource with the machine's total capacity.
- PCP (count encoding, cpsat.md): per job and candidate node an integer ``u[i,n]`` of
  units placed there, presence ``p[i,n] ⇔ u ≥ 1`` of an optional interval sharing the
  job's start, ``Σ_n u[i,n] = units_i``; one cumulative per (node, resource) with demand
  ``req·u``. Candidates: the nodes of the greedy placement plus the best-fitting nodes
  now (all capable nodes in v0), so the greedy schedule is always a valid hint.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from ortools.sat.python import cp_model

from dispatchlab.arrays import IntArray
from dispatchlab.dispatchers.cp.instance import Instance

Aux = tuple[cp_model.IntVar, Callable[[list[int]], int]]
Terms = tuple[cp_model.LinearExprT, tuple[cp_model.LinearExprT, int] | None]

_INT_BUDGET = 2**60  # keep Σ |coef| · |var| far from int64 overflow


@dataclass
class Built:
    """A model plus what the dispatcher needs to read and hint it."""

    model: cp_model.CpModel
    starts: list[cp_model.IntVar]  # aligned with inst.jobs
    units: list[list[tuple[int, cp_model.IntVar]]] = field(default_factory=list)  # PCP
    exprs: dict[str, cp_model.LinearExprT] = field(default_factory=dict)
    aux: list[Aux] = field(default_factory=list)
    n_intervals: int = 0
    n_optional: int = 0
    n_cumulatives: int = 0
    infeasible: bool = False  # a start domain is empty: the horizon is too short (v0/v1)


def build_model(
    inst: Instance,
    objective: str,
    bounded: dict[str, int],
    cand: int,
    all_nodes: bool,
    priority_search: bool,
) -> Built:
    """The model for ``inst`` minimizing ``objective`` with ``bounded`` expressions capped.

    ``bounded`` maps objective names to the largest allowed value of their scaled
    expression (thesis composite models).
    """
    m = cp_model.CpModel()
    H = inst.horizon
    starts: list[cp_model.IntVar] = []
    intervals: list[cp_model.IntervalVar] = []
    built = Built(model=m, starts=starts)
    for k, d in enumerate(inst.dur):
        hi = H - d
        if hi < 0:
            built.infeasible = True
            hi = 0
        if inst.rules is not None:  # eligible intervals only (windows, stops)
            o = inst.rules.start_var(m, k, hi, f"o{k}")
        else:
            o = m.new_int_var(0, hi, f"o{k}")
        starts.append(o)
        intervals.append(m.new_fixed_size_interval_var(o, d, f"j{k}"))
    fixed_iv = []
    for j, d in zip(inst.fixed, inst.fixed_dur, strict=True):
        fixed_iv.append((j, m.new_fixed_size_interval_var(max(H - d, 0), d, f"f{j}")))
    busy_iv = [m.new_fixed_size_interval_var(0, b.rem, f"r{b.rem}") for b in inst.busy]
    built.n_intervals = len(intervals) + len(fixed_iv) + len(busy_iv)
    if inst.rules is not None:
        inst.rules.link(m, starts)  # heterogeneous jobs: one start (eq. 4.7)

    if inst.pooled:
        _pooled_cumulatives(m, inst, intervals, fixed_iv, busy_iv, built)
    else:
        _node_cumulatives(m, inst, starts, cand, all_nodes, built)

    terms = {name: _objective(m, inst, name, starts, built) for name in {objective, *bounded}}
    for name, cap in bounded.items():
        m.add(terms[name][0] <= cap)
    primary, tiebreak = terms[objective]
    built.exprs = {name: t[0] for name, t in terms.items()}
    if tiebreak is None:
        m.minimize(primary)
    else:
        m.minimize(cp_model.LinearExpr.weighted_sum([primary, tiebreak[0]], [tiebreak[1], 1]))
    if priority_search and starts:
        m.add_decision_strategy(starts, cp_model.CHOOSE_FIRST, cp_model.SELECT_MIN_VALUE)
    return built


def _pooled_cumulatives(
    m: cp_model.CpModel,
    inst: Instance,
    intervals: list[cp_model.IntervalVar],
    fixed_iv: list[tuple[int, cp_model.IntervalVar]],
    busy_iv: list[cp_model.IntervalVar],
    built: Built,
) -> None:
    req = inst.req
    for r in range(inst.cap.shape[1]):
        ivs: list[cp_model.IntervalVar] = []
        dem: list[int] = []
        for k, j in enumerate(inst.jobs):
            v = int(req[j, r])
            if v:
                ivs.append(intervals[k])
                dem.append(v)
        for j, iv in fixed_iv:
            v = int(req[j, r])
            if v:
                ivs.append(iv)
                dem.append(v)
        if not ivs:
            continue  # v1: no cumulative for a resource no job uses
        for b, iv in zip(inst.busy, busy_iv, strict=True):
            v = int(b.usage[0, r])
            if v:
                ivs.append(iv)
                dem.append(v)
        for start, end, usage in inst.pads:  # capacity profile (DEC's varying power cap)
            v = int(usage[0, r])
            if v and start < inst.horizon:
                ivs.append(m.new_fixed_size_interval_var(start, min(end, inst.horizon) - start,
                                                         f"pad{r}_{start}"))
                dem.append(v)
        if inst.rules is not None:  # reservation occurrences: fixed intervals
            for iv, v in inst.rules.pooled_blocks(m, r):
                ivs.append(iv)
                dem.append(v)
        m.add_cumulative(ivs, dem, int(inst.cap[0, r]))
        built.n_cumulatives += 1


def candidate_nodes(inst: Instance, k: int, cand: int, all_nodes: bool) -> IntArray:
    """Nodes job ``k`` may use: greedy placement ∪ best-fitting nodes now (all in v0)."""
    j = inst.jobs[k]
    req = inst.req[j]
    mask = req > 0
    capable = np.flatnonzero((inst.cap[:, mask] // req[mask]).min(axis=1) > 0)
    if all_nodes:
        return capable
    chosen = set(inst.placement[j][0].tolist())
    want = max(cand, len(chosen) + cand // 2)
    if len(capable) <= want:
        return capable
    fit_now = (inst.free[capable][:, mask] // req[mask]).min(axis=1)
    left = (inst.free[capable] - fit_now[:, None] * req[None, :]).sum(axis=1)
    # nodes where a unit fits now first, least left over first; then the rest by index
    order = np.lexsort((left, fit_now == 0))
    for n in capable[order].tolist():
        if len(chosen) >= want:
            break
        chosen.add(n)
    return np.array(sorted(chosen), dtype=np.int64)


def _node_cumulatives(
    m: cp_model.CpModel,
    inst: Instance,
    starts: list[cp_model.IntVar],
    cand: int,
    all_nodes: bool,
    built: Built,
) -> None:
    n_nodes, n_res = inst.cap.shape
    per_node: list[list[tuple[cp_model.IntervalVar, int, cp_model.LinearExprT]]] = [
        [] for _ in range(n_nodes)
    ]
    for k, j in enumerate(inst.jobs):
        req = inst.req[j]
        mask = req > 0
        units = inst.units[k]
        d = inst.dur[k]
        placed: list[tuple[int, cp_model.IntVar]] = []
        total: list[cp_model.IntVar] = []
        nodes = candidate_nodes(inst, k, cand, all_nodes)
        if inst.rules is not None:
            nodes = inst.rules.candidates(inst, k, nodes)
        ub_all = np.minimum((inst.cap[nodes][:, mask] // req[mask]).min(axis=1), units)
        for n, ub in zip(nodes.tolist(), ub_all.tolist(), strict=True):
            p = m.new_bool_var(f"p{k}_{n}")
            u: cp_model.IntVar
            if ub == 1:
                u = p
            else:
                u = m.new_int_var(0, ub, f"u{k}_{n}")
                m.add(u >= p)
                m.add(u <= ub * p)
            iv = m.new_optional_fixed_size_interval_var(starts[k], d, p, f"i{k}_{n}")
            if inst.rules is not None:  # wall-time must not run into a reservation
                inst.rules.guard(m, inst, k, n, p, starts[k], inst.horizon - d)
            per_node[n].append((iv, j, u))
            placed.append((n, u))
            total.append(u)
        m.add(sum(total) == units)
        built.units.append(placed)
        built.n_optional += len(placed)
    req_all = inst.req
    for n in range(n_nodes):
        items = per_node[n]
        if not items:
            continue
        busy = [(b.rem, b.usage[n]) for b in inst.busy if b.usage[n].any()]
        busy_iv = [m.new_fixed_size_interval_var(0, rem, f"b{n}_{rem}") for rem, _ in busy]
        built.n_intervals += len(busy_iv)
        for r in range(n_res):
            ivs: list[cp_model.IntervalVar] = []
            dem: list[cp_model.LinearExprT] = []
            for iv, j, count in items:
                v = int(req_all[j, r])
                if v:
                    ivs.append(iv)
                    dem.append(count * v)
            if not ivs:
                continue
            for iv, (_, usage) in zip(busy_iv, busy, strict=True):
                if usage[r]:
                    ivs.append(iv)
                    dem.append(int(usage[r]))
            if inst.rules is not None:
                for iv, v in inst.rules.node_blocks_at(m, n, r):
                    ivs.append(iv)
                    dem.append(v)
            m.add_cumulative(ivs, dem, int(inst.cap[n, r]))
            built.n_cumulatives += 1


# ---- objectives ------------------------------------------------------------------------


def _scale(inst: Instance, biggest: float) -> float:
    """A multiplier K so that Σ K/w · o stays within the integer budget."""
    span = max(1, sum(max(inst.horizon - d, 0) for d in inst.dur))
    return max(1.0, min(biggest, _INT_BUDGET / span / 4))


def _objective(
    m: cp_model.CpModel, inst: Instance, name: str, o: list[cp_model.IntVar], built: Built
) -> Terms:
    """(scaled primary expression, optional (tie-break, weight of the primary))."""
    H = inst.horizon
    maxo = [max(H - d, 0) for d in inst.dur]
    if name == "wait":
        return cp_model.LinearExpr.weighted_sum(o, wait_coefficients(inst)), None
    if name == "slowdown":
        K = _scale(inst, 1e7)
        coefs = [max(1, round(K / d)) for d in inst.dur]
        return cp_model.LinearExpr.weighted_sum(o, coefs), None
    if name == "tardiness":
        K = _scale(inst, 1e6)
        vars_: list[cp_model.LinearExprT] = []
        coefs = []
        for k, (e, w0) in enumerate(zip(inst.ewt, inst.wait0, strict=True)):
            slack = e - w0  # late once o > slack
            c = max(1, round(K / e))
            if slack >= maxo[k]:
                continue
            if slack <= 0:
                vars_.append(o[k])
                coefs.append(c)
                continue
            t = m.new_int_var(0, maxo[k] - slack, f"t{k}")
            m.add(t >= o[k] - slack)
            built.aux.append((t, _tard_fn(k, slack)))
            vars_.append(t)
            coefs.append(c)
        return cp_model.LinearExpr.weighted_sum(vars_, coefs), None
    tie = cp_model.LinearExpr.sum(o)
    tie_span = sum(maxo) + 1
    if name == "makespan":
        lo = max([b.rem for b in inst.busy] + [min(inst.dur, default=0)])
        mk = m.new_int_var(0, max(H, lo), "makespan")
        for k, d in enumerate(inst.dur):
            m.add(mk >= o[k] + d)
        if inst.busy:
            m.add(mk >= max(b.rem for b in inst.busy))
        built.aux.append((mk, _makespan_fn(inst)))
        return mk, _tie(tie, tie_span, max(H, lo))
    if name == "late":
        lits = []
        for k, (e, w0) in enumerate(zip(inst.ewt, inst.wait0, strict=True)):
            slack = e - w0
            if slack >= maxo[k] or slack < 0:
                continue  # never late / already late whatever we do
            lt = m.new_bool_var(f"l{k}")
            m.add(o[k] - slack <= (maxo[k] - slack) * lt)
            built.aux.append((lt, _late_fn(k, slack)))
            lits.append(lt)
        return cp_model.LinearExpr.sum(lits), _tie(tie, tie_span, len(inst.dur))
    raise ValueError(f"unknown objective {name!r}")


def wait_coefficients(inst: Instance) -> list[int]:
    """Integer weights of the weighted-wait objective: round(100 · max ewt / ewt_i)."""
    return [max(1, round(100 * inst.max_ewt / e)) for e in inst.ewt]


def _tie(
    tie: cp_model.LinearExprT, span: int, primary_max: int
) -> tuple[cp_model.LinearExprT, int] | None:
    """Lexicographic tie-break Σ o (earlier starts) when the numbers stay in range."""
    if span * max(primary_max, 1) * 2 >= _INT_BUDGET:
        return None
    return tie, span


def _tard_fn(k: int, slack: int) -> Callable[[list[int]], int]:
    return lambda s: max(0, s[k] - slack)


def _late_fn(k: int, slack: int) -> Callable[[list[int]], int]:
    return lambda s: int(s[k] > slack)


def _makespan_fn(inst: Instance) -> Callable[[list[int]], int]:
    busy_end = max((b.rem for b in inst.busy), default=0)
    durs = inst.dur
    return lambda s: max([busy_end, *(a + d for a, d in zip(s, durs, strict=True))])


def add_hint(
    built: Built,
    inst: Instance,
    starts: list[int],
    placement: dict[int, tuple[IntArray, IntArray]] | None,
) -> None:
    """A complete hint: starts, unit counts (PCP) and every auxiliary variable."""
    m = built.model
    m.clear_hints()
    for var, s in zip(built.starts, starts, strict=True):
        m.add_hint(var, s)
    if built.units and placement is not None:
        for k, j in enumerate(inst.jobs):
            nodes, counts = placement[j]
            where = dict(zip(nodes.tolist(), counts.tolist(), strict=True))
            for n, u in built.units[k]:
                m.add_hint(u, where.get(n, 0))
    for var, fn in built.aux:
        m.add_hint(var, fn(starts))


def true_objective(inst: Instance, name: str, starts: list[int]) -> float:
    """The objective of a schedule in the papers' units (absolute, not scaled)."""
    if name == "wait":
        return float(
            sum(
                (inst.max_ewt / e) * (s + w)
                for s, e, w in zip(starts, inst.ewt, inst.wait0, strict=True)
            )
        )
    if name == "slowdown":
        return float(
            sum((s + w + d) / d for s, w, d in zip(starts, inst.wait0, inst.dur, strict=True))
        )
    if name == "tardiness":
        return float(
            sum(max(0, s + w - e) / e for s, w, e in zip(starts, inst.wait0, inst.ewt, strict=True))
        )
    if name == "late":
        return float(
            sum(1 for s, w, e in zip(starts, inst.wait0, inst.ewt, strict=True) if s + w > e)
        )
    if name == "makespan":
        return float(_makespan_fn(inst)(starts))
    raise ValueError(f"unknown objective {name!r}")
