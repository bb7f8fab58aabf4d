"""Digests of full-trace schedules, to prove an engine change leaves every schedule unchanged.

Each case runs one simulation and hashes everything the run recorded: the segment log (jobs,
times, outcomes, lost work, nodes, counts, power), planned starts, rejections, the node-state
log, the decision points and the per-decision samples (queue, running, free and alive
capacity, power). Two trees give the same digest for a case exactly when they produced the
same run. Cases: FIFO, EASY and conservative on full HPC2N and KTH; scenario runs (20 % of
the nodes leaving and coming back on a seeded random walk, a varying power cap, both in one
scenario); conservative
backfilling under 18,000 W on KTH (overloaded: ~3 min of CPU compiled, ~7 min general); the
overloaded binding-cap EASY run; ``easy-power`` under a fixed cap, a varying cap and nodes
leaving with a varying cap; FIFO and EASY with idle nodes switched off (``+poweroff``),
also with nodes leaving, a varying cap, ``easy-power`` and ``wfp3``;
the dynamic orderings ``wfp3``, ``uni``, ``slowdown`` with EASY.

Usage: ``python benchmarks/schedule_digests.py --out digests.json [--only SUBSTR ...]
[--loop general]``; ``--compare digests.json`` checks against a stored file (exit 1 on any
difference). Run it with ``PYTHONPATH=<other tree>/src`` to digest another tree.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SWF = (HERE.parent / ".." / "shared" / "traces" / "swf").resolve()
HPC2N = SWF / "HPC2N-2002-2.2-cln.swf.gz"
KTH = SWF / "KTH-SP2-1996-2.1-cln.swf.gz"

#: 20 % of HPC2N's 240 nodes leave and come back: alive in [192, 240], hourly steps of 4.
NODE_WALK = ("gen:random-walk:what=alive_nodes,mean=216,range=24,step=4,period=3600,"
             "until=120000000,seed=7")
#: KTH's 100 nodes: alive in [80, 100].
KTH_WALK = ("gen:random-walk:what=alive_nodes,mean=90,range=10,step=2,period=3600,"
            "until=40000000,seed=7")
#: A power cap walking between 40,000 and 46,000 W every 6 hours (generic node model).
CAP_WALK = ("gen:random-walk:what=power_cap,mean=43000,range=3000,step=500,period=21600,"
            "until=120000000,seed=3")
#: KTH under a power cap walking between 17,000 and 21,000 W every 6 hours (generic node; the
#: whole machine busy draws 19,074 W).
KTH_CAP_WALK = ("gen:random-walk:what=power_cap,mean=19000,range=2000,step=500,period=21600,"
                "until=40000000,seed=3")


def loop_keyword(simulate: Any) -> str:
    """``simulate()``'s loop choice keyword: ``loop``, or ``engine`` in trees before
    2026-11-27 (benchmarks run older trees through ``PYTHONPATH`` to compare)."""
    return "loop" if "loop" in inspect.signature(simulate).parameters else "engine"


#: name → (trace, platform, dispatcher, generic node model, simulate() keywords)
CASES: dict[str, tuple[Path, str, str, bool, dict[str, Any]]] = {
    "hpc2n-fifo": (HPC2N, "nodes=240,cores=1", "fifo", False, {}),
    "hpc2n-easy": (HPC2N, "nodes=240,cores=1", "easy", False, {}),
    "hpc2n-conservative": (HPC2N, "nodes=240,cores=1", "conservative", False, {}),
    "kth-fifo": (KTH, "nodes=100,cores=1", "fifo", False, {}),
    "kth-easy": (KTH, "nodes=100,cores=1", "easy", False, {}),
    "kth-conservative": (KTH, "nodes=100,cores=1", "conservative", False, {}),
    "hpc2n-fifo-nodewalk": (HPC2N, "nodes=240,cores=1", "fifo", False,
                            {"scenario": NODE_WALK}),
    "hpc2n-easy-nodewalk": (HPC2N, "nodes=240,cores=1", "easy", False,
                            {"scenario": NODE_WALK}),
    "kth-conservative-nodewalk": (KTH, "nodes=100,cores=1", "conservative", False,
                                  {"scenario": KTH_WALK}),
    "kth-easy-nodewalk-fail": (KTH, "nodes=100,cores=1", "easy", False,
                               {"scenario": KTH_WALK, "on_abort": "fail"}),
    "hpc2n-easy-capwalk": (HPC2N, "nodes=240,cores=1", "easy", True, {"scenario": CAP_WALK}),
    "hpc2n-easy-nodewalk-capwalk": (HPC2N, "nodes=240,cores=1", "easy", True,
                                    {"scenario": [NODE_WALK, CAP_WALK]}),
    "hpc2n-easy-cap44000": (HPC2N, "nodes=240,cores=1", "easy", True,
                            {"power_cap": 44_000.0}),
    "kth-conservative-power-cap": (KTH, "nodes=100,cores=1", "conservative-power", True,
                                   {"power_cap": 17_000.0, "on_infeasible": "reject"}),
    "hpc2n-easy-cap42000": (HPC2N, "nodes=240,cores=1", "easy", True,
                            {"power_cap": 42_000.0}),
    "kth-conservative-cap18000": (KTH, "nodes=100,cores=1", "conservative", True,
                                  {"power_cap": 18_000.0, "on_infeasible": "reject"}),
    "hpc2n-easypower-cap44000": (HPC2N, "nodes=240,cores=1", "easy-power", True,
                                 {"power_cap": 44_000.0}),
    "hpc2n-easypower-cap42000": (HPC2N, "nodes=240,cores=1", "easy-power", True,
                                 {"power_cap": 42_000.0}),
    "hpc2n-easypower-capwalk": (HPC2N, "nodes=240,cores=1", "easy-power", True,
                                {"scenario": CAP_WALK}),
    "hpc2n-easypower-nodewalk-capwalk": (HPC2N, "nodes=240,cores=1", "easy-power", True,
                                         {"scenario": [NODE_WALK, CAP_WALK]}),
    # idle nodes switched off (generic node: boot 152 s, shutdown 7 s)
    "hpc2n-fifo-poweroff": (HPC2N, "nodes=240,cores=1", "fifo+poweroff:900", True, {}),
    "hpc2n-easy-poweroff": (HPC2N, "nodes=240,cores=1", "easy+poweroff:900", True, {}),
    "kth-easy-poweroff60": (KTH, "nodes=100,cores=1", "easy+poweroff:60", True, {}),
    "kth-easy-poweroff60-cap15000": (KTH, "nodes=100,cores=1", "easy+poweroff:60", True,
                                     {"power_cap": 15_000.0, "on_infeasible": "reject"}),
    # idle nodes switched off on a machine that changes (compiled since 2026-11-27)
    "hpc2n-easy-poweroff-nodewalk": (HPC2N, "nodes=240,cores=1", "easy+poweroff:900", True,
                                     {"scenario": NODE_WALK}),
    "kth-easy-poweroff60-capwalk": (KTH, "nodes=100,cores=1", "easy+poweroff:60", True,
                                    {"scenario": KTH_CAP_WALK, "on_infeasible": "reject"}),
    "kth-wfp3-easypower-poweroff60-nodewalk-capwalk": (
        KTH, "nodes=100,cores=1", "order=wfp3,select=easy-power+poweroff:60", True,
        {"scenario": [KTH_WALK, KTH_CAP_WALK], "on_infeasible": "reject"}),
    # dynamic orderings (compiled since 2026-11-27: rule_based/compiled/dynamic_order.py)
    "kth-wfp3-easy": (KTH, "nodes=100,cores=1", "order=wfp3,select=easy", False, {}),
    "kth-uni-easy": (KTH, "nodes=100,cores=1", "order=uni,select=easy", False, {}),
    "kth-slowdown-easy": (KTH, "nodes=100,cores=1", "order=slowdown,select=easy", False, {}),
    "hpc2n-wfp3-easy": (HPC2N, "nodes=240,cores=1", "order=wfp3,select=easy", False, {}),
    "hpc2n-uni-easy": (HPC2N, "nodes=240,cores=1", "order=uni,select=easy", False, {}),
    "hpc2n-wfp3-easy-nodewalk-capwalk": (HPC2N, "nodes=240,cores=1", "order=wfp3,select=easy",
                                         True, {"scenario": [NODE_WALK, CAP_WALK]}),
    # conservative with a dynamic ordering, a depth limit, informational rows (compiled
    # since 2026-11-27: rule_based/compiled/conservative_order.py)
    "kth-wfp3-conservative": (KTH, "nodes=100,cores=1", "order=wfp3,select=conservative",
                              False, {}),
    "kth-uni-conservative": (KTH, "nodes=100,cores=1", "order=uni,select=conservative",
                             False, {}),
    "kth-slowdown-conservative": (KTH, "nodes=100,cores=1",
                                  "order=slowdown,select=conservative", False, {}),
    "kth-conservative-depth8": (KTH, "nodes=100,cores=1",
                                "order=fifo,select=conservative,depth=8", False, {}),
    "kth-conservative-rows": (KTH, "nodes=100,cores=1", "conservative", False,
                              {"scenario": ["gen:temperature:season=summer,days=340",
                                            "gen:day-night:what=energy_price,day=0.24,"
                                            "night=0.09,days=340"]}),
}


def digest_recorder(rec: Any, canonical: bool = False) -> str:
    """The run's schedule digest (:func:`dispatchlab.metrics.schedule_digest.schedule_digest`),
    from this tree's file, whichever tree's ``dispatchlab`` ran the case (a baseline)."""
    path = HERE.parent / "src" / "dispatchlab" / "metrics" / "schedule_digest.py"
    spec = importlib.util.spec_from_file_location("_schedule_digest", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    digest: str = module.schedule_digest(rec, canonical)
    return digest


def run_case(name: str, engine: str, canonical: bool = False) -> dict[str, Any]:
    """Simulate one case; its digest, engine, engine time and jobs."""
    from dispatchlab.platform.power import GENERIC
    from dispatchlab.platform.resolve import resolve_platform
    from dispatchlab.simulation import simulate
    from dispatchlab.workload import load_swf

    trace, plat_spec, disp, generic, kw = CASES[name]
    wl = load_swf(trace)
    plat = resolve_platform(plat_spec)
    if generic:
        plat = plat.with_node_model(GENERIC)
    t0, c0 = time.perf_counter(), time.process_time()
    res = simulate(wl, plat, disp, check=False, tables=False, **{loop_keyword(simulate): engine},
                   **kw)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    rec = res.recorder
    assert rec is not None
    ran = res.summary.get("loop", res.summary.get("engine"))
    return {"digest": digest_recorder(rec, canonical), "engine": ran,
            "sim_seconds": round(float(res.summary["sim_seconds"]), 3),
            "call_seconds": round(wall, 3), "call_cpu_seconds": round(cpu, 3),
            "jobs": int(wl.n_jobs),
            "mean_wait": float(res.summary["mean_wait"])}


def main() -> None:
    """Digest the chosen cases; write or compare."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--compare", type=Path, default=None)
    ap.add_argument("--only", nargs="*", default=None, help="cases whose name holds one of these")
    ap.add_argument("--skip", nargs="*", default=(), help="cases whose name holds one of these")
    ap.add_argument("--loop", "--engine", dest="engine", default="general",
                    help="auto | compiled | general (--engine: its old name)")
    ap.add_argument("--canonical", action="store_true",
                    help="hash segments by job and start, not in logged order")
    args = ap.parse_args()
    names = [n for n in CASES if (args.only is None or any(s in n for s in args.only))
             and not any(s in n for s in args.skip)]
    ref = json.loads(args.compare.read_text()) if args.compare else {}
    out: dict[str, Any] = {}
    bad = 0
    for name in names:
        r = run_case(name, args.engine, args.canonical)
        out[name] = r
        verdict = ""
        if name in ref:  # (a stored digest may be a printed prefix)
            same = r["digest"].startswith(ref[name]["digest"])
            bad += not same
            verdict = "same" if same else "DIFFERENT"
        print(f"{name:28s} {r['engine']:9s} sim {r['sim_seconds']:8.2f} s  cpu "
              f"{r['call_cpu_seconds']:8.2f} s  "
              f"{r['digest'][:16]} {verdict}  load {os.getloadavg()[0]:.2f}", flush=True)
        if args.out:  # after every case: a long run interrupted keeps what it had
            args.out.write_text(json.dumps(out, indent=1) + "\n")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
