"""Which machines each scenario row moves, decided before the compiled loop runs.

In the general loop the engine asks the dispatcher's ``choose_nodes(view, candidates,
count, leaving)`` at every ``alive_nodes`` row that changes the count; ``FirstFitVC``
answers from the row alone (aware: the highest indices leave, the lowest come back) or with
the run's generator (unaware: ``rng.choice`` of ``count`` candidates). The candidates are
the machines present (leaving) or down (coming back), and which machines are down depends
only on the scenario's rows and these answers: no decision of first fit takes a machine
away or brings one back. So the answers, drawn in row order from a generator seeded as
the engine seeds the dispatcher's (``default_rng(seed)``, which nothing else draws from),
are exactly the general loop's — including draws for rows the general loop never reaches
(after the last job), which come after every draw it makes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from dispatchlab.arrays import IntArray
from dispatchlab.engine.compiled.eligibility import ScenarioRows

#: Row kinds of :class:`~dispatchlab.engine.compiled.eligibility.ScenarioRows`.
NODE_DOWN, NODE_UP, ALIVE_NODES = 0, 1, 2

#: ``(candidates, count, leaving) -> chosen nodes``, in the order they move.
Chooser = Callable[[IntArray, int, bool], list[int]]


def resolve_rows(rows: ScenarioRows, n_nodes: int, choose: Chooser
                 ) -> tuple[IntArray, npt.NDArray[np.bool_], IntArray, IntArray]:
    """Each row as the machines it moves, in the engine's order: ``(time, leaving,
    offsets, nodes)``, row ``k`` moving ``nodes[offsets[k]:offsets[k + 1]]`` (``node_down``
    and ``node_up`` rows: their targets as listed, the loop skips those already gone or
    present; ``alive_nodes``: the ``choose`` answer, or nothing when the count holds)."""
    down = np.zeros(n_nodes, dtype=np.bool_)
    leaving = np.zeros(len(rows.time), dtype=np.bool_)
    offsets = [0]
    nodes: list[int] = []
    for k in range(len(rows.time)):
        kind = int(rows.kind[k])
        if kind == ALIVE_NODES:
            present = np.flatnonzero(~down)
            want = int(rows.value[k])
            moved: list[int] = []
            if want < len(present):
                moved = choose(present, len(present) - want, True)
                leaving[k] = True
            elif want > len(present):
                moved = choose(np.flatnonzero(down), want - len(present), False)
        else:
            moved = rows.nodes[rows.offsets[k]:rows.offsets[k + 1]].tolist()
            leaving[k] = kind == NODE_DOWN
        down[moved] = leaving[k]
        nodes.extend(moved)
        offsets.append(len(nodes))
    return (rows.time.astype(np.int64), leaving, np.array(offsets, dtype=np.int64),
            np.array(nodes, dtype=np.int64))
