"""Start-up, whole-process wall time and peak memory of the ``dispatchlab`` command.

Every measurement is a fresh process of the installed command (median of ``--repeats``):

- ``dispatchlab --help`` wall time (target ≤ 0.3 s);
- ``simulate … --json`` start-up overhead on a 1,000-job KTH slice: process wall time −
  ``sim_seconds`` − trace parse time (the parse timed in this process on the same slice,
  imports excluded; target ≤ 0.7 s);
- full HPC2N ``simulate -d fifo --json`` wall time (target ≤ 1.2 s);
- full Curie ``simulate -d easy --json`` wall time (≤ 3 s) and peak RSS (≤ 600 MB), and
  with ``--out`` (peak RSS ≤ 1 GB).

Peak RSS is the child's ``ru_maxrss``. The machine is shared: the load average is printed
before and after, and every figure is a median of fresh processes.

Usage: ``python benchmarks/bench_startup.py [--repeats 5] [--quick] [--out FILE]``
(``--quick``: skip the Curie runs).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TRACES = Path(os.environ.get("DISPATCHLAB_TRACES", "/work/shared/traces/swf"))
EXE = Path(sys.executable).parent / "dispatchlab"
TARGETS = {"help_s": 0.3, "startup_overhead_s": 0.7, "hpc2n_fifo_s": 1.2,
           "curie_easy_s": 3.0, "curie_easy_rss_mb": 600.0, "curie_easy_out_rss_mb": 1000.0}


def run_fresh(args: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB) and stdout of one fresh ``dispatchlab`` process (a
    small wrapper process runs it, so ``RUSAGE_CHILDREN`` is that one child's peak)."""
    code = ("import resource, subprocess, sys, time\n"
            "t0 = time.perf_counter()\n"
            "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
            "wall = time.perf_counter() - t0\n"
            "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
            "sys.stderr.write(p.stderr)\n"
            "print(f'{wall} {rss} {p.returncode}')\n"
            "print(p.stdout, end='')\n")
    proc = subprocess.run([sys.executable, "-c", code, str(EXE), *args], capture_output=True,
                          text=True)
    first, _, rest = proc.stdout.partition("\n")
    wall, rss, rc = first.split()
    if rc != "0":
        raise SystemExit(f"dispatchlab {' '.join(args)} failed: {proc.stderr.strip()[-500:]}")
    return float(wall), float(rss), rest


def parse_seconds(trace: Path, limit: int | None) -> float:
    """Time to load the trace in this process (the command's parse step)."""
    from dispatchlab.workload.load import load_workload

    load_workload(str(trace), limit=limit)  # warm the OS cache and the imports
    t0 = time.perf_counter()
    load_workload(str(trace), limit=limit)
    return time.perf_counter() - t0


def median_runs(args: list[str], repeats: int) -> dict[str, float]:
    walls, rsss, sims = [], [], []
    for _ in range(repeats):
        wall, rss, out = run_fresh(args)
        walls.append(wall)
        rsss.append(rss)
        if "--json" in args:
            sims.append(float(json.loads(out.strip().splitlines()[-1])["sim_seconds"]))
    doc = {"wall_s": statistics.median(walls), "rss_mb": statistics.median(rsss)}
    if sims:
        doc["sim_s"] = statistics.median(sims)
    return doc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="skip the Curie runs")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    r = args.repeats
    load0 = os.getloadavg()
    res: dict[str, Any] = {"repeats": r, "load_before": load0}
    res["help"] = median_runs(["--help"], r)
    kth = TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"
    small = median_runs(["simulate", "-w", str(kth), "--limit", "1000", "--json"], r)
    parse = statistics.median(parse_seconds(kth, 1000) for _ in range(3))
    small["parse_s"] = parse
    small["overhead_s"] = small["wall_s"] - small["sim_s"] - parse
    res["kth_1000_fifo"] = small
    res["hpc2n_fifo"] = median_runs(
        ["simulate", "-w", str(TRACES / "HPC2N-2002-2.2-cln.swf.gz"), "-d", "fifo", "--json"], r)
    if not args.quick:
        curie = str(TRACES / "CEA-Curie-2011-2.1-cln.swf.gz")
        res["curie_easy"] = median_runs(["simulate", "-w", curie, "-d", "easy", "--json"],
                                        max(1, r // 2))
        tmp = Path(tempfile.mkdtemp(prefix="bench-startup-"))
        try:
            walls, rsss = [], []
            for k in range(max(1, r // 2)):
                wall, rss, _ = run_fresh(["simulate", "-w", curie, "-d", "easy", "--json",
                                          "--out", str(tmp / f"run{k}")])
                walls.append(wall)
                rsss.append(rss)
            res["curie_easy_out"] = {"wall_s": statistics.median(walls),
                                     "rss_mb": statistics.median(rsss)}
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    res["load_after"] = os.getloadavg()
    figures = {
        "help_s": res["help"]["wall_s"],
        "startup_overhead_s": small["overhead_s"],
        "hpc2n_fifo_s": res["hpc2n_fifo"]["wall_s"],
    }
    if "curie_easy" in res:
        figures |= {"curie_easy_s": res["curie_easy"]["wall_s"],
                    "curie_easy_rss_mb": res["curie_easy"]["rss_mb"],
                    "curie_easy_out_rss_mb": res["curie_easy_out"]["rss_mb"]}
    res["figures"] = figures
    print(f"load average before {load0[0]:.2f}, after {res['load_after'][0]:.2f}")
    for key, value in figures.items():
        target = TARGETS[key]
        mark = "ok" if value <= target else "OVER"
        print(f"{key:24s} {value:10.3f}   target ≤ {target:g}   {mark}")
    print(f"(kth 1000: wall {small['wall_s']:.3f} s, sim {small['sim_s']:.4f} s, "
          f"parse {parse:.3f} s)")
    if args.out:
        args.out.write_text(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
