"""The family hot spots of issue 27, timed: ``conservative-power`` against ``conservative``
on KTH, one DARDIS setup on the 22-day Curie window, one hybrid-pipeline simulation of
the high ch. 7 Curie trace.

Cases (each run in a fresh interpreter; CPU seconds of the ``simulate()`` call, which a
shared machine inflates less than wall time):

- ``kth-conservative`` / ``kth-conservative-power``: the first ``--kth-jobs`` KTH jobs
  (default 5,000) on 100 one-core nodes with the generic node model, general loop, under
  a 17,000 W cap (idle power counted; jobs that cannot fit it even on the empty machine
  rejected); plain ``conservative`` under the same cap (``-cap``: its node-only
  reservations are re-placed whenever the cap refuses a start, a different schedule)
  and without a cap;
- ``dardis-throughput``: ``experiments/dardis`` (Curie ``large`` partition, days
  597–618, 20,158 jobs, 300 × 32 cores, day/night desired profile, slot 300 s, seed 1);
- ``hybrid-high``: ``experiments/hybrid`` (``gen:curie-thesis:level=ch7-high``,
  ``thesis300-power.toml``, ``dardis=hybrid-dardis70,last_resort=nodes``, seed 1).

Every run records a digest of its whole schedule (``schedule_digests.digest_recorder``):
a baseline written by the old tree must hold the same digests. Usage::

    PYTHONPATH=<old tree>/src python benchmarks/bench_hotspots.py --json base.json
    python benchmarks/bench_hotspots.py --baseline base.json \\
        --out benchmarks/results/hotspots

``--repeats`` (default 3) runs per case, medians reported; ``--only`` some cases.
Needs /work/shared/traces (KTH and Curie SWF logs).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from script_args import ready, runner_options

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CASES = ("kth-conservative", "kth-conservative-cap", "kth-conservative-power",
         "dardis-throughput", "hybrid-high")
KTH_CAP = 17_000.0
#: the Curie log the DARDIS and hybrid cases read (beside KTH in the shared traces)
CURIE = "CEA-Curie-2011-2.1-cln.swf.gz"


def run_case(name: str, kth_jobs: int) -> dict[str, Any]:
    """Simulate one case in this process; CPU and wall seconds, digest, a few figures."""
    sys.path.insert(0, str(HERE))
    from dispatchlab.simulation import simulate
    from schedule_digests import KTH, digest_recorder, loop_keyword

    kw: dict[str, Any]
    if name.startswith("kth-"):
        from dispatchlab.platform.power import GENERIC
        from dispatchlab.platform.resolve import resolve_platform
        from dispatchlab.workload import load_swf

        wl = load_swf(KTH)
        wl = wl.take(np.arange(min(kth_jobs, wl.n_jobs), dtype=np.int64))
        plat = resolve_platform("nodes=100,cores=1").with_node_model(GENERIC)
        disp = "conservative-power" if name.endswith("-power") else "conservative"
        kw = {"check": False, "tables": False, loop_keyword(simulate): "general"}
        if name.endswith(("-power", "-cap")):
            kw.update(power_cap=KTH_CAP, on_infeasible="reject")
        args: tuple[Any, ...] = (wl, plat, disp)
    elif name == "dardis-throughput":
        sys.path.insert(0, str(ROOT / "experiments" / "dardis"))
        from run import PROFILE

        from dispatchlab.dispatchers.dardis.presets import PRESETS
        from workload import CORES, NODES, curie_workload

        wl = curie_workload()[0]
        d = PRESETS["dardis-throughput"][0]()
        d.slot = 300  # type: ignore[attr-defined]
        args = (wl, f"nodes={NODES},cores={CORES}", d)
        kw = {"seed": 1, "scenario": PROFILE}
    elif name == "hybrid-high":
        from dispatchlab.dispatchers.registry import get_dispatcher
        from dispatchlab.platform.resolve import resolve_platform
        from dispatchlab.workload.load import load_workload

        wl = load_workload("gen:curie-thesis:level=ch7-high,seed=0")
        plat = resolve_platform(str(ROOT / "experiments" / "hybrid" / "thesis300-power.toml"))
        args = (wl, plat, get_dispatcher("dardis=hybrid-dardis70,last_resort=nodes"))
        kw = {"seed": 1}
    else:
        raise SystemExit(f"unknown case '{name}' (one of {', '.join(CASES)})")
    t0, c0 = time.perf_counter(), time.process_time()
    res = simulate(*args, **kw)
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    rec = res.recorder
    assert rec is not None
    return {"cpu_s": round(cpu, 3), "wall_s": round(wall, 3), "jobs": int(wl.n_jobs),
            "digest": digest_recorder(rec), "mean_wait": float(res.summary["mean_wait"]),
            "makespan": float(res.summary["makespan"])}


def measure(name: str, kth_jobs: int) -> dict[str, Any]:
    """One run of ``name`` in a fresh interpreter (same ``PYTHONPATH``)."""
    out = subprocess.run([sys.executable, __file__, "--child", name, "--kth-jobs",
                          str(kth_jobs)], check=True, capture_output=True, text=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def tree_info() -> dict[str, str]:
    """Versions and where dispatchlab was imported from."""
    import numpy

    import dispatchlab

    return {"dispatchlab": dispatchlab.__version__, "source": str(Path(
        dispatchlab.__file__).parent), "python": platform.python_version(),
        "numpy": numpy.__version__}


def same_digest(a: str, b: str) -> bool:
    """Equal digests (one may be a printed prefix of at least 12 characters)."""
    return min(len(a), len(b)) >= 12 and (a.startswith(b) or b.startswith(a))


def runs_per_case(results: dict[str, Any]) -> str:
    """How many runs each case's median is of."""
    counts = {len(r.get("cpu_runs", [0])) for r in results["cases"].values()}
    if len(counts) == 1:
        return f"{counts.pop()} run(s) per case"
    return ", ".join(f"{n}: {len(r.get('cpu_runs', [0]))}"
                     for n, r in results["cases"].items()) + " runs"


def report(results: dict[str, Any], base: dict[str, Any] | None) -> str:
    """A markdown table: medians, the ratio to the baseline, digests equal or not."""
    cases = results["cases"]
    lines = ["# Family hot spots (benchmarks/bench_hotspots.py)", "",
             f"{results['when']}, {runs_per_case(results)} in fresh processes, "
             f"medians of CPU s of the `simulate()` call; load average (1 min) "
             f"{results['load_before']:.1f} before, {results['load_after']:.1f} after; "
             f"dispatchlab {results['tree']['dispatchlab']}, Python "
             f"{results['tree']['python']}, numpy {results['tree']['numpy']}. KTH: the "
             f"first {results['kth_jobs']:,} jobs.", ""]
    if base is not None:
        lines += [f"Baseline: {base['tree']['source']} ({base['when']}, load "
                  f"{base['load_before']:.1f}–{base['load_after']:.1f}).", "",
                  "| case | jobs | CPU s (baseline) | CPU s (this tree) | speed-up | "
                  "wall s (this tree) | same schedule |", "|---|---|---|---|---|---|---|"]
    else:
        lines += ["| case | jobs | CPU s | wall s | digest |", "|---|---|---|---|---|"]
    for name, r in cases.items():
        if base is not None and name in base["cases"]:
            b = base["cases"][name]
            same = "yes" if same_digest(b["digest"], r["digest"]) else "**NO**"
            lines.append(f"| {name} | {r['jobs']:,} | {b['cpu_s']:.2f} | {r['cpu_s']:.2f} | "
                         f"{b['cpu_s'] / r['cpu_s']:.2f}× | {r['wall_s']:.1f} | {same} |")
        else:
            lines.append(f"| {name} | {r['jobs']:,} | {r['cpu_s']:.2f} | {r['wall_s']:.1f} | "
                         f"{r['digest'][:12]} |")
    for ref in ("kth-conservative-cap", "kth-conservative"):
        pair = (ref, "kth-conservative-power")
        if not set(pair) <= set(cases):
            continue
        line = (f"`conservative-power` / `{ref.removeprefix('kth-')}` (CPU, this tree): "
                f"{cases[pair[1]]['cpu_s'] / cases[ref]['cpu_s']:.2f}×")
        if base is not None and set(pair) <= set(base["cases"]):
            b = base["cases"]
            line += f"; baseline {b[pair[1]]['cpu_s'] / b[ref]['cpu_s']:.2f}×"
        lines += ["", line]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Run the cases; write the JSON (and the markdown report)."""
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=None, choices=CASES)
    ap.add_argument("--kth-jobs", type=int, default=5000)
    ap.add_argument("--baseline", type=Path, nargs="+", default=None,
                    help="JSON written by this script on the old tree (several: merged)")
    ap.add_argument("--combine", type=Path, nargs="+", default=None,
                    help="report JSONs written by this script on this tree (merged) "
                         "instead of running")
    ap.add_argument("--json", type=Path, default=None, help="write the results here")
    ap.add_argument("--out", type=Path, default=None,
                    help="write OUT.json and OUT.md")
    runner_options(ap, out=False)
    args = ap.parse_args()
    from schedule_digests import KTH

    chosen = args.only or CASES
    ready(args, *([KTH] if any(c.startswith("kth") for c in chosen) else []),
          *([KTH.parent / CURIE] if any(not c.startswith("kth") for c in chosen) else []))
    if args.child:
        print(json.dumps(run_case(args.child, args.kth_jobs)))
        return
    base = merge(args.baseline) if args.baseline else None
    if args.combine:
        finish(merge(args.combine), base, args.out)
        return
    load_before = os.getloadavg()[0]
    cases: dict[str, Any] = {}
    for name in args.only or CASES:
        runs = [measure(name, args.kth_jobs) for _ in range(args.repeats)]
        digests = {r["digest"] for r in runs}
        if len(digests) != 1:
            raise SystemExit(f"{name}: runs of one tree gave {len(digests)} schedules")
        cases[name] = {**runs[0], "cpu_s": statistics.median(r["cpu_s"] for r in runs),
                       "wall_s": statistics.median(r["wall_s"] for r in runs),
                       "cpu_runs": [r["cpu_s"] for r in runs]}
        print(name, cases[name]["cpu_s"], "s CPU", cases[name]["digest"][:12], flush=True)
    results = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "repeats": args.repeats, "kth_jobs": args.kth_jobs,
               "load_before": load_before, "load_after": os.getloadavg()[0],
               "tree": tree_info(), "cases": cases}
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    finish(results, base, args.out)


def merge(paths: list[Path]) -> dict[str, Any]:
    """Results of several runs of this script as one (cases merged; the loads span them;
    repeats: the fewest)."""
    runs = [json.loads(p.read_text()) for p in paths]
    out = dict(runs[0])
    out["cases"] = {k: v for r in runs for k, v in r["cases"].items()}
    out["load_before"] = min(r["load_before"] for r in runs)
    out["load_after"] = max(r["load_after"] for r in runs)
    out["repeats"] = min(r["repeats"] for r in runs)
    out["when"] = " / ".join(sorted({r["when"] for r in runs}))
    return out


def finish(results: dict[str, Any], base: dict[str, Any] | None, out: Path | None) -> None:
    """Write and print the report; fail when a schedule differs from the baseline's."""
    cases = results["cases"]
    if out:
        out.with_suffix(".json").write_text(json.dumps(
            {"results": results, "baseline": base}, indent=1))
        out.with_suffix(".md").write_text(report(results, base))
    print(report(results, base))
    if base is not None and any(not same_digest(base["cases"][n]["digest"], r["digest"])
                                for n, r in cases.items() if n in base["cases"]):
        raise SystemExit("a schedule differs from the baseline's")


if __name__ == "__main__":
    main()
