"""DEC and DEC-feedback against PRB on Eurora historical batches under power caps.

Each run: one Eurora historical batch (100 or 200 jobs, their real arrivals; by default
those of :data:`BINDING`, where the cap binds), platform
``eurora-8`` (8 Eurora nodes, the paper's machine A) or ``eurora`` (64 nodes), job power
from the Eurora predictions (``eurora_power_predictions``; jobs without one fall back on the
node model), idle power counted as the paper does (``--no-idle`` for PA-HPC-SIM's
accounting), caps ``none``, fixed W, or ``profile`` (the Eurora varying-cap file of the
batch size, ``power_caps_100`` / ``power_caps_200``). Every run is audited (``simulate``).

Per run: mean weighted queue time in EWT units (mean over jobs of wait / ewt of its queue,
the paper's metric), mean wait, time over the cap, and the dispatcher's cost: mean decision
time, mean and max solver time of the decisions that called CP-SAT, solves, feedback
iterations, conflict sets, jobs postponed by the mapper. Results are appended to a JSON-lines
file as they come (``--out``), so an interrupted campaign keeps what ran; ``--table`` turns
the file into the markdown table of ``benchmarks/results/dec.md``.

Usage::

    python benchmarks/bench_dec.py --sizes 100 200 --batches 3 --caps none 3000 2000 profile \
        --dispatchers prb-power dec --out benchmarks/results/dec.jsonl
    python benchmarks/bench_dec.py --batches 2 --caps 3000 2000 profile \
        --dispatchers dec-feedback --out benchmarks/results/dec.jsonl
    python benchmarks/bench_dec.py --table benchmarks/results/dec.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import platform as pyplatform
import statistics
import time
from pathlib import Path
from typing import Any

from dispatchlab.traces import resolve
from script_args import ready, runner_options

#: the traces it reads, through the catalogue (absent: the script is skipped)
BATCHES, PRED, CAPS = "eurora-historical", "eurora-power-predictions", "eurora-power-caps"

#: Batches where the cap binds on eurora-8 with predicted power and idle counted (prb-power's
#: mean wait grows from no cap to 3000 W to 2000 W); the others fit eurora-8 without waiting
#: for power, or ask more GPU nodes than it has.
BINDING = ["hist_100_20140331_110904", "hist_100_20140331_200736",
           "hist_100_20140331_213039", "hist_100_20140401_000242",
           "hist_200_20140331_205519", "hist_200_20140331_213036",
           "hist_200_20140331_220039", "hist_200_20140331_230146"]


def run_one(size: int, batch: Path, plat_name: str, cap: str, disp: str,
            count_idle: bool) -> dict[str, Any]:
    """Simulate one setting and return its row."""
    from dispatchlab import simulate
    from dispatchlab.energy.job_power import from_predictions
    from dispatchlab.platform.resolve import resolve_platform
    from dispatchlab.workload.load import load_workload

    wl = load_workload(batch)
    plat = resolve_platform(plat_name)
    src = from_predictions(resolve(PRED), wl, plat)
    kw: dict[str, Any] = {}
    if cap == "profile":
        kw["scenario"] = resolve(CAPS) / f"power_caps_{size}"
    elif cap != "none":
        kw["power_cap"] = float(cap)
    t0 = time.perf_counter()
    res = simulate(wl, plat, disp, power_model=src, count_idle=count_idle, **kw)
    wall = time.perf_counter() - t0
    s = res.summary
    n = wl.n_jobs
    row: dict[str, Any] = {
        "size": size, "batch": batch.name, "platform": plat_name, "cap": cap,
        "idle": count_idle, "dispatcher": disp, "jobs": n,
        "wqt_ewt": s["weighted_queue_time"] / n, "mean_wait": s["mean_wait"],
        "over_cap_s": (s.get("power") or {}).get("over_cap_seconds", 0.0),
        "decisions": s["decision_points"], "decide_ms_mean": s["dispatch_time_mean_ms"],
        "wall_s": wall,
    }
    ds = s.get("dispatcher_stats") or {}
    if "solves" in ds:
        log = ds["decision_log"]
        solve = [v for v in log["solve_ms"] if v]
        row.update(solves=ds["solves"], feedback_iterations=ds["feedback_iterations"],
                   conflict_sets=ds["conflict_sets"], postponed=ds["postponed_by_mapper"],
                   solver_decisions=len(solve),
                   solve_ms_mean=statistics.fmean(solve) if solve else 0.0,
                   solve_ms_max=max(solve) if solve else 0.0,
                   reproducible=ds.get("reproducible"))
    return row


def campaign(args: argparse.Namespace) -> None:
    out = Path(args.out)
    done = set()
    if out.exists():
        for line in out.read_text().splitlines():
            r = json.loads(line)
            done.add((r["batch"], r["platform"], r["cap"], r["idle"], r["dispatcher"]))
    load = os.getloadavg()[0]
    print(f"load {load:.2f} on {os.cpu_count()} cores")
    for disp in args.dispatchers:
        for size in args.sizes:
            chosen = [b for b in sorted((resolve(BATCHES) / str(size)).iterdir())
                      if not args.pick or b.name.split(".")[0] in args.pick]
            for batch in chosen[: args.batches]:
                for cap in args.caps:
                    key = (batch.name, args.platform, cap, not args.no_idle, disp)
                    if key in done:
                        continue
                    row = run_one(size, batch, args.platform, cap, disp, not args.no_idle)
                    row["load"] = os.getloadavg()[0]
                    with out.open("a") as f:
                        f.write(json.dumps(row) + "\n")
                    print(f"{disp:14s} {size} {batch.name} cap={cap:7s} "
                          f"wqt={row['wqt_ewt']:.3f} wait={row['mean_wait']:.0f} "
                          f"wall={row['wall_s']:.1f}s", flush=True)


def table(path: Path) -> str:
    """Markdown: one line per (size, batch, cap) with each dispatcher's figures, then the
    pooled means per (size, cap)."""
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    disps = list(dict.fromkeys(r["dispatcher"] for r in rows))
    key = lambda r: (r["size"], r["batch"], r["cap"])  # noqa: E731
    groups: dict[tuple[int, str, str], dict[str, dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(key(r), {})[r["dispatcher"]] = r
    head = "| jobs | batch | cap | " + " | ".join(
        f"{d} WQT (EWT) | {d} mean wait (s) | {d} over cap (s)" for d in disps) + " |"
    lines = [head, "|" + "---|" * (3 + 3 * len(disps))]
    for (size, batch, cap), g in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1],
                                                                         _cap_order(kv[0][2]))):
        cells = []
        for d in disps:
            r = g.get(d)
            cells += ([f"{r['wqt_ewt']:.3f}", f"{r['mean_wait']:.0f}", f"{r['over_cap_s']:.0f}"]
                      if r else ["–", "–", "–"])
        lines.append(f"| {size} | {batch.split('.')[0]} | {cap} | " + " | ".join(cells) + " |")
    base = disps[0]
    others = [d for d in disps[1:]]
    if others:
        lines += ["", f"Paper-style ratio {base} WQT / dispatcher WQT (> 1: the dispatcher "
                  f"waits less; per batch, then the geometric mean):", "",
                  "| jobs | cap | " + " | ".join(others) + " |",
                  "|" + "---|" * (2 + len(others))]
        cells_by: dict[tuple[int, str], dict[str, list[float]]] = {}
        for (size, _, cap), g in groups.items():
            for d in others:
                if base in g and d in g and g[d]["wqt_ewt"] > 0:
                    cells_by.setdefault((size, cap), {}).setdefault(d, []).append(
                        g[base]["wqt_ewt"] / g[d]["wqt_ewt"])
        for (size, cap) in sorted(cells_by, key=lambda k: (k[0], _cap_order(k[1]))):
            row = []
            for d in others:
                v = cells_by[(size, cap)].get(d, [])
                gm = statistics.geometric_mean(v) if v else float("nan")
                row.append(f"{gm:.2f} ({', '.join(f'{x:.2f}' for x in v)})" if v else "–")
            lines.append(f"| {size} | {cap} | " + " | ".join(row) + " |")
    lines += ["", "Dispatcher cost (means over the runs above):", "",
              "| dispatcher | runs | decision (ms) | solver time per solver decision (ms) | "
              "max solver decision (ms) | solves | feedback iterations | conflict sets | "
              "postponed by the mapper | over-cap s | wall per run (s) | load |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for d in disps:
        rs = [r for r in rows if r["dispatcher"] == d]

        def m(name: str, rs: list[dict[str, Any]] = rs) -> str:
            vals = [r[name] for r in rs if name in r]
            return f"{statistics.fmean(vals):.1f}" if vals else "–"

        mx = max((r.get("solve_ms_max", 0.0) for r in rs), default=0.0)
        lines.append(f"| {d} | {len(rs)} | {m('decide_ms_mean')} | {m('solve_ms_mean')} | "
                     f"{mx:.0f} | {m('solves')} | {m('feedback_iterations')} | "
                     f"{m('conflict_sets')} | {m('postponed')} | {m('over_cap_s')} | "
                     f"{m('wall_s')} | {m('load')} |")
    lines += ["", f"Python {pyplatform.python_version()}, {pyplatform.machine()}."]
    return "\n".join(lines)


def _cap_order(cap: str) -> tuple[int, float]:
    if cap == "none":
        return (0, 0.0)
    if cap == "profile":
        return (2, 0.0)
    return (1, -float(cap))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 200])
    ap.add_argument("--batches", type=int, default=2, help="first N batches of each size")
    ap.add_argument("--pick", nargs="+", default=BINDING,
                    help="batch names (stems) to run, before --batches applies")
    ap.add_argument("--caps", nargs="+", default=["none", "3000", "2000", "profile"])
    ap.add_argument("--dispatchers", nargs="+", default=["prb-power", "dec", "dec-feedback"])
    ap.add_argument("--platform", default="eurora-8")
    ap.add_argument("--no-idle", action="store_true", help="do not count idle power")
    ap.add_argument("--out", default="benchmarks/results/dec.jsonl")
    ap.add_argument("--table", metavar="JSONL", help="print the markdown table of a file")
    runner_options(ap, out=False)
    args = ap.parse_args()
    if not args.table:
        ready(args, BATCHES, PRED, CAPS)
    if args.table:
        print(table(Path(args.table)))
        return
    campaign(args)


if __name__ == "__main__":
    main()
