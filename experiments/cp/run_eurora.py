"""Run the CP study on Eurora historical batches and write a CSV + Markdown report.

Usage: ``python experiments/cp/run_eurora.py experiments/cp/eurora_paper.toml``.
Jobs are pooled over all batches; short < 1 h ≤ medium < 5 h ≤ long (actual run time).
"""

from __future__ import annotations

import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import dispatchlab.dispatchers.cp.presets  # noqa: F401  (registers the CP presets)
from dispatchlab.simulation import simulate
from dispatchlab.workload.load import load_workload


def job_class(runtime: pd.Series) -> pd.Series:
    """short / medium / long by actual run time."""
    return pd.cut(runtime, [-1, 3599, 5 * 3600 - 1, np.inf], labels=["short", "medium", "long"])


def run(cfg_path: Path) -> None:
    cfg = tomllib.loads(cfg_path.read_text())
    base = cfg_path.parent
    wcfg, rcfg = cfg["workload"], cfg["run"]
    out = base / cfg["output"]["dir"]
    out.mkdir(parents=True, exist_ok=True)
    batches: list[Path] = []
    for size in wcfg["sizes"]:
        files = sorted((base / wcfg["batches"] / str(size)).glob("*.log_crypt"))
        batches += files[: wcfg["per_size"]]
    rows: list[dict[str, Any]] = []
    jobs: list[pd.DataFrame] = []
    for path in batches:
        wl = load_workload(path)
        for name in ["logged", *rcfg["dispatchers"]]:
            if name == "logged":
                continue
            t0 = time.perf_counter()
            res = simulate(wl, wcfg["platform"], name, seed=rcfg["seed"],
                           on_infeasible=wcfg["on_infeasible"])
            sim = time.perf_counter() - t0
            s = res.summary
            ds = s.get("dispatcher_stats", {})
            pred = ds.get("predictor", {})
            rows.append({
                "batch": path.name, "dispatcher": name, "sim_s": sim,
                "dec_mean_ms": s["dispatch_time_mean_ms"], "dec_max_ms": s["dispatch_time_max_ms"],
                "decisions": s["decision_points"],
                "solver_calls": ds.get("solver_calls"), "fallbacks": ds.get("fallbacks"),
                "errors": ds.get("errors"), "infeasible": ds.get("paths", {}).get("infeasible"),
                "mean_intervals": ds.get("mean_intervals_solver"),
                "mean_req_res": ds.get("mean_req_res_solver"),
                "mean_avl_res": ds.get("mean_avl_res_solver"),
                "mean_model_jobs": ds.get("mean_model_jobs_solver"),
                "pred_mae_s": pred.get("mae_s"), "pred_under": pred.get("under_rate"),
                "pred_over": pred.get("over_rate"),
            })
            j = res.jobs[~res.jobs["rejected"]][["job_id", "wait", "slowdown",
                                                 "actual_runtime", "logged_wait"]].copy()
            j["batch"], j["dispatcher"] = path.name, name
            jobs.append(j)
            print(f"{path.name} {name:16s} {sim:6.1f}s dec {s['dispatch_time_mean_ms']:7.1f} ms "
                  f"max {s['dispatch_time_max_ms']:7.0f} ms slowdown {s['mean_slowdown']:.2f}",
                  flush=True)
    runs = pd.DataFrame(rows)
    alljobs = pd.concat(jobs, ignore_index=True)
    # the waits actually logged on Eurora (PBS), same jobs
    first = alljobs[alljobs["dispatcher"] == alljobs["dispatcher"].iloc[0]].copy()
    first["wait"] = first["logged_wait"].clip(lower=0)
    rt = first["actual_runtime"].clip(lower=1)
    first["slowdown"] = (first["wait"] + rt) / rt
    first["dispatcher"] = "eurora-logged"
    alljobs = pd.concat([alljobs, first], ignore_index=True)
    alljobs["class"] = job_class(alljobs["actual_runtime"])
    runs.to_csv(out / "runs.csv", index=False)
    table = quality_table(alljobs)
    table.to_csv(out / "quality.csv")
    perf = runs.groupby("dispatcher", sort=False).agg(
        dec_mean_ms=("dec_mean_ms", "mean"), dec_max_ms=("dec_max_ms", "max"),
        sim_s=("sim_s", "sum"), solver_calls=("solver_calls", "sum"),
        fallbacks=("fallbacks", "sum"), errors=("errors", "sum"),
        infeasible=("infeasible", "sum"),
        intervals=("mean_intervals", "mean"), req_res=("mean_req_res", "mean"),
        avl_res=("mean_avl_res", "mean"), pred_mae_min=("pred_mae_s", lambda v: v.mean() / 60),
        pred_under=("pred_under", "mean"), pred_over=("pred_over", "mean"))
    perf.to_csv(out / "performance.csv")
    (out / "report.md").write_text(
        f"# Eurora historical batches: {len(batches)} batches, "
        f"{int(alljobs[alljobs['dispatcher'] == 'eurora-logged'].shape[0])} jobs\n\n"
        "## Quality (jobs pooled over batches)\n\n" + markdown(table) +
        "\n\n## Decision time, problem size, predictor accuracy\n\n" +
        markdown(perf) + "\n")
    print((out / "report.md").read_text())


def markdown(df: pd.DataFrame) -> str:
    """A pipe table without extra dependencies."""
    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return "" if np.isnan(v) else f"{v:,.2f}"
        return str(v)
    head = "| " + " | ".join([str(df.index.name or ""), *map(str, df.columns)]) + " |"
    sep = "|" + "---|" * (len(df.columns) + 1)
    body = ["| " + " | ".join([str(i), *(fmt(v) for v in row)]) + " |"
            for i, row in zip(df.index, df.itertuples(index=False), strict=True)]
    return "\n".join([head, sep, *body])


def quality_table(alljobs: pd.DataFrame) -> pd.DataFrame:
    """Mean and std of slowdown and wait, overall and for medium and long jobs."""
    parts = {}
    for label, sub in (("all", alljobs), ("medium", alljobs[alljobs["class"] == "medium"]),
                       ("long", alljobs[alljobs["class"] == "long"])):
        g = sub.groupby("dispatcher", sort=False)
        parts[f"{label} slowdown mean"] = g["slowdown"].mean()
        parts[f"{label} slowdown std"] = g["slowdown"].std()
        parts[f"{label} wait mean"] = g["wait"].mean()
        parts[f"{label} wait std"] = g["wait"].std()
    parts["jobs"] = alljobs.groupby("dispatcher", sort=False)["wait"].size()
    return pd.DataFrame(parts)


if __name__ == "__main__":
    run(Path(sys.argv[1]))
