"""The rule-based :class:`~dispatchlab.dispatchers.rule_based.policy.Policy`'s compiled plan:
which of its combinations the compiled loops reproduce exactly, their inputs, and the loop
that runs them (:func:`~dispatchlab.dispatchers.rule_based.compiled.runner.run_plan`).

A static ordering (``fifo``, ``sjf``, ``ljf``, ``f1``, …) or, with strict, EASY,
``easy-power`` or conservative, a dynamic one (``wfp3``, ``uni``, ``slowdown``:
:mod:`~dispatchlab.dispatchers.rule_based.compiled_scores`), strict, non-strict, EASY,
``easy-power`` or conservative selection (any depth), first-fit, the requested-time or
real-duration estimate; with strict, non-strict, EASY or ``easy-power`` selection and a
static ordering also the ``energy-model`` allocator (``prb-power``). Other selections,
allocators and dynamic orderings with non-strict selection run in the general loop (the
loops say which combinations of the run they take: conservative with a depth limit or a
dynamic ordering only on a fixed machine without a cap, :mod:`.compiled.runner`); a
subclass of ``Policy`` may change the decisions and has no plan unless it offers its own
(:meth:`Policy.compiled_plan
<dispatchlab.dispatchers.rule_based.policy.Policy.compiled_plan>`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dispatchlab.dispatchers.allocators import FirstFit, MarginalPowerFirst
from dispatchlab.dispatchers.rule_based.compiled.dynamic_order import STATIC
from dispatchlab.dispatchers.rule_based.compiled.runner import run_plan
from dispatchlab.dispatchers.rule_based.compiled_scores import dynamic_score, score_terms
from dispatchlab.dispatchers.rule_based.selection import (
    Conservative,
    Easy,
    EasyPower,
    NonStrict,
    Strict,
)
from dispatchlab.engine.compiled.plan import CompiledPlan, IntArray
from dispatchlab.engine.state import SystemView
from dispatchlab.estimates.base import OracleEstimate, WalltimeEstimate
from dispatchlab.workload.workload import Workload

if TYPE_CHECKING:
    from dispatchlab.dispatchers.rule_based.policy import Policy

_SELECTIONS = {Strict: "strict", Easy: "easy", EasyPower: "easy-power",
               Conservative: "conservative", NonStrict: "nonstrict"}


def policy_plan(policy: Policy, workload: Workload, view: SystemView) -> CompiledPlan | str:
    """``policy``'s compiled plan for ``workload`` (``view``: the engine's view of it, every
    job known), or why it has none."""
    score = dynamic_score(policy)
    if isinstance(score, str):
        return score
    sel = policy.selection
    selection = _SELECTIONS.get(type(sel))
    if selection is None:
        return (f"selection '{sel.name}' is neither strict, non-strict, EASY, easy-power nor "
                "conservative")
    energy = type(policy.allocator) is MarginalPowerFirst and selection != "conservative"
    if type(policy.allocator) is not FirstFit and not energy:
        return (f"allocator '{policy.allocator.name}' is not first-fit (nor energy-model with "
                "strict, non-strict or EASY selection)")
    wl = workload
    if type(policy.estimate) is WalltimeEstimate:  # as WalltimeEstimate / OracleEstimate
        est = np.maximum(wl.walltime, 1)
    elif type(policy.estimate) is OracleEstimate:
        est = np.maximum(np.minimum(wl.runtime, wl.walltime), 1)
    else:
        return f"duration estimate '{policy.estimate.name}' is not walltime or real"
    if score != STATIC and (selection == "nonstrict" or energy):
        return (f"ordering '{policy.ordering.name}' is dynamic (with "
                f"{'the energy-model allocator' if energy else sel.name + ' selection'})")
    estimate = est.astype(np.int64)
    return CompiledPlan(selection=selection, depth=-1 if sel.depth is None else int(sel.depth),
                        estimate=estimate, ranks=lambda: _ranks(policy, wl, view),
                        run=run_plan, score=score,
                        score_terms=None if score == STATIC else
                        lambda: score_terms(score, view, estimate),
                        allocator="energy-model" if energy else "first-fit")


def _ranks(policy: Policy, workload: Workload, view: SystemView) -> IntArray:
    """Each job's position in the static ordering: its keys, ties by job index, exactly as
    ``JobQueue`` sorts arrivals."""
    idx = np.arange(workload.n_jobs)
    if policy.ordering.by_arrival or policy.ordering.dynamic:  # (dynamic: sorted at each call)
        return idx
    keys = policy.ordering.keys(view, idx)
    order = np.lexsort((idx, *reversed(keys)))
    rank = np.empty_like(order)
    rank[order] = idx
    return rank.astype(np.int64)
