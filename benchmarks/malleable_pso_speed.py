"""Speed of one swarm's whole PSO training (Mejri et al.: 30 particles × 100 epochs × 50 sets
of 50 jobs on 10 servers = 150,000 simulations), on the local process pool and on a local
Dask cluster, which must give identical trainings; plus the per-run cost of the engine's
general loop (lean path, ``tables=False``, no audit) with the greedy dispatcher, and the
dispatcher's own time per call, against the dedicated kernel on the same runs.

Usage: ``python benchmarks/malleable_pso_speed.py [--condition 2] [--epochs 100]
[--workers 2] [--sample 300]``; writes ``benchmarks/results/malleable_pso_speed.{md,json}``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from dispatchlab import simulate
from dispatchlab.dispatchers.malleable.cost import malleable_platform, run_metrics
from dispatchlab.dispatchers.malleable.greedy import MalleableGreedy
from dispatchlab.dispatchers.malleable.job_set_sim import JobSetJobs, run_job_set
from dispatchlab.dispatchers.malleable.setups import setup_configs
from dispatchlab.experiments.backends import DaskBackend, LocalBackend
from dispatchlab.tuning.pso import Swarm, SwarmSpec
from dispatchlab.workload.generators.mejri import JobSetParams, job_set

OUT = Path(__file__).with_name("results")


def train(spec: SwarmSpec, engine: object) -> tuple[float, Swarm]:
    with tempfile.TemporaryDirectory() as d:
        swarm = Swarm(spec, Path(d) / "swarm.json")
        t0 = time.perf_counter()
        with engine:  # type: ignore[attr-defined]
            swarm.run(engine)
        return time.perf_counter() - t0, swarm


def per_run(sample: int) -> dict[str, float]:
    """Median per-run times: engine general loop (lean) vs kernel, Swarm2 configuration."""
    cfg = setup_configs()["Swarm2"]
    plat = malleable_platform(10)
    eng, ker, eng_cpu, ker_cpu, disp, calls = [], [], [], [], [], []
    for i in range(sample):
        wl = job_set(JobSetParams(), seed=99, index=i).to_workload()
        t0, c0 = time.perf_counter(), time.process_time()
        res = simulate(wl, plat, MalleableGreedy(cfg), seed=i, walltime_kill=False,
                       tables=False, check=False)
        cost = run_metrics(res.recorder, cfg.semantics.power)["cost"]  # type: ignore[arg-type]
        t1, c1 = time.perf_counter(), time.process_time()
        k = run_job_set(JobSetJobs.from_workload(wl, 10), cfg, seed=i)
        t2, c2 = time.perf_counter(), time.process_time()
        assert abs(k.cost / cost - 1) < 1e-12
        eng.append(t1 - t0)
        ker.append(t2 - t1)
        eng_cpu.append(c1 - c0)
        ker_cpu.append(c2 - c1)
        disp.append(res.summary["dispatch_time_mean_ms"])
        calls.append(res.summary["decision_points"])
    return {"engine_ms": statistics.median(eng) * 1e3,
            "kernel_ms": statistics.median(ker) * 1e3,
            "engine_cpu_ms": statistics.mean(eng_cpu) * 1e3,
            "kernel_cpu_ms": statistics.mean(ker_cpu) * 1e3,
            "dispatcher_ms_per_call": statistics.median(disp),
            "decision_points": statistics.median(calls)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--condition", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--sample", type=int, default=300)
    args = ap.parse_args()
    load = os.getloadavg()
    runs = per_run(args.sample)
    spec = SwarmSpec(condition=args.condition, epochs=args.epochs, seed=42)
    sims = spec.particles * spec.epochs * spec.sets
    t_local, local = train(spec, LocalBackend(args.workers))
    t_dask, dask = train(spec, DaskBackend(None, args.workers))
    cpu = local.cpu_seconds
    same = local.state.history == dask.state.history and \
        local.state.gbest.tolist() == dask.state.gbest.tolist()
    engine_projection = sims * runs["engine_cpu_ms"] / 1e3 / args.workers
    doc = {"simulations": sims, "workers": args.workers, "load_before": load,
           "load_after": os.getloadavg(), "local_s": t_local, "dask_local_s": t_dask,
           "identical": same, "evaluation_cpu_s": cpu, **runs,
           "engine_projection_s": engine_projection,
           "best_cost": local.state.gbest_cost, "best": local.best()}
    lines = [
        "# PSO training speed (one swarm: 30 particles × 100 epochs × 50 sets of 50 jobs)", "",
        f"Machine load (1/5/15 min) before: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}, "
        f"after: {doc['load_after'][0]:.1f} / {doc['load_after'][1]:.1f} / "  # type: ignore[index]
        f"{doc['load_after'][2]:.1f}; {args.workers} workers; condition {args.condition}.", "",
        "| what | value |", "|---|---|",
        f"| simulations | {sims:,} |",
        f"| whole training, local process pool (kernel) | {t_local:.0f} s |",
        f"| whole training, local Dask cluster (kernel) | {t_dask:.0f} s |",
        f"| CPU time of all evaluations (load-independent; ÷ {args.workers} cores = "
        f"{cpu / args.workers:.0f} s on an idle machine) | {cpu:.0f} s |",
        f"| identical trainings (every particle's cost at every epoch, best position) | "
        f"{same} |",
        f"| one run, engine general loop, lean path, no audit (median wall / mean CPU of "
        f"{args.sample}) | {runs['engine_ms']:.2f} ms / {runs['engine_cpu_ms']:.2f} ms |",
        f"| one run, dedicated kernel (same runs, same costs; median wall / mean CPU) | "
        f"{runs['kernel_ms']:.2f} ms / {runs['kernel_cpu_ms']:.2f} ms |",
        f"| dispatcher time per call in the general loop (median) | "
        f"{runs['dispatcher_ms_per_call'] * 1e3:.1f} µs over "
        f"{runs['decision_points']:.0f} calls |",
        f"| projected training on the general loop (CPU per run × runs ÷ {args.workers} "
        "cores) | "
        f"{engine_projection:.0f} s |",
    ]
    OUT.mkdir(exist_ok=True)
    (OUT / "malleable_pso_speed.md").write_text("\n".join(lines) + "\n")
    (OUT / "malleable_pso_speed.json").write_text(json.dumps(doc, indent=2))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
