"""The twin check on OpenPBS: a KTH slice replayed onto a local OpenPBS driven by
``dispatchlab live pbs``'s adapter, against dispatchlab's simulation of the same slice.

Each run starts a fresh local OpenPBS (``LocalPbs``: one mom with 4 vnodes × 25 CPUs = the
KTH SP2's 100 processors, no ``pbs_sched``, ``scheduling = False``), installs the adapter's
server hook (queuejob, runjob, jobobit wake the cycle), runs the adapter with the
dispatcher in a thread (polling every ``--poll`` s besides the hook), and replays the
scaled slice with ``qsub`` (``live/replay.py`` + ``live/pbs_submit.py``: the same job
scripts and tick grid as the Slurm twin). Realized starts and ends are read back from the
server's accounting log (first ``S`` record, ``E`` record) and compared job by job with
dispatchlab's simulation of the same scaled slice on ``nodes=4,cores=25`` with the same
dispatcher. Writes ``results/twin_check_<dispatcher>_tick<T>.json`` (configuration,
versions, load before and after each run, per-run summaries; runs of earlier invocations
kept and numbered) and ``results/<dispatcher><k>_tick<T>_jobs.csv``.

  .venv/bin/python experiments/live_pbs/twin_check.py --dispatcher easy --repeat 2
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import pandas as pd

from dispatchlab.live.adapter import JsonLog, LiveAdapter
from dispatchlab.live.pbs_build import VERSION as PBS_VERSION
from dispatchlab.live.pbs_client import PbsClient
from dispatchlab.live.pbs_events import PbsEvents
from dispatchlab.live.pbs_local import LocalPbs
from dispatchlab.live.pbs_submit import PbsTarget
from dispatchlab.live.replay import (
    Realized,
    Submitted,
    difference_stats,
    scaled_workload,
    submit_replay,
)
from dispatchlab.provenance import versions
from dispatchlab.simulation import simulate
from dispatchlab.workload.load import load_workload
from dispatchlab.workload.workload import Workload

HERE = Path(__file__).resolve().parent
TRACE = HERE.parents[1] / "src/dispatchlab/data/traces/KTH-SP2-1996-2.1-cln.slice.swf.gz"
VNODES, CPUS = 4, 25
PLATFORM = f"nodes={VNODES},cores={CPUS}"


def _wait_done(target: PbsTarget, ids: set[int], timeout: float) -> dict[int, Realized]:
    deadline = time.monotonic() + timeout
    while True:
        done = target.realized()
        if ids <= set(done) or time.monotonic() > deadline:
            return done
        time.sleep(0.5)


def warm_up(target: PbsTarget) -> None:
    """A first job through the fresh server and the adapter, until its E record."""
    sub = submit_replay(scaled_workload(_one_job(), 1.0), None, "workq", hold=False,
                        aligned=False, target=target)
    sub.check_complete()
    if not set(sub.ids.values()) <= set(_wait_done(target, set(sub.ids.values()), 60)):
        raise RuntimeError("warm-up job never completed")


def _one_job() -> Workload:
    return Workload.from_columns(submit=[0], walltime=[60], runtime=[1], units=[1],
                                 req={"cores": [1]}, job_id=[0])


def _cycle_figures(adapter: LiveAdapter) -> dict[str, Any]:
    cyc = [c for c in adapter.cycles if c.waiting]
    out: dict[str, Any] = {"cycles": len(adapter.cycles), "cycles_deciding": len(cyc)}
    if not cyc:
        return out
    for key in ("read_s", "convert_s", "decide_s", "apply_s"):
        out[f"median_{key}"] = statistics.median(getattr(c, key) for c in cyc)
    starts = [c for c in cyc if c.started]
    out["median_apply_s_per_start"] = statistics.median(
        c.apply_s / len(c.started) for c in starts) if starts else None
    out["refused"] = sum(len(c.refused) for c in adapter.cycles)
    return out


def run_one(scaled: Workload, sim_jobs: pd.DataFrame, dispatcher: str, poll: float,
            hook: bool, together: bool = True) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Replay ``scaled`` on a fresh local PBS under the adapter; the per-job comparison."""
    cluster = LocalPbs(vnodes=VNODES, cpus=CPUS).start()
    extra: dict[str, Any] = {}
    events: PbsEvents | None = None
    try:
        target = PbsTarget(cluster.env(), "workq", cluster.as_user([]), cluster.accounting,
                           together=together)
        adapter = LiveAdapter(PbsClient(queue="workq", prefix=cluster.prefix()), "workq",
                              dispatcher, log=JsonLog(io.StringIO()))
        adapter.warm_up()
        if hook:
            events = PbsEvents(cluster.prefix())
            why = events.install()
            if why:
                raise RuntimeError(f"hook not installed: {why}")
        stop = threading.Event()
        thread = threading.Thread(target=adapter.run, kwargs={
            "poll": poll, "every": 5.0, "stop": stop.is_set,
            "wake": events.wait if events is not None else None}, daemon=True)
        thread.start()
        warm_up(target)
        adapter.cycles.clear()
        sub: Submitted = submit_replay(scaled, None, "workq", hold=target.adapter_holds,
                                       target=target)
        sub.check_complete()
        recs = _wait_done(target, set(sub.ids.values()), 600)
        stop.set()
        thread.join(timeout=30)
        extra.update(_cycle_figures(adapter))
        if events is not None:
            extra["hook_events"] = events.events
        extra["submission_lag_s"] = {"median": statistics.median(sub.lag_s.values()),
                                     "max": max(sub.lag_s.values())}
        extra["makespan_s"] = max(recs[i].end for i in sub.ids.values()) - sub.t0
        extra["runs_per_job"] = sorted({recs[i].runs for i in sub.ids.values()})
    finally:
        if events is not None:
            events.close()
        cluster.stop()
    return _compare(scaled, sim_jobs, sub, recs), extra


def _compare(scaled: Workload, sim_jobs: pd.DataFrame, sub: Submitted,
             recs: dict[int, Realized]) -> pd.DataFrame:
    tick = int(scaled.meta.get("tick", 1))
    sim: dict[Any, dict[Any, Any]] = sim_jobs.set_index("job_id")[
        ["units", "submit", "start", "end"]].astype("int64").to_dict("index")
    rows = []
    for trace_id, pid in sub.ids.items():
        r, s = recs[pid], sim[trace_id]
        rows.append({"trace_job": trace_id, "pbs_job": pid, "cores": int(s["units"]),
                     "submit": int(s["submit"]) * tick, "sim_start": int(s["start"]) * tick,
                     "sim_end": int(s["end"]) * tick, "real_submit": r.submit - sub.t0,
                     "real_start": r.start - sub.t0, "real_end": r.end - sub.t0,
                     "exec_vnode": r.nodes, "state": r.state, "run_count": r.runs})
    df = pd.DataFrame(rows).sort_values("submit", kind="stable")
    df["start_diff"] = df["real_start"] - df["sim_start"]
    df["start_diff_ticks"] = df["real_start"] // tick - df["sim_start"] // tick
    df["end_diff"] = df["real_end"] - df["sim_end"]
    return df


def summarize(df: pd.DataFrame) -> dict[str, Any]:
    return {"jobs": len(df),
            "start_diff": difference_stats(df["start_diff"].to_numpy(float)),
            "start_diff_ticks": difference_stats(df["start_diff_ticks"].to_numpy(float)),
            "end_diff": difference_stats(df["end_diff"].to_numpy(float)),
            "sim_waiting_jobs": int((df["sim_start"] > df["submit"]).sum())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--skip", type=int, default=3875)
    ap.add_argument("--limit", type=int, default=50)
    ap.add_argument("--compression", type=float, default=1800.0,
                    help="trace seconds per tick")
    ap.add_argument("--tick", type=int, default=2, help="wall seconds per twin time unit")
    ap.add_argument("--dispatcher", default="easy")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--poll", type=float, default=0.2,
                    help="seconds between the adapter's reads (the hook wakes it sooner)")
    ap.add_argument("--no-hook", action="store_true", help="poll only, no server hook")
    ap.add_argument("--serial", action="store_true",
                    help="one qsub after the other (not a tick's jobs held, then released "
                         "together); runs are stored as <dispatcher>_tick<T>-serial")
    ap.add_argument("--out", type=Path, default=HERE / "results")
    args = ap.parse_args()
    wl = load_workload(TRACE, skip=args.skip, limit=args.limit)
    scaled = scaled_workload(wl, args.compression, args.tick)
    sim_jobs = simulate(scaled, PLATFORM, args.dispatcher).jobs
    args.out.mkdir(parents=True, exist_ok=True)
    tag = (f"{args.dispatcher}_tick{args.tick}" + ("-nohook" if args.no_hook else "")
           + ("-serial" if args.serial else ""))
    out_json = args.out / f"twin_check_{tag}.json"
    report: dict[str, Any] = {
        "config": {"trace": TRACE.name, "skip": args.skip, "limit": args.limit,
                   "compression_per_tick": args.compression, "tick_s": args.tick,
                   "compression_wall": args.compression / args.tick, "platform": PLATFORM,
                   "pbs_cluster": f"1 mom, {VNODES} vnodes x {CPUS} CPUs, scheduling False",
                   "dispatcher": args.dispatcher, "poll_and_hook": "per run",
                   "walltime_rounding": "up to whole minutes after scaling",
                   "job_script": "aligned sleep (stime from qstat -f)",
                   "submission": "one qsub per job, in order" if args.serial else
                   "a tick's jobs: qsub -h each in one shell, then one qrls"},
        "versions": {**versions(), "openpbs": PBS_VERSION},
        "simulated_makespan_s": int(sim_jobs["end"].max()) * args.tick, "runs": {}}
    if out_json.exists():
        report["runs"] = json.loads(out_json.read_text()).get("runs", {})
    for _ in range(args.repeat):
        k = 1 + len(report["runs"])
        load_before = os.getloadavg()
        df, extra = run_one(scaled, sim_jobs, args.dispatcher, args.poll, not args.no_hook,
                            not args.serial)
        df.to_csv(args.out / f"{tag.replace('_', str(k) + '_', 1)}_jobs.csv", index=False)
        summary = {**summarize(df), **extra, "poll_s": args.poll,
                   "server_hook": not args.no_hook, "load_before": load_before,
                   "load_after": os.getloadavg()}
        report["runs"][f"{args.dispatcher}#{k}"] = summary
        print(f"{args.dispatcher}#{k}", json.dumps(summary["start_diff"]), flush=True)
        out_json.write_text(json.dumps(report, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
