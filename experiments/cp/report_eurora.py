"""Report of the CP study on Eurora historical batches from a `run-experiment` folder.

Usage: ``python experiments/cp/report_eurora.py experiments/cp/results/eurora_hist``.
Reads the stored runs (``OUT/runs/*``), keeps the batches on which every planned
dispatcher finished, pools their jobs and writes ``quality.csv`` (mean/std of slowdown and
wait, overall and for medium and long jobs, plus the waits PBS logged), ``performance.csv``
(decision time, simulation time, problem sizes, predictor accuracy), ``targets.csv``
(issue #6 targets per batch) and ``report.md``. Classes by actual run time: short < 1 h ≤
medium < 5 h ≤ long.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dispatchlab.experiments.store import RunRecord, RunStore
from dispatchlab.report.format import markdown_table as markdown

TARGET_MEAN_MS = {"hcp3": 100.0, "pcp3": 300.0}
WALL_CAP_MS = 1000.0  # SearchConfig.wall_limit of the presets
LOGGED = "eurora-logged"


def job_class(runtime: pd.Series) -> pd.Series:
    """short / medium / long by actual run time."""
    return pd.cut(runtime, [-1, 3599, 5 * 3600 - 1, np.inf], labels=["short", "medium", "long"])


def complete_records(store: RunStore) -> tuple[list[RunRecord], list[str], list[str]]:
    """Records of the batches every planned dispatcher finished; their batches; the order."""
    order = store.planned_dispatchers()
    by_batch: dict[str, list[RunRecord]] = defaultdict(list)
    for rec in store.records():
        by_batch[rec.labels["workload"]].append(rec)
    keep = sorted(b for b, recs in by_batch.items()
                  if {r.labels["dispatcher"] for r in recs} >= set(order))
    return [r for b in keep for r in by_batch[b]], keep, order


def run_row(rec: RunRecord) -> dict[str, Any]:
    """One run: decision time, simulation time, model sizes, predictor accuracy."""
    s = rec.summary
    ds = s.get("dispatcher_stats") or {}
    pred = ds.get("predictor") or {}
    log = ds.get("decision_log") or {}
    solve = [v for v in log.get("solve_ms", []) if v]
    return {
        "batch": rec.labels["workload"], "dispatcher": rec.labels["dispatcher"],
        "jobs": s["jobs_run"], "mean_slowdown": s["mean_slowdown"], "mean_wait": s["mean_wait"],
        "sim_s": rec.doc.get("worker", {}).get("seconds"),
        "dec_mean_ms": s["dispatch_time_mean_ms"], "dec_max_ms": s["dispatch_time_max_ms"],
        "solve_max_ms": max(solve, default=0.0), "decisions": s["decision_points"],
        "solver_calls": ds.get("solver_calls"), "fallbacks": ds.get("fallbacks"),
        "errors": ds.get("errors"), "wall_limit_hits": ds.get("wall_limit_hits"),
        "kept_greedy": ds.get("kept_greedy"),
        "infeasible": (ds.get("paths") or {}).get("infeasible", 0 if ds else None),
        "mean_model_jobs": ds.get("mean_model_jobs_solver"),
        "mean_intervals": ds.get("mean_intervals_solver"),
        "mean_req_res": ds.get("mean_req_res_solver"),
        "mean_avl_res": ds.get("mean_avl_res_solver"),
        "pred_mae_s": pred.get("mae_s"), "pred_under": pred.get("under_rate"),
        "pred_over": pred.get("over_rate"),
    }


def pooled_jobs(records: list[RunRecord]) -> pd.DataFrame:
    """Every job that ran, per batch and dispatcher, plus the logged PBS waits."""
    parts = []
    for rec in records:
        j = rec.jobs()
        j = j[~j["rejected"]][["job_id", "wait", "slowdown", "actual_runtime", "logged_wait"]]
        j = j.assign(batch=rec.labels["workload"], dispatcher=rec.labels["dispatcher"])
        parts.append(j)
    jobs = pd.concat(parts, ignore_index=True)
    first = jobs[jobs["dispatcher"] == jobs["dispatcher"].iloc[0]].copy()
    first["wait"] = first["logged_wait"].clip(lower=0)
    rt = first["actual_runtime"].clip(lower=1)
    first["slowdown"] = (first["wait"] + rt) / rt
    first["dispatcher"] = LOGGED
    jobs = pd.concat([first, jobs], ignore_index=True)
    jobs["class"] = job_class(jobs["actual_runtime"])
    return jobs


def quality_table(jobs: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """Mean and std of slowdown and wait, overall and for medium and long jobs."""
    parts = {}
    for label, sub in (("all", jobs), ("medium", jobs[jobs["class"] == "medium"]),
                       ("long", jobs[jobs["class"] == "long"])):
        g = sub.groupby("dispatcher")
        parts[f"{label} slowdown mean"] = g["slowdown"].mean()
        parts[f"{label} slowdown std"] = g["slowdown"].std()
        parts[f"{label} wait mean"] = g["wait"].mean()
        parts[f"{label} wait std"] = g["wait"].std()
    parts["jobs"] = jobs.groupby("dispatcher")["wait"].size()
    return pd.DataFrame(parts).reindex([LOGGED, *order])


def performance_table(runs: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    """Per dispatcher over the batches: decision time, time, sizes, predictor accuracy."""
    g = runs.groupby("dispatcher")
    perf = g.agg(
        dec_mean_ms=("dec_mean_ms", "mean"), dec_max_ms=("dec_max_ms", "max"),
        solve_max_ms=("solve_max_ms", "max"), sim_s=("sim_s", "sum"),
        solver_calls=("solver_calls", "sum"), fallbacks=("fallbacks", "sum"),
        errors=("errors", "sum"), wall_cap_hits=("wall_limit_hits", "sum"),
        kept_greedy=("kept_greedy", "sum"), infeasible=("infeasible", "sum"),
        model_jobs=("mean_model_jobs", "mean"), intervals=("mean_intervals", "mean"),
        req_res=("mean_req_res", "mean"), avl_res=("mean_avl_res", "mean"),
        pred_mae_min=("pred_mae_s", lambda v: v.mean() / 60),
        pred_under=("pred_under", "mean"), pred_over=("pred_over", "mean"))
    # decision time over all decisions (weighted by decision count), not mean of means
    tot = runs.assign(t=runs["dec_mean_ms"] * runs["decisions"]).groupby("dispatcher")
    perf.insert(1, "dec_mean_all_ms", tot["t"].sum() / tot["decisions"].sum())
    return perf.reindex(order)


def targets(runs: pd.DataFrame) -> pd.DataFrame:
    """Per batch: hcp3/pcp3 mean and max decision time; v3-real vs v1 slowdown."""
    wide = runs.pivot(index="batch", columns="dispatcher", values="mean_slowdown")
    dec = runs.pivot(index="batch", columns="dispatcher", values="dec_mean_ms")
    mx = runs.pivot(index="batch", columns="dispatcher", values="dec_max_ms")
    out = pd.DataFrame(index=wide.index)
    for k in ("hcp", "pcp"):
        if not {f"{k}1", f"{k}3", f"{k}3-real"} <= set(wide.columns):
            continue  # a campaign without this family's v1/v3 runs: no target row
        out[f"{k}3 dec mean ms"] = dec[f"{k}3"]
        out[f"{k}3 dec max ms"] = mx[f"{k}3"]
        out[f"{k}1 slowdown"] = wide[f"{k}1"]
        out[f"{k}3-real slowdown"] = wide[f"{k}3-real"]
        out[f"{k} gain %"] = (1 - wide[f"{k}3-real"] / wide[f"{k}1"]) * 100
    return out


def report(folder: Path) -> str:
    """Write the tables and ``report.md`` into ``folder``; return the Markdown."""
    store = RunStore(folder)
    records, batches, order = complete_records(store)
    if not records:
        raise SystemExit(f"{folder}: no batch has every dispatcher finished yet")
    runs = pd.DataFrame([run_row(r) for r in records])
    runs.to_csv(folder / "runs.csv", index=False)
    jobs = pooled_jobs(records)
    quality = quality_table(jobs, order)
    quality.to_csv(folder / "quality.csv")
    perf = performance_table(runs, order)
    perf.to_csv(folder / "performance.csv")
    tgt = targets(runs)
    tgt.to_csv(folder / "targets.csv")
    n_jobs = int((jobs["dispatcher"] == LOGGED).sum())
    lines = [f"# Eurora historical batches: {len(batches)} batches, {n_jobs} jobs", ""]
    for k in ("hcp3", "pcp3"):
        if f"{k} dec mean ms" not in tgt.columns:
            continue
        mean_all = perf.loc[k, "dec_mean_all_ms"]
        lines.append(
            f"- `{k}`: mean decision {mean_all:.1f} ms over all decisions (target ≤ "
            f"{TARGET_MEAN_MS[k]:.0f} ms; worst batch {tgt[f'{k} dec mean ms'].max():.1f} ms); "
            f"max {perf.loc[k, 'dec_max_ms']:.0f} ms, longest solver call "
            f"{perf.loc[k, 'solve_max_ms']:.0f} ms (cap {WALL_CAP_MS:.0f} ms + model building)")
    for k in ("hcp", "pcp"):
        if f"{k} gain %" not in tgt.columns:
            continue
        s1 = quality.loc[f"{k}1", "all slowdown mean"]
        s3 = quality.loc[f"{k}3-real", "all slowdown mean"]
        gains = tgt[f"{k} gain %"]
        lines.append(
            f"- `{k}3-real` vs `{k}1` (wall-time): pooled mean slowdown {s1:.3f} → {s3:.3f} "
            f"({(1 - s3 / s1) * 100:+.1f} % better); per batch: better on "
            f"{int((gains > 0.05).sum())}, equal on {int((gains.abs() <= 0.05).sum())}, "
            f"worse on {int((gains < -0.05).sum())} of {len(gains)}; best {gains.max():.1f} %")
    lines += ["", "## Quality (jobs pooled over batches)", "", markdown(quality), "",
              "## Decision time, problem size, predictor accuracy", "", markdown(perf), "",
              "## Targets per batch", "", markdown(tgt), ""]
    text = "\n".join(lines)
    (folder / "report.md").write_text(text)
    return text


if __name__ == "__main__":
    print(report(Path(sys.argv[1])))
