"""Which dynamic orderings the rule-based policy's compiled plan takes, and the per-job terms
of their scores (the compiled side: :mod:`.compiled.dynamic_order`).

``wfp3``, ``uni`` and ``slowdown`` as :mod:`.orderings` defines them (their own classes, not
subclasses, which may score otherwise) with strict, EASY, ``easy-power`` or conservative
selection. The
terms are what does not change while a job waits, computed here with numpy exactly as the
orderings compute them at every decision: ``wfp3`` the requested time and the processors,
``uni`` its divisor ``log2(max(n, 2))·r``, ``slowdown`` the duration estimate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.dispatchers.rule_based.compiled.dynamic_order import (
    SCORES,
    SLOWDOWN,
    STATIC,
    UNI,
    WFP3,
)
from dispatchlab.dispatchers.rule_based.orderings import (
    Ordering,
    Slowdown,
    Uni,
    Wfp3,
    requested_and_cores,
    uni_divisor,
)
from dispatchlab.engine.state import SystemView

if TYPE_CHECKING:
    from dispatchlab.dispatchers.rule_based.policy import Policy

_CLASSES: dict[type[Ordering], int] = {Wfp3: WFP3, Uni: UNI, Slowdown: SLOWDOWN}


def dynamic_score(policy: Policy) -> int | str:
    """The compiled loops' code of ``policy``'s ordering (:data:`STATIC` for a static one),
    or why they cannot order by it."""
    ordering = policy.ordering
    if not ordering.dynamic:
        return STATIC
    code = _CLASSES.get(type(ordering))
    if code is None:
        return (f"ordering '{ordering.name}' is dynamic and not one the compiled loops take "
                f"({', '.join(SCORES)})")
    return code


def score_terms(score: int, view: SystemView, estimate: IntArray
                ) -> tuple[FloatArray, FloatArray]:
    """Per job, the two terms of dynamic ``score`` that do not change while it waits
    (``estimate``: the plan's duration estimates, as the estimator gives them)."""
    idx = np.arange(view.jobs.n_jobs)
    unused = np.zeros(len(idx), np.float64)
    if score == WFP3:
        r, n = requested_and_cores(view, idx)
        return np.ascontiguousarray(r), np.ascontiguousarray(n)
    if score == UNI:
        return np.ascontiguousarray(uni_divisor(*requested_and_cores(view, idx))), unused
    if score == SLOWDOWN:
        return np.ascontiguousarray(estimate, dtype=np.float64), unused
    raise ValueError(f"not a dynamic score code: {score}")
