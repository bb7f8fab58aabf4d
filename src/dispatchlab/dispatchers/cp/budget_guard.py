"""Keep a dispatcher that does not plan power within the machine-wide power budget.

Dispatchers that model power (power-aware EASY/conservative, DEC) plan it themselves; the
others — CP models without a power cumulative, custom dispatchers — pass their decisions
through :func:`within_budget`, which postpones (drops, to be decided again at a later
decision point) the starts the cap cannot take now, in the order they were decided, and
keeps the components of a heterogeneous job together.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dispatchlab.engine.budget import EPS, fits_cap
from dispatchlab.engine.decisions import Decision, Start
from dispatchlab.engine.state import SystemView


def within_budget(view: SystemView, decisions: Sequence[Decision]) -> list[Decision]:
    """``decisions`` without the starts that would take the power over the cap."""
    budget = view.budget
    if budget is None:
        return list(decisions)
    left = budget.cap - budget.used
    free = view.free.copy()  # as the kept starts leave it
    dropped: set[int] = set()
    for d in decisions:
        if type(d) is Start:
            nodes, counts = np.asarray(d.nodes), np.asarray(d.counts)
            p = view.power_of(d.job, nodes, counts, free)
            if p <= EPS or fits_cap(0.0, p, left):
                left -= p
                free[nodes] -= counts[:, None] * view.req[d.job]
            else:
                dropped.add(d.job)
    if not dropped:
        return list(decisions)
    rules = view.rules
    if rules is not None and rules.components:  # a heterogeneous job starts whole or not
        for j in list(dropped):
            group = rules.group_of.get(j)
            if group is not None:
                dropped.update(rules.components[group])
    return [d for d in decisions if not (type(d) is Start and d.job in dropped)]
