"""Conservative backfilling's general loop on overloaded machines, at two trace lengths: how
the CPU time grows with the jobs, and how many earliest-fit searches the compressions make.

Cases (fresh interpreter each; CPU seconds of the ``simulate()`` call; schedule digest):

- ``hpc2n-30``: HPC2N's first N jobs on 30 two-core nodes (a quarter of the machine; jobs
  asking more rejected), ``conservative``, general loop — a long queue, thousands of
  reservations moving at every early end;
- ``kth-cap``: KTH's first N jobs on 100 one-core nodes with the generic node model under
  17,000 W, plain ``conservative`` (every start the cap refuses rebuilds the book).

``--loop auto`` (or ``compiled``) runs both in the compiled conservative loops
(``conservative_loop``; under the cap ``conservative_scenario_loop``); ``--sizes`` sets N,
``--cases`` the cases.

``searched``/``moves``: earliest-fit searches in compressions (slot book only) and the
reservations moved. Usage::

    PYTHONPATH=<old tree>/src python benchmarks/bench_conservative_overloaded.py --json base.json
    python benchmarks/bench_conservative_overloaded.py --baseline base.json

Needs /work/shared/traces.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from script_args import keep_output, ready, runner_options

HERE = Path(__file__).resolve().parent
SIZES = (5000, 10000)
CASES = ("hpc2n-30", "kth-cap")


def run_case(name: str, n: int, loop: str = "general") -> dict[str, Any]:
    """One case in this process (``loop``: ``general``, ``auto`` or ``compiled``)."""
    sys.path.insert(0, str(HERE))
    import numpy as np

    from dispatchlab.dispatchers.rule_based.policy import Policy
    from dispatchlab.dispatchers.rule_based.selection import Conservative
    from dispatchlab.platform.power import GENERIC
    from dispatchlab.platform.resolve import resolve_platform
    from dispatchlab.simulation import simulate
    from dispatchlab.workload import load_swf
    from schedule_digests import HPC2N, KTH, digest_recorder, loop_keyword

    kw: dict[str, Any] = {"check": False, "tables": False, loop_keyword(simulate): loop,
                          "on_infeasible": "reject"}
    if name == "hpc2n-30":
        wl, plat = load_swf(HPC2N), resolve_platform("nodes=30,cores=2")
    else:
        wl = load_swf(KTH)
        plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
        kw["power_cap"] = 17_000.0
    wl = wl.take(np.arange(min(n, wl.n_jobs), dtype=np.int64))
    sel = Conservative()
    cpu = time.process_time()
    res = simulate(wl, plat, Policy("fifo", sel), **kw)
    cpu = time.process_time() - cpu
    assert res.recorder is not None
    compiled = res.summary.get("loop", "general") == "compiled"
    return {"cpu_s": round(cpu, 3), "jobs": int(wl.n_jobs), "loop": res.summary.get("loop"),
            "digest": digest_recorder(res.recorder),
            **(res.recorder.dispatcher_stats if compiled else sel.run_stats()),
            "searched": None if compiled else getattr(sel._book, "searched", None)}


def main() -> None:
    """Run every case and size (``--repeats`` fresh processes, medians) and print a table."""
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", nargs=3, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--loop", default="general", help="general | auto | compiled")
    ap.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    ap.add_argument("--cases", nargs="*", default=list(CASES), choices=CASES)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--baseline", type=Path, default=None)
    runner_options(ap)
    args = ap.parse_args()
    from schedule_digests import HPC2N, KTH

    ready(args, *[HPC2N if c.startswith("hpc2n") else KTH for c in args.cases])

    keep_output(args.out)
    if args.child:
        print(json.dumps(run_case(args.child[0], int(args.child[1]), args.child[2])))
        return
    base = json.loads(args.baseline.read_text()) if args.baseline else None
    load_before = os.getloadavg()[0]
    out: dict[str, Any] = {}
    for name in args.cases:
        for n in args.sizes:
            runs = [json.loads(subprocess.run(
                [sys.executable, __file__, "--child", name, str(n), args.loop], check=True,
                capture_output=True, text=True).stdout.strip().splitlines()[-1])
                for _ in range(args.repeats)]
            assert len({r["digest"] for r in runs}) == 1, f"{name}: runs differ"
            out[f"{name}/{n}"] = {**runs[0], "cpu_s": statistics.median(
                r["cpu_s"] for r in runs), "cpu_runs": [r["cpu_s"] for r in runs]}
            print(f"{name}/{n}", out[f"{name}/{n}"]["cpu_s"], flush=True)
    results = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "load_before": load_before, "load_after": os.getloadavg()[0], "cases": out}
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print(f"{results['when']}, load {load_before:.1f}–{results['load_after']:.1f}, "
          f"median of {args.repeats} fresh processes, loop {args.loop}")
    print("| case | jobs | CPU s | baseline CPU s | speed-up | searched | moves | "
          "compressions | rebuilds | same schedule |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key, r in out.items():
        b = base["cases"].get(key) if base else None
        cols = [key, f"{r['jobs']:,}", f"{r['cpu_s']:.2f}",
                f"{b['cpu_s']:.2f}" if b else "", f"{b['cpu_s'] / r['cpu_s']:.2f}×" if b else "",
                str(r["searched"]), str(r["moves"]), str(r["compressions"]),
                str(r["rebuilds"]), ("yes" if b["digest"] == r["digest"] else "**NO**")
                if b else ""]
        print("| " + " | ".join(cols) + " |")
    if base and any(base["cases"][k]["digest"] != r["digest"] for k, r in out.items()
                    if k in base["cases"]):
        raise SystemExit("a schedule differs from the baseline's")


if __name__ == "__main__":
    main()
