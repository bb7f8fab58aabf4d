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

``--baseline EXE`` measures another ``dispatchlab`` executable (e.g. the main branch's)
the same way, each repeat right after this one's, and prints the ratios: on a loaded
machine the ratios are the figures to trust.

Usage: ``python benchmarks/bench_startup.py [--repeats 5] [--quick] [--baseline EXE]
[--out FILE]`` (``--quick``: skip the Curie runs).
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

from dispatchlab.traces import resolve
from script_args import ready, runner_options

EXE = Path(sys.executable).parent / "dispatchlab"
TARGETS = {"help_s": 0.3, "startup_overhead_s": 0.7, "hpc2n_fifo_s": 1.2,
           "curie_easy_s": 3.0, "curie_easy_rss_mb": 600.0, "curie_easy_out_rss_mb": 1000.0}


def run_fresh(args: list[str], exe: Path = EXE) -> tuple[float, float, str]:
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
    proc = subprocess.run([sys.executable, "-c", code, str(exe), *args], capture_output=True,
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


def median_runs(args: list[str], repeats: int, exes: list[Path]) -> list[dict[str, float]]:
    """Per executable: median wall time, peak RSS and (``--json``) ``sim_seconds``; the
    executables take turns within each repeat."""
    walls: list[list[float]] = [[] for _ in exes]
    rsss: list[list[float]] = [[] for _ in exes]
    sims: list[list[float]] = [[] for _ in exes]
    for _ in range(repeats):
        for i, exe in enumerate(exes):
            wall, rss, out = run_fresh(args, exe)
            walls[i].append(wall)
            rsss[i].append(rss)
            if "--json" in args:
                sims[i].append(float(json.loads(out.strip().splitlines()[-1])["sim_seconds"]))
    docs = []
    for i in range(len(exes)):
        doc = {"wall_s": statistics.median(walls[i]), "rss_mb": statistics.median(rsss[i])}
        if sims[i]:
            doc["sim_s"] = statistics.median(sims[i])
        docs.append(doc)
    return docs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="skip the Curie runs")
    ap.add_argument("--baseline", type=Path, help="another dispatchlab executable")
    ap.add_argument("--out", type=Path)
    runner_options(ap, out=False)
    args = ap.parse_args()
    ready(args, "KTH-SP2", "HPC2N", *([] if args.quick else ["CEA-Curie"]))
    r = args.repeats
    exes = [EXE, *([args.baseline] if args.baseline else [])]
    load0 = os.getloadavg()
    res: dict[str, Any] = {"repeats": r, "load_before": load0, "exes": [str(e) for e in exes]}
    # local paths through the trace catalogue (resolved here, so the timed processes do not
    # hash the traces and a --baseline without trace:NAME support can read them)
    kth = resolve("KTH-SP2")
    parse = statistics.median(parse_seconds(kth, 1000) for _ in range(3))
    runs = {
        "help": (["--help"], r),
        "kth_1000_fifo": (["simulate", "-w", str(kth), "--limit", "1000", "--json"], r),
        "hpc2n_fifo": (["simulate", "-w", str(resolve("HPC2N")), "-d",
                        "fifo", "--json"], r),
    }
    tmp = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    if not args.quick:
        curie = str(resolve("CEA-Curie"))
        runs["curie_easy"] = (["simulate", "-w", curie, "-d", "easy", "--json"], max(1, r // 2))
        runs["curie_easy_out"] = (["simulate", "-w", curie, "-d", "easy", "--json", "--force",
                                   "--out", str(tmp / "run")], max(1, r // 2))
    try:
        for name, (cmd, n) in runs.items():
            if name == "curie_easy_out" and len(exes) > 1:  # the old command has no --force
                docs = [median_runs(cmd, n, exes[:1])[0],
                        median_runs([c for c in cmd if c != "--force"], n, exes[1:])[0]]
            else:
                docs = median_runs(cmd, n, exes)
            res[name] = docs
            shutil.rmtree(tmp / "run", ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    res["load_after"] = os.getloadavg()
    for docs in res["kth_1000_fifo"]:
        docs["parse_s"] = parse
        docs["overhead_s"] = docs["wall_s"] - docs["sim_s"] - parse
    rows = [("help_s", "help", "wall_s"), ("startup_overhead_s", "kth_1000_fifo", "overhead_s"),
            ("hpc2n_fifo_s", "hpc2n_fifo", "wall_s"), ("hpc2n_fifo_rss_mb", "hpc2n_fifo", "rss_mb")]
    if not args.quick:
        rows += [("curie_easy_s", "curie_easy", "wall_s"),
                 ("curie_easy_rss_mb", "curie_easy", "rss_mb"),
                 ("curie_easy_out_s", "curie_easy_out", "wall_s"),
                 ("curie_easy_out_rss_mb", "curie_easy_out", "rss_mb")]
    print(f"load average before {load0[0]:.2f}, after {res['load_after'][0]:.2f}; medians "
          f"of {r} fresh processes (Curie: {max(1, r // 2)})")
    head = f"{'figure':24s} {'this':>10s}" + (f" {'baseline':>10s} {'ratio':>7s}"
                                               if len(exes) > 1 else "") + "   target"
    print(head)
    figures = {}
    for key, run, field in rows:
        values = [d[field] for d in res[run]]
        figures[key] = values
        target = TARGETS.get(key)
        mark = "" if target is None else (f"≤ {target:g} " + ("ok" if values[0] <= target
                                                              else "OVER"))
        line = f"{key:24s} {values[0]:10.3f}"
        if len(values) > 1:
            line += f" {values[1]:10.3f} {values[0] / values[1]:7.2f}"
        print(f"{line}   {mark}")
    res["figures"] = figures
    print(f"(kth 1000: wall {res['kth_1000_fifo'][0]['wall_s']:.3f} s, sim "
          f"{res['kth_1000_fifo'][0]['sim_s']:.4f} s, parse {parse:.3f} s)")
    if args.out:
        args.out.write_text(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
