"""Cost of one live scheduling cycle's conversion on a large synthetic Slurm or PBS state.

Synthetic ``squeue --json`` / ``sinfo --json`` documents (Slurm 22.05 shape,
:mod:`dispatchlab.live.synthetic_state`; with ``--system pbs`` the same state as
``qstat -f -F json`` / ``pbsnodes -av -F json``, queued jobs the adapter's) of ``--nodes``
nodes (32 CPUs each) with ``--running`` jobs packed on them and ``--pending`` user-held
jobs; per repeat:

- ``json_s``: ``json.loads`` of both documents (what reading them costs in Python);
  ``free_docs_s``: freeing them afterwards (also part of reading); as
  :meth:`~dispatchlab.live.slurm_client.SlurmClient.read` does, the collector is paused
  from parsing until they are freed, so no collection scans them;
- ``snapshot_s``: the parsed documents → :class:`~dispatchlab.live.slurm_state.Snapshot`;
- ``twin_s``: snapshot → the engine's workload, platform and placements (``build_twin``;
  with ``--rules``, PBS only, also the queue's limits and a confirmed reservation of the
  last 200 vnodes an hour ahead, :func:`~dispatchlab.live.pbs_rules.constrain`);
- ``warm_s``: a simulator warm-started in that state, running jobs placed through the
  start validator, with a dispatcher that decides nothing, and the first collection of
  the young objects all this made (``gc.collect(0)``);
- ``conversion_s`` = snapshot + twin + warm (target ≤ 0.1 s), wall time;
  ``conversion_cpu_s`` the same in this process's CPU time (on a loaded machine the wall
  time includes waiting for a core);
- ``decide_s``: the same with ``--dispatcher`` deciding, minus ``warm_s`` (the solver's
  time, reported apart).

Medians of ``--repeats``; the load average is printed with them (the machine is shared).

Usage: ``python benchmarks/bench_live_cycle.py [--nodes 5000] [--pending 20000]
[--running 2000] [--repeats 5] [--dispatcher easy] [--system slurm|pbs] [--rules]
[--out FILE]``
"""

from __future__ import annotations

import argparse
import gc
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
from dispatchlab.live.pbs_rules import PbsQueue, PbsReservation, PbsRules, constrain
from dispatchlab.live.pbs_state import pbs_snapshot
from dispatchlab.live.slurm_state import Snapshot, no_gc, snapshot
from dispatchlab.live.synthetic_state import synthetic_docs, synthetic_pbs_docs
from dispatchlab.live.twin import Twin, build_twin
from dispatchlab.provenance import versions
from script_args import ready, runner_options

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


def synthetic_rules(nodes: int) -> PbsRules:
    """Queue ``main`` with a wall-time limit (a day) and a run limit, and a confirmed
    reservation of the last 200 vnodes (a tenth at most) from an hour after ``NOW``."""
    held = tuple((f"c{k}", 32) for k in range(max(1, nodes - min(200, nodes // 10)) + 1,
                                                nodes + 1))
    return PbsRules({"main": PbsQueue("main", max_walltime=86400, max_run=100_000)},
                    (PbsReservation("R1.server", "R1", "RESV_CONFIRMED", NOW + 3600,
                                    NOW + 7200, held),))


def _convert(texts: tuple[str, str], previous: Snapshot | None, spec: str,
             system: str = "slurm", rules: PbsRules | None = None
             ) -> tuple[dict[str, float], Snapshot, Twin, int]:
    """One poll's timings (as the adapter reads and converts), its snapshot and twin, and
    how many jobs ``spec`` starts on it."""
    t0 = time.perf_counter()
    with no_gc():  # as SlurmClient.read: parse, convert, free, then collect again
        docs = [json.loads(t) for t in texts]
        t1 = time.perf_counter()
        c1 = time.process_time()
        snap = (pbs_snapshot(NOW, docs[0], docs[1], "main") if system == "pbs"
                else snapshot(NOW, docs[0], docs[1], previous))
        t2 = time.perf_counter()
        c2 = time.process_time()
        del docs  # freeing the parsed documents (timed apart: the read's cost)
        t3 = time.perf_counter()
        c3 = time.process_time()
    with no_gc():  # as SlurmAdapter.cycle converts
        twin = build_twin(snap, "main")
        if rules is not None:
            twin = constrain(twin, snap, "main", rules)
        t4 = time.perf_counter()
        twin.decide(DecideNothing())
    gc.collect(0)  # the young objects the conversion made: their first collection
    t5 = time.perf_counter()
    c5 = time.process_time()
    _, decisions = twin.decide(get_dispatcher(spec))
    t6 = time.perf_counter()
    row = {"json_s": t1 - t0, "snapshot_s": t2 - t1, "twin_s": t4 - t3, "warm_s": t5 - t4,
           "decide_s": (t6 - t5) - (t5 - t4), "conversion_cpu_s": (c2 - c1) + (c5 - c3),
           "free_docs_s": t3 - t2}
    return row, snap, twin, len(decisions)


def measure(nodes: int, running: int, pending: int, repeats: int, spec: str,
            system: str = "slurm", with_rules: bool = False) -> dict[str, Any]:
    make = synthetic_pbs_docs if system == "pbs" else synthetic_docs
    squeue, sinfo = make(nodes, running, pending, seed=1, now=NOW)
    texts = json.dumps(squeue), json.dumps(sinfo)
    del squeue, sinfo  # the adapter keeps only the snapshot, not the documents
    rules = synthetic_rules(nodes) if with_rules else None
    out: dict[str, Any] = {}
    for poll in ("first", "next"):
        rows: dict[str, list[float]] = {}
        prev = None
        for _ in range(repeats):
            if poll == "next" and prev is None:
                _, prev, _, _ = _convert(texts, None, spec, system, rules)
            row, snap, twin, starts = _convert(texts, prev if poll == "next" else None, spec,
                                               system, rules)
            prev = snap
            for key, value in row.items():
                rows.setdefault(key, []).append(value)
        med = {k: statistics.median(v) for k, v in rows.items()}
        med["conversion_s"] = med["snapshot_s"] + med["twin_s"] + med["warm_s"]
        out[poll] = med
    return {"system": system, "nodes": nodes, "running": len(twin.placed),
            "pending": len(twin.waiting), "dispatcher": spec, "decisions": starts,
            "repeats": repeats, "rules": with_rules, **out,
            "target_conversion_s": 0.1, "load": os.getloadavg(),
            "config": {"seed": 1, "cpus_per_node": 32}, "versions": versions()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--running", type=int, default=2000)
    ap.add_argument("--pending", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--dispatcher", default="easy")
    ap.add_argument("--system", choices=("slurm", "pbs"), default="slurm")
    ap.add_argument("--rules", action="store_true",
                    help="PBS: a queue with limits and a confirmed reservation")
    ap.add_argument("--out", type=Path)
    runner_options(ap, out=False)
    args = ap.parse_args()
    ready(args)
    if args.rules and args.system != "pbs":
        ap.error("--rules needs --system pbs")
    measure(50, 10, 50, 1, args.dispatcher, args.system)  # imports, kernels: untimed
    res = measure(args.nodes, args.running, args.pending, args.repeats, args.dispatcher,
                  args.system, args.rules)
    text = json.dumps(res, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
