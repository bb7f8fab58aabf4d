"""A run that kills its worker process is pinned to itself; the runs beside it finish.

``crash_or_square`` aborts the worker process for the poisoned items (as a native library's
fatal check does) and squares the others; with every run submitted at once, a dying
worker would break the pool for all of them.
"""

from __future__ import annotations

import os
from pathlib import Path

from dispatchlab.experiments import LocalBackend
from dispatchlab.experiments.backends import WorkerLost

POISON = {7}


def crash_or_square(x: int) -> int:
    """Abort the whole process for a poisoned item, else return its square."""
    if x in POISON:
        os.abort()
    return x * x


def test_only_the_crashing_run_fails() -> None:
    items = list(range(12))
    eng = LocalBackend(2, max_attempts=2)
    with eng:
        out = dict(eng.map_unordered(crash_or_square, items, key=str))
    assert set(out) == set(items)
    assert isinstance(out[7], WorkerLost) and "died 2 times" in str(out[7])
    assert {k: v for k, v in out.items() if k != 7} == {x: x * x for x in items if x != 7}
    # the poisoned run was retried alone; at most one other run shared its first pool
    assert 2 <= eng.resubmitted <= 3


def crash_once(item: tuple[str, int]) -> int:
    """Abort the process the first time item 5 runs (a marker file remembers), else square."""
    marker, x = item
    if x == 5 and not os.path.exists(marker):
        open(marker, "w").close()
        os.abort()
    return x * x


def test_a_worker_death_that_does_not_repeat_costs_nothing(tmp_path: Path) -> None:
    marker = str(tmp_path / "died")
    items = [(marker, x) for x in range(8)]
    eng = LocalBackend(2)
    with eng:
        out = dict(eng.map_unordered(crash_once, items, key=lambda it: str(it[1])))
    assert {x: v for (_, x), v in out.items()} == {x: x * x for x in range(8)}
    assert os.path.exists(marker) and 1 <= eng.resubmitted <= 2
