"""The twin check: a KTH slice replayed onto a local 4-node Slurm, against its simulation.

Two runs on a fresh local cluster each (4 nodes × 25 CPUs = the KTH SP2's 100 processors):

- ``adapter``: Slurm's ``sched/builtin``, every job submitted held, dispatchlab's EASY
  (``dispatchlab live slurm``'s adapter, polling every 0.1 s) releasing them;
- ``backfill``: Slurm's own ``sched/backfill`` (bf_interval=1 s), jobs submitted free.

Both are compared, job by job, with dispatchlab's EASY simulation of the same scaled slice
on the same platform: start differences in scaled seconds (realized − simulated; realized
starts and ends read back from Slurm's job completion log). Writes
``results/twin_check_tick<T>.json`` (summary, configuration, versions, load; runs of
earlier invocations kept, numbered ``adapter#1``, ``adapter#2``, …) and
``results/<run><k>_tick<T>_jobs.csv``; differences are in wall ("scaled") seconds.

  .venv/bin/python experiments/live_slurm/twin_check.py [--runs adapter backfill]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pandas as pd

from dispatchlab.live.adapter import JsonLog, SlurmAdapter
from dispatchlab.live.local_cluster import LocalCluster
from dispatchlab.live.replay import difference_stats, scaled_workload, submit_replay
from dispatchlab.live.slurm_client import SlurmClient
from dispatchlab.provenance import versions
from dispatchlab.simulation import simulate
from dispatchlab.workload.load import load_workload
from dispatchlab.workload.slurm_jobcomp import read_jobcomp

HERE = Path(__file__).resolve().parent
TRACE = HERE.parents[1] / "src/dispatchlab/data/traces/KTH-SP2-1996-2.1-cln.slice.swf.gz"
PLATFORM = "nodes=4,cores=25"
POLL_S = 0.1


def warm_up(env: dict[str, str], cluster: LocalCluster) -> None:
    """A first job through a fresh controller (its first start takes ~2 s), until it is in
    the completion log."""
    out = subprocess.run(["sbatch", "--parsable", "-p", "main", "-n", "1", "-t", "1", "-o",
                          "/dev/null", "--wrap", "true"], env=env, capture_output=True,
                         text=True, check=True)
    jid = int(out.stdout.strip().split(";")[0])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if cluster.jobcomp.exists() and any(r.job_id == jid
                                            for r in read_jobcomp(cluster.jobcomp)):
            return
        time.sleep(0.2)
    raise RuntimeError("warm-up job never completed")


def run_one(mode: str, scaled: Any, sim_jobs: pd.DataFrame, dispatcher: str,
            aligned: bool = True, cluster_kw: dict[str, Any] | None = None,
            sim_unit_s: int | None = None, together: bool = False
            ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Replay ``scaled`` on a fresh cluster under ``mode``; the per-job comparison.

    ``cluster_kw``: :class:`LocalCluster` options over the default 4 × 25 CPUs (nodes,
    cpus, sched_params, extra_conf, root, keep); ``sim_unit_s``: wall seconds per time
    unit of ``sim_jobs`` (default: the tick); ``together``: each tick's jobs are released
    at once (``submit_replay``)."""
    opts: dict[str, Any] = {"nodes": 4, "cpus": 25, "partition": "main",
                            "scheduler": "builtin" if mode == "adapter" else "backfill",
                            **(cluster_kw or {})}
    cluster = LocalCluster(**opts)
    cluster.start()
    extra: dict[str, Any] = {}
    try:
        env = cluster.env()
        warm_up(env, cluster)
        stop = threading.Event()
        adapter = None
        thread = None
        if mode == "adapter":
            adapter = SlurmAdapter(SlurmClient(env), "main", dispatcher,
                                   log=JsonLog(io.StringIO()))
            adapter.warm_up()  # before the replay's clock starts (~2 s the first time)
            thread = threading.Thread(target=adapter.run, kwargs={
                "poll": POLL_S, "every": 5.0, "stop": stop.is_set}, daemon=True)
            thread.start()
        sub = submit_replay(scaled, env, "main", hold=mode == "adapter", aligned=aligned,
                            together=together)
        sub.check_complete()  # a job that could not be submitted spoils the comparison
        ids = set(sub.slurm_id.values())
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            done = {r.job_id for r in read_jobcomp(cluster.jobcomp)} \
                if cluster.jobcomp.exists() else set()
            if ids <= done:
                break
            time.sleep(0.5)
        stop.set()
        if thread is not None:
            thread.join(timeout=10)
        recs = {r.job_id: r for r in read_jobcomp(cluster.jobcomp)}
        if adapter is not None:
            cyc = [c for c in adapter.cycles if c.waiting]
            extra["cycles"] = len(adapter.cycles)
            extra["cycles_deciding"] = len(cyc)
            for key in ("read_s", "convert_s", "decide_s", "apply_s"):
                extra[f"median_{key}"] = statistics.median(getattr(c, key) for c in cyc)
            starts = [c for c in cyc if c.started]
            extra["median_apply_s_per_start"] = statistics.median(
                c.apply_s / len(c.started) for c in starts) if starts else None
            extra["adapter_overhead_median_s"] = statistics.median(
                c.read_s + c.convert_s + c.decide_s + c.apply_s for c in cyc)
        extra["submission_lag_s"] = {"median": statistics.median(sub.lag_s.values()),
                                     "max": max(sub.lag_s.values())}
        extra["makespan_s"] = max(r.end for r in recs.values() if r.end) - sub.t0  # type: ignore[operator]
    finally:
        cluster.stop()
    rows = []
    tick = int(scaled.meta.get("tick", 1))
    unit = tick if sim_unit_s is None else sim_unit_s
    sim = sim_jobs.set_index("job_id")
    for trace_id, sid in sub.slurm_id.items():
        r = recs[sid]
        s = sim.loc[trace_id]
        rows.append({"trace_job": trace_id, "slurm_job": sid, "cores": int(s["units"]),
                     "submit": int(s["submit"]) * unit, "sim_start": int(s["start"]) * unit,
                     "sim_end": int(s["end"]) * unit, "real_submit": r.submit - sub.t0,
                     "real_start": r.start - sub.t0,  # type: ignore[operator]
                     "real_end": r.end - sub.t0,  # type: ignore[operator]
                     "nodes": r.node_list, "state": r.state})
    df = pd.DataFrame(rows).sort_values("submit", kind="stable")
    df["start_diff"] = df["real_start"] - df["sim_start"]
    df["start_diff_ticks"] = df["real_start"] // tick - df["sim_start"] // tick
    df["end_diff"] = df["real_end"] - df["sim_end"]
    df["run_diff"] = (df["real_end"] - df["real_start"]) - (df["sim_end"] - df["sim_start"])
    summary = {"start_diff": difference_stats(df["start_diff"].to_numpy(float)),
               "start_diff_ticks": difference_stats(df["start_diff_ticks"].to_numpy(float)),
               "end_diff": difference_stats(df["end_diff"].to_numpy(float)),
               "run_diff": difference_stats(df["run_diff"].to_numpy(float)),
               "sim_waiting_jobs": int((df["sim_start"] > df["submit"]).sum()), **extra}
    return df, summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--skip", type=int, default=3875)
    ap.add_argument("--limit", type=int, default=50)
    ap.add_argument("--compression", type=float, default=1800.0,
                    help="trace seconds per tick")
    ap.add_argument("--tick", type=int, default=2, help="wall seconds per twin time unit")
    ap.add_argument("--dispatcher", default="easy")
    ap.add_argument("--runs", nargs="+", default=["adapter", "backfill"])
    ap.add_argument("--out", type=Path, default=HERE / "results")
    ap.add_argument("--plain-sleep", action="store_true",
                    help="jobs are plain `sleep R` (not ended on the whole-second grid of "
                         "their recorded start); runs are stored as <run>-plain")
    args = ap.parse_args()
    wl = load_workload(TRACE, skip=args.skip, limit=args.limit)
    scaled = scaled_workload(wl, args.compression, args.tick)
    res = simulate(scaled, PLATFORM, args.dispatcher)
    sim_jobs = res.jobs
    args.out.mkdir(parents=True, exist_ok=True)
    tag = f"tick{args.tick}" + ("-plain" if args.plain_sleep else "")
    out_json = args.out / f"twin_check_{tag}.json"
    report: dict[str, Any] = {
        "config": {"trace": TRACE.name, "skip": args.skip, "limit": args.limit,
                   "compression_per_tick": args.compression, "tick_s": args.tick,
                   "compression_wall": args.compression / args.tick, "platform": PLATFORM,
                   "dispatcher": args.dispatcher, "poll_s": POLL_S,
                   "walltime_rounding": "up to whole minutes after scaling",
                   "job_script": "sleep" if args.plain_sleep else "aligned sleep"},
        "versions": versions(),
        "simulated_makespan_s": int(sim_jobs["end"].max()) * args.tick, "runs": {}}
    if out_json.exists():  # runs of an earlier invocation with this tick are kept
        report["runs"] = json.loads(out_json.read_text()).get("runs", {})
    for mode in args.runs:
        k = 1 + sum(1 for key in report["runs"] if key.split("#")[0] == mode)
        load_before = os.getloadavg()
        df, summary = run_one(mode, scaled, sim_jobs, args.dispatcher, not args.plain_sleep)
        df.to_csv(args.out / f"{mode}{k}_{tag}_jobs.csv", index=False)
        summary["load_before"], summary["load_after"] = load_before, os.getloadavg()
        report["runs"][f"{mode}#{k}"] = summary
        print(f"{mode}#{k}", json.dumps(summary["start_diff"]), flush=True)
        out_json.write_text(json.dumps(report, indent=2, default=str) + "\n")
    out_json.write_text(json.dumps(report, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
