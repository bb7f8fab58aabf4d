"""Node choice as Slurm's ``select/cons_tres`` makes it for a job without topology or
required nodes: ``src/plugins/select/cons_tres/job_test.c``, ``_eval_nodes`` (Slurm 22.05).

The usable nodes form consecutive runs (node order; a node with nothing to offer ends a
run). The run chosen is the smallest one that holds the rest of the job ("best fit"), or,
when none does, the largest; ties go to the first. In the chosen run, when one node can
hold the rest, the node with the least room that does (the first on ties) takes all of it;
otherwise nodes are taken in order. Runs are chosen until the job is placed.

Room is counted in job units (a unit: the job's per-task request of cores, and of memory
under ``CR_Core_Memory``); ``CR_Core`` allocates cores, so units of one core each are what
Slurm calls CPUs here (``ThreadsPerCore`` = 1, see :mod:`dispatchlab.platform.slurm_conf`).
"""

from __future__ import annotations

from collections.abc import Sequence


def units_room(free: Sequence[Sequence[int]], req: Sequence[int], node: int) -> int:
    """How many units of per-unit request ``req`` fit in ``free[node]``."""
    room = -1
    row = free[node]
    for r, amount in enumerate(req):
        if amount > 0:
            k = row[r] // amount
            if room < 0 or k < room:
                room = k
    return max(room, 0)


def choose_nodes(room: Sequence[int], units: int, max_nodes: int | None = None
                 ) -> dict[int, int] | None:
    """``{node: units}`` placing ``units`` on nodes with ``room[n]`` units free
    (0 = unusable) on at most ``max_nodes`` nodes (the partition's ``MaxNodes``: Slurm
    stops adding nodes there), or ``None`` when they do not fit."""
    if sum(room) < units:
        return None
    runs: list[tuple[int, int, int]] = []  # (first, last, room in the run)
    start = -1
    total = 0
    for n, r in enumerate(room):
        if r > 0:
            if start < 0:
                start, total = n, 0
            total += r
        elif start >= 0:
            runs.append((start, n - 1, total))
            start = -1
    if start >= 0:
        runs.append((start, len(room) - 1, total))
    chosen: dict[int, int] = {}
    rest = units
    while rest > 0:
        best = -1
        for k, (_, _, size) in enumerate(runs):
            if best < 0 or _better(size, runs[best][2], rest):
                best = k
        if best < 0:
            return None
        first, last, _ = runs.pop(best)
        single = -1
        for n in range(first, last + 1):
            if room[n] >= rest and (single < 0 or room[n] < room[single]):
                single = n
        if single >= 0:
            chosen[single] = rest
            rest = 0
            break
        for n in range(first, last + 1):
            if max_nodes is not None and len(chosen) >= max_nodes:
                return None
            take = min(room[n], rest)
            if take > 0:
                chosen[n] = take
                rest -= take
            if rest == 0:
                break
    return dict(sorted(chosen.items()))


def _better(size: int, best: int, rest: int) -> bool:
    """Whether a run of ``size`` beats the best so far: a run that holds the rest beats one
    that does not; among those that hold it the smaller, among the others the larger."""
    fits, best_fits = size >= rest, best >= rest
    if fits != best_fits:
        return fits
    return size < best if fits else size > best
