"""Cost of one live scheduling cycle's conversion on a large synthetic Slurm state.

Synthetic ``squeue --json`` / ``sinfo --json`` documents (Slurm 22.05 shape,
:mod:`dispatchlab.live.synthetic_state`) of ``--nodes`` nodes (32 CPUs each) with
``--running`` jobs packed on them and ``--pending`` user-held jobs; per repeat:

- ``json_s``: ``json.loads`` of both documents (what reading them costs in Python);
  ``free_docs_s``: freeing them afterwards (also part of reading);
- ``snapshot_s``: the parsed documents → :class:`~dispatchlab.live.slurm_state.Snapshot`;
- ``twin_s``: snapshot → the engine's workload, platform and placements (``build_twin``);
- ``warm_s``: a simulator warm-started in that state, running jobs placed through the
  start validator, with a dispatcher that decides nothing;
- ``conversion_s`` = snapshot + twin + warm (target ≤ 0.1 s), wall time;
  ``conversion_cpu_s`` the same in this process's CPU time (on a loaded machine the wall
  time includes waiting for a core);
- ``decide_s``: the same with ``--dispatcher`` deciding, minus ``warm_s`` (the solver's
  time, reported apart).

Medians of ``--repeats``; the load average is printed with them (the machine is shared).

Usage: ``python benchmarks/bench_live_cycle.py [--nodes 5000] [--pending 20000]
[--running 2000] [--repeats 5] [--dispatcher easy] [--out FILE]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.engine.decisions import Decision
from dispatchlab.engine.events import Events
from dispatchlab.engine.state import SystemView
from dispatchlab.live.slurm_state import no_gc, snapshot
from dispatchlab.live.synthetic_state import synthetic_docs
from dispatchlab.live.twin import build_twin

NOW = 1_800_000_000


class DecideNothing:
    """A dispatcher that returns no decision (to time the state building alone)."""

    name = "nothing"

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Nothing to prepare."""

    def decide(self, view: SystemView, events: Events) -> Sequence[Decision]:
        return []

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}

    def run_stats(self) -> dict[str, Any]:
        return {}


def measure(nodes: int, running: int, pending: int, repeats: int, spec: str
            ) -> dict[str, Any]:
    squeue, sinfo = synthetic_docs(nodes, running, pending, seed=1, now=NOW)
    texts = json.dumps(squeue), json.dumps(sinfo)
    del squeue, sinfo  # the adapter keeps only the snapshot, not the documents
    rows: dict[str, list[float]] = {k: [] for k in
                                    ("json_s", "snapshot_s", "twin_s", "warm_s", "decide_s",
                                     "conversion_cpu_s", "free_docs_s")}
    starts = 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        with no_gc():  # as SlurmClient reads them
            docs = [json.loads(t) for t in texts]
        t1 = time.perf_counter()
        c1 = time.process_time()
        snap = snapshot(NOW, docs[0], docs[1])
        t2 = time.perf_counter()
        with no_gc():  # as SlurmAdapter.cycle converts
            twin = build_twin(snap, "main")
            t3 = time.perf_counter()
            twin.decide(DecideNothing())
        t4 = time.perf_counter()
        c4 = time.process_time()
        del docs  # freeing the parsed documents (timed apart: the read's cost)
        t5 = time.perf_counter()
        _, decisions = twin.decide(get_dispatcher(spec))
        t6 = time.perf_counter()
        starts = len(decisions)
        for key, value in zip(rows, (t1 - t0, t2 - t1, t3 - t2, t4 - t3,
                                     (t6 - t5) - (t4 - t3), c4 - c1, t5 - t4),
                              strict=True):
            rows[key].append(value)
    med = {k: statistics.median(v) for k, v in rows.items()}
    med["conversion_s"] = med["snapshot_s"] + med["twin_s"] + med["warm_s"]
    return {"nodes": nodes, "running": len(twin.placed), "pending": len(twin.waiting),
            "dispatcher": spec, "decisions": starts, "repeats": repeats, **med,
            "target_conversion_s": 0.1, "load": os.getloadavg()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--running", type=int, default=2000)
    ap.add_argument("--pending", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--dispatcher", default="easy")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    measure(50, 10, 50, 1, args.dispatcher)  # imports and compiled kernels, untimed
    res = measure(args.nodes, args.running, args.pending, args.repeats, args.dispatcher)
    text = json.dumps(res, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
