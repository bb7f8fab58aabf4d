"""Eurora's historical batches re-run with Eurora's real queue definitions.

Three platforms, the same 64-node Eurora machine:
- ``eurora``: no queue rules (what the earlier experiments used);
- ``eurora-pbs``: the PBS queues (thesis Table 3.1 limits, ``system_queues`` waits) with
  np_longpar starting only between 18:00 and 08:00, Europe/Rome time;
- ``eurora-pbs-anytime.toml``: the same queues, np_longpar allowed at any time — the
  control that isolates the non-prime-time rule.

Usage: ``python experiments/eurora_queues/run.py [--sizes 1000 800] [--dispatchers hcp3]
[--max-batches N] [--out DIR]``.
Writes ``runs.csv`` (one row per batch × platform × dispatcher), ``per_queue.csv``
(pooled over batches: every job record), ``per_queue_distinct.csv`` (per distinct job —
the batches overlap — its mean over the batches holding it, then per queue) and
``run.json`` (configuration and versions).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pandas as pd

from dispatchlab.provenance import versions
from dispatchlab.simulation import simulate
from dispatchlab.workload.eurora import list_eurora_batches
from dispatchlab.workload.load import load_workload

HERE = Path(__file__).resolve().parent
TRACES = (HERE.parents[1] / ".." / "shared" / "traces" / "eurora" / "job_instances"
          / "historical_traces").resolve()
PLATFORMS = {"eurora": "eurora", "eurora-pbs": "eurora-pbs",
             "eurora-pbs-anytime": str(HERE / "eurora-pbs-anytime.toml")}
DISPATCHERS = ("pbs-fifo-window", "easy")


def reason_kind(reason: str) -> str:
    """A short class of a rejection reason."""
    if not reason:
        return ""
    if reason.startswith("queue '"):
        return "queue limit"
    if "empty machine hosts" in reason:
        return "no node can host"
    return "other"


def run(sizes: list[str], out: Path, dispatchers: tuple[str, ...] = DISPATCHERS,
        max_batches: int | None = None) -> None:
    """Simulate every batch of the given sizes (the first ``max_batches`` of them, in the
    folder order) on every platform with every dispatcher."""
    batches = [b for b in list_eurora_batches(TRACES) if b.parent.name in sizes]
    batches = batches[:max_batches]
    rows, jobs_all = [], []
    t0 = time.perf_counter()
    for k, path in enumerate(batches):
        wl = load_workload(path)
        for pname, spec in PLATFORMS.items():
            for disp in dispatchers:
                res = simulate(wl, spec, disp, on_infeasible="reject")
                j = res.jobs.assign(batch=path.stem, platform=pname, dispatcher=disp)
                j["reject_kind"] = j.get("reject_reason", pd.Series("", index=j.index)).map(
                    lambda r: reason_kind(r if isinstance(r, str) else ""))
                hour = pd.to_numeric(j["start_at"].str[11:13], errors="coerce")
                j["daytime_start"] = (~j["rejected"]) & hour.between(8, 17)
                jobs_all.append(j[["batch", "platform", "dispatcher", "job_id", "queue", "wait",
                                   "bounded_slowdown", "logged_wait", "rejected",
                                   "reject_kind", "daytime_start"]])
                rows.append({"batch": path.stem, "platform": pname, "dispatcher": disp,
                             **{key: res.summary[key] for key in
                                ("jobs", "rejected", "mean_wait", "mean_bounded_slowdown",
                                 "utilization", "makespan", "sim_seconds")}})
        print(f"[{k + 1}/{len(batches)}] {path.stem} ({time.perf_counter() - t0:.0f} s)",
              flush=True)
    out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(out / "runs.csv", index=False)
    jobs = pd.concat(jobs_all, ignore_index=True)
    ran = jobs[~jobs["rejected"]]
    per_queue = ran.groupby(["platform", "dispatcher", "queue"]).agg(
        jobs=("wait", "size"), mean_wait=("wait", "mean"), median_wait=("wait", "median"),
        p90_wait=("wait", lambda w: w.quantile(0.9)), max_wait=("wait", "max"),
        mean_bsld=("bounded_slowdown", "mean"), daytime_starts=("daytime_start", "sum"))
    logged = ran[ran["logged_wait"] >= 0].groupby(["platform", "dispatcher", "queue"])[
        "logged_wait"].mean().rename("logged_pbs_mean_wait")
    per_queue = per_queue.join(logged).reset_index()
    per_queue.to_csv(out / "per_queue.csv", index=False, float_format="%.1f")
    # The batches overlap (windows of one log): the same job appears in several. Per
    # distinct job, its mean over the batches it appears in; then per queue.
    per_job = ran.groupby(["platform", "dispatcher", "queue", "job_id"]).agg(
        wait=("wait", "mean"), bsld=("bounded_slowdown", "mean"),
        daytime=("daytime_start", "mean"), copies=("wait", "size"))
    distinct = per_job.groupby(["platform", "dispatcher", "queue"]).agg(
        distinct_jobs=("wait", "size"), records=("copies", "sum"), mean_wait=("wait", "mean"),
        median_wait=("wait", "median"), p90_wait=("wait", lambda w: w.quantile(0.9)),
        mean_bsld=("bsld", "mean"), daytime_share=("daytime", "mean")).reset_index()
    distinct.to_csv(out / "per_queue_distinct.csv", index=False, float_format="%.3f")
    rejected = jobs[jobs["rejected"]].groupby(["platform", "dispatcher", "reject_kind"]).size()
    rejected.rename("jobs").reset_index().to_csv(out / "rejections.csv", index=False)
    (out / "run.json").write_text(json.dumps({
        "batches": [str(b.relative_to(TRACES)) for b in batches],
        "platforms": PLATFORMS, "dispatchers": dispatchers, "on_infeasible": "reject",
        "seconds": round(time.perf_counter() - t0, 1), "versions": versions()}, indent=2))
    print(per_queue.to_string(index=False))
    print(rejected.to_string())


def main() -> None:
    """Command line."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=["50", "100", "200", "400", "600", "800",
                                                   "1000"])
    ap.add_argument("--dispatchers", nargs="+", default=list(DISPATCHERS))
    ap.add_argument("--max-batches", type=int, default=None)
    ap.add_argument("--out", type=Path, default=HERE / "results")
    args = ap.parse_args()
    run(args.sizes, args.out, tuple(args.dispatchers), args.max_batches)


if __name__ == "__main__":
    main()
