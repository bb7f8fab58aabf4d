"""Predicted starts against the real Slurm: the twin, EASY and ``squeue --start``.

A KTH slice is replayed (``live/replay.py``, as ``twin_check.py`` does) onto a fresh local
Slurm (4 nodes × 25 CPUs) running its own ``sched/backfill`` with ``priority/multifactor``
(age and job size). Beside the replay a predictor process reads Slurm's state at every
change (and at least every 5 s) and, from that one snapshot, predicts every pending job's
start four ways:

- ``twin``: ``-d slurm:conf=<the cluster's own slurm.conf>``, run times from the history
  (``--estimate user-ratio``: the limit × the run-time/limit ratio of the user's last two
  finished jobs), with its 80 % band;
- ``easy``: ``-d easy``, the same run times and band;
- ``twin-walltime``: the twin with the limits as run times (what Slurm itself assumes);
- ``squeue``: the start Slurm itself plans for the job (the ``start_time`` of a pending
  job, what ``squeue --start`` prints);
- ``twin-exact`` and ``easy-exact``: the twin and EASY given every job's true run time
  (the replay's own): what is left is the scheduler model and the jobs not submitted yet
  (a diagnosis only: a live predictor cannot know run times).

The history is the cluster's own job completion log as it grows. For each job that waited
(pending at some cycle before it started), its **first** prediction of each kind is
compared with the realized start (completion log): median and p90 absolute error, mean
signed error (predicted − realized, s), and the share of realized starts inside the first
prediction's 80 % band. Writes ``results/predictions.json`` (configuration, versions,
load before and after each run, the summaries; runs of earlier invocations kept) and
``results/predictions_<run>_jobs.csv`` (per job and predictor: the first prediction and
the realized start) and ``results/predictions_<run>_cycles.csv.gz`` (every prediction of
every cycle).

  .venv/bin/python experiments/live_slurm/predictions.py [--skip 3850] [--limit 150]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import multiprocessing as mp
import os
import signal
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dispatchlab.errors import DispatchlabError
from dispatchlab.live.local_cluster import LocalCluster
from dispatchlab.live.predict import predict
from dispatchlab.live.replay import scaled_workload, submit_replay
from dispatchlab.live.slurm_client import SlurmClient
from dispatchlab.platform.slurm_conf import SlurmConfWarning
from dispatchlab.provenance import versions
from dispatchlab.workload.load import load_workload
from dispatchlab.workload.slurm_jobcomp import read_jobcomp

HERE = Path(__file__).resolve().parent
TRACE = HERE.parents[1] / "src/dispatchlab/data/traces/KTH-SP2-1996-2.1-cln.slice.swf.gz"
PARTITION = "main"
#: multifactor priority of the runs: examples/platforms/kth-slurm.conf's age and job-size
#: weights, its PriorityMaxAge of 7 days scaled like the replay (900× → 11 min), one minute
#: between recalculations (the replay's minutes hold several); fair share is left out (every
#: replayed job is root's)
PRIORITY = ("PriorityType=priority/multifactor", "PriorityWeightAge=1000",
            "PriorityWeightJobSize=100", "PriorityMaxAge=11", "PriorityCalcPeriod=1")
ESTIMATE = "user-ratio"
EVERY_S = 5.0
#: added to each true run time of the exact predictors (runs before it was added had 0)
EXACT_SLACK_S = 1


class MultifactorCluster(LocalCluster):
    """The local cluster with ``priority`` lines added to its slurm.conf."""

    priority: tuple[str, ...] = PRIORITY

    def _write_conf(self) -> None:
        super()._write_conf()
        text = self.conf.read_text()
        lines = "".join(f"{line}\n" for line in self.priority)
        self.conf.write_text(text.replace("NodeName=", lines + "NodeName=", 1))


def predictors(conf: Path) -> dict[str, tuple[str, str, bool]]:
    """Name → (dispatcher, estimate, with the history)."""
    twin = f"slurm:conf={conf}"
    return {"twin": (twin, ESTIMATE, True), "easy": ("easy", ESTIMATE, True),
            "twin-walltime": (twin, "walltime", False)}


def predict_loop(env: dict[str, str], conf: str, jobcomp: str, out: str,
                 stop: Any, exact: dict[int, int]) -> None:
    """Poll Slurm; at every change (at least every :data:`EVERY_S`) one snapshot → one row
    per pending job and predictor (``cycle_time, predictor, job_id, predicted_start, low,
    high``)."""
    from dispatchlab.live.predict import forward_starts, load_history
    from dispatchlab.live.twin import build_twin

    warnings.simplefilter("ignore", SlurmConfWarning)
    client = SlurmClient(env)
    kinds = predictors(Path(conf))
    last, last_t = None, 0.0
    with gzip.open(out, "wt", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["cycle_time", "predictor", "job_id", "predicted_start", "low", "high",
                    "cycle_s"])
        while not stop.is_set():
            snap = client.read()
            mark = snap.fingerprint(PARTITION)
            if mark == last and time.monotonic() - last_t < EVERY_S:
                time.sleep(0.2)
                continue
            last, last_t = mark, time.monotonic()
            t0 = time.perf_counter()
            try:
                history = load_history(Path(jobcomp), PARTITION)
            except DispatchlabError:  # no finished job yet
                history = None
            rows = []
            jobs = snap.jobs
            pend = np.flatnonzero(jobs.pending & jobs.in_partition(PARTITION))
            for r in pend.tolist():
                start = int(jobs.start[r])
                if start > 0:
                    rows.append([snap.now, "squeue", int(jobs.job_id[r]), start, start, start])
            for name, (spec, est, with_history) in kinds.items():
                for p in predict(snap, PARTITION, spec, est,
                                 history if with_history else None):
                    rows.append([snap.now, name, p.job_id, p.predicted_start, p.low, p.high])
            twin = build_twin(snap, PARTITION, every_pending=True)
            if twin.waiting:
                for name, spec in (("twin-exact", kinds["twin"][0]), ("easy-exact", "easy")):
                    for jid, t in forward_starts(twin, spec, exact).items():
                        rows.append([snap.now, name, jid, t, t, t])
            took = round(time.perf_counter() - t0, 3)
            w.writerows([*row, took] for row in rows)
            fh.flush()


def run_one(scaled: Any, folder: Path, tag: str, priority: tuple[str, ...]
            ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One replay with the predictor beside it; the per-job table and the summaries."""
    from twin_check import warm_up

    cluster = MultifactorCluster(nodes=4, cpus=25, partition=PARTITION, scheduler="backfill")
    cluster.priority = priority
    signal.signal(signal.SIGTERM, _stop)  # a kill stops the cluster's daemons too
    cluster.start()
    pred_csv = folder / f"predictions_{tag}_cycles.csv.gz"
    try:
        env = cluster.env()
        warm_up(env, cluster)
        stop = mp.Event()
        # Slurm numbers jobs in order: the warm-up job is 1, the replay's follow (checked
        # after the replay; the exact predictions are dropped if not)
        tick = int(scaled.meta.get("tick", 1))
        # (+1 s: a job ends up to a second after its tick, and a run seen outliving its
        # duration would be given as long again)
        exact = {2 + j: int(scaled.runtime[j]) * tick + EXACT_SLACK_S
                 for j in range(scaled.n_jobs)}
        proc = mp.Process(target=predict_loop, args=(env, str(cluster.conf),
                                                     str(cluster.jobcomp), str(pred_csv),
                                                     stop, exact), daemon=True)
        proc.start()
        time.sleep(3)  # the predictor's imports and first read
        sub = submit_replay(scaled, env, PARTITION, hold=False, aligned=True)
        sub.check_complete()
        ids = set(sub.slurm_id.values())
        deadline = time.monotonic() + 1800
        while time.monotonic() < deadline:
            done = {r.job_id for r in read_jobcomp(cluster.jobcomp)}
            if ids <= done:
                break
            time.sleep(1.0)
        stop.set()
        proc.join(timeout=60)
        if proc.is_alive():
            proc.terminate()
        recs = {r.job_id: r for r in read_jobcomp(cluster.jobcomp)}
        conf_text = cluster.conf.read_text()
        numbered = all(sub.slurm_id[int(scaled.job_id[j])] == 2 + j
                       for j in range(scaled.n_jobs))
    finally:
        cluster.stop()
    pred = pd.read_csv(pred_csv)
    if not numbered:
        pred = pred[~pred["predictor"].str.endswith("-exact")]
    table = first_predictions(pred, recs, ids, tick)
    summary = ({} if table.empty else
               {name: summarize(g) for name, g in table.groupby("predictor")})
    summary["conf"] = [line for line in conf_text.splitlines()
                       if line.startswith(("Scheduler", "Priority", "Select"))]
    summary["cycle_s_median"] = float(pred["cycle_s"].median())
    summary["exact_ids_held"] = numbered
    summary["exact_slack_s"] = EXACT_SLACK_S
    summary["makespan_s"] = max(r.end for r in recs.values() if r.job_id in ids and r.end
                                ) - sub.t0
    summary["submission_lag_s_max"] = max(sub.lag_s.values())
    return table, summary


def _stop(signum: int, frame: Any) -> None:
    raise SystemExit(f"stopped by signal {signum}")


def first_predictions(pred: pd.DataFrame, recs: dict[int, Any], ids: set[int],
                      tick: int) -> pd.DataFrame:
    """Per replayed job that waited (started more than a tick after its submission) and
    predictor: the first prediction made before the job started, and the realized
    start."""
    rows = []
    for (name, jid), grp in pred.groupby(["predictor", "job_id"], sort=True):
        rec = recs.get(int(jid))
        if (int(jid) not in ids or rec is None or rec.start is None
                or rec.start - rec.submit <= tick):
            continue
        before = grp[grp["cycle_time"] < rec.start]
        if before.empty:
            continue
        first = before.iloc[0]
        rows.append({"predictor": name, "job_id": int(jid), "submit": rec.submit,
                     "realized_start": rec.start, "cycle_time": int(first["cycle_time"]),
                     "predicted_start": int(first["predicted_start"]),
                     "low": int(first["low"]), "high": int(first["high"]),
                     "error_s": int(first["predicted_start"]) - rec.start,
                     "in_band": bool(first["low"] <= rec.start <= first["high"])})
    return pd.DataFrame(rows)


def summarize(g: pd.DataFrame) -> dict[str, Any]:
    """Median / p90 absolute error, mean signed error, share inside the band."""
    err = g["error_s"].to_numpy(float)
    return {"jobs": len(g), "median_abs_s": float(np.median(np.abs(err))),
            "p90_abs_s": float(np.quantile(np.abs(err), 0.9)),
            "mean_signed_s": float(err.mean()), "in_band": float(g["in_band"].mean()),
            "band_width_median_s": float((g["high"] - g["low"]).median())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--skip", type=int, nargs="+", default=[3850, 2000])
    ap.add_argument("--limit", type=int, default=150)
    ap.add_argument("--compression", type=float, default=1800.0,
                    help="trace seconds per tick")
    ap.add_argument("--tick", type=int, default=2, help="wall seconds per tick")
    ap.add_argument("--out", type=Path, default=HERE / "results")
    ap.add_argument("--priority", nargs="+", default=list(PRIORITY),
                    help="the slurm.conf Priority* lines of the runs")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    out_json = args.out / "predictions.json"
    report: dict[str, Any] = {"config": {
        "trace": TRACE.name, "limit": args.limit, "compression_per_tick": args.compression,
        "tick_s": args.tick, "cluster": "4 nodes x 25 CPUs, sched/backfill (bf_interval=1, "
        "bf_resolution=1), select/cons_tres CR_Core (each run's Priority* lines: its "
        "'conf')",
        "estimate": ESTIMATE, "history": "the cluster's job completion log as it grows",
        "every_s": EVERY_S, "walltime_rounding": "up to whole minutes after scaling"},
        "versions": versions(), "runs": {}}
    if out_json.exists():
        report["runs"] = json.loads(out_json.read_text()).get("runs", {})
    for skip in args.skip:
        wl = load_workload(TRACE, skip=skip, limit=args.limit)
        scaled = scaled_workload(wl, args.compression, args.tick)
        k = 1 + sum(1 for key in report["runs"] if key.startswith(f"skip{skip}#"))
        tag = f"skip{skip}-{k}"
        load_before = os.getloadavg()
        table, summary = run_one(scaled, args.out, tag, tuple(args.priority))
        table.to_csv(args.out / f"predictions_{tag}_jobs.csv", index=False)
        summary["skip"] = skip
        summary["load_before"], summary["load_after"] = load_before, os.getloadavg()
        report["runs"][f"skip{skip}#{k}"] = summary
        print(tag, json.dumps({n: v for n, v in summary.items()
                               if isinstance(v, dict)}), flush=True)
        out_json.write_text(json.dumps(report, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
