"""The figures experiments/cp/README.md quotes, computed from the stored result files.

Usage: ``python experiments/cp/claims.py experiments/cp/results/eurora_hist
[experiments/cp/results/eurora_hist_rules [experiments/cp/results/eurora_hist_predictor]]``
(the second folder: the rule-based rows re-run with the current code; per-batch CP
comparisons are then made against them too; the third: the CP variants with the
``heuristic-request`` predictor, compared with the stored ones).
Reads ``quality.csv`` (pooled jobs), ``runs.csv`` (one row per complete batch ×
dispatcher), ``performance.csv`` and ``results.csv`` (every stored run, partial batches
included); writes ``per_batch.csv`` (mean slowdown and mean wait per batch and dispatcher,
with the pooled value in the last row) and prints each claim with its numbers.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd


def change(a: float, b: float) -> float:
    """Relative change from ``a`` to ``b`` in %."""
    return 100.0 * (b - a) / a


def main(folder: Path, rules: Path | None = None, pred: Path | None = None) -> None:
    quality = pd.read_csv(folder / "quality.csv").set_index("dispatcher")
    runs = pd.read_csv(folder / "runs.csv")
    perf = pd.read_csv(folder / "performance.csv").set_index("dispatcher")
    results = pd.read_csv(folder / "results.csv")
    sd = runs.pivot(index="batch", columns="dispatcher", values="mean_slowdown")
    wait = runs.pivot(index="batch", columns="dispatcher", values="mean_wait")
    pooled = quality["all slowdown mean"]
    table = pd.concat({"mean_slowdown": sd, "mean_wait": wait}, axis=1)
    last = pd.concat({"mean_slowdown": pooled, "mean_wait": quality["all wait mean"]})
    table.loc["POOLED"] = last.reindex(table.columns)
    table.to_csv(folder / "per_batch.csv", float_format="%.4f")
    print(f"{len(sd)} complete batches; {int(quality['jobs'].iloc[0])} pooled job records")

    print("\nPaper's 'up to 58 %' = v1 real -> v3 real (mean slowdown, pooled and per batch):")
    for cp in ("pcp", "hcp"):
        per = change_series(sd[f"{cp}1-real"], sd[f"{cp}3-real"])
        print(f"  {cp.upper()}1-real {pooled[f'{cp}1-real']:.3f} -> {cp.upper()}3-real "
              f"{pooled[f'{cp}3-real']:.3f}: {change(pooled[f'{cp}1-real'], pooled[f'{cp}3-real']):+.1f} %"
              f" pooled; best batch {per.min():+.1f} %, worst {per.max():+.1f} %; "
              f"better/equal/worse {(per < -0.5).sum()}/{(per.abs() <= 0.5).sum()}/{(per > 0.5).sum()}")
        per = change_series(sd[f"{cp}1"], sd[f"{cp}3-real"])
        print(f"  (v1 wall-time -> v3 real: {change(pooled[f'{cp}1'], pooled[f'{cp}3-real']):+.1f} % pooled,"
              f" best batch {per.min():+.1f} %)")

    print("\nReversals of the paper:")
    print(f"  PCP3-D vs PCP1-W: {pooled['pcp3-heuristic']:.3f} vs {pooled['pcp1']:.3f} "
          f"({change(pooled['pcp1'], pooled['pcp3-heuristic']):+.1f} %)")
    print(f"  HCP3-D vs HCP1-W: {pooled['hcp3-heuristic']:.3f} vs {pooled['hcp1']:.3f} "
          f"({change(pooled['hcp1'], pooled['hcp3-heuristic']):+.1f} %)")
    print(f"  HCP3-D vs HCP2-D: {pooled['hcp3-heuristic']:.3f} vs {pooled['hcp2-heuristic']:.3f} "
          f"({change(pooled['hcp2-heuristic'], pooled['hcp3-heuristic']):+.1f} %)")
    print(f"  PCP3-D vs PCP2-D: {pooled['pcp3-heuristic']:.3f} vs {pooled['pcp2-heuristic']:.3f} "
          f"({change(pooled['pcp2-heuristic'], pooled['pcp3-heuristic']):+.1f} %)")
    for v in ("", "1", "2", "3"):
        for p in ("", "-heuristic", "-real"):
            h, c = f"hcp{v}{p}", f"pcp{v}{p}"
            print(f"  decision mean {h} {perf.loc[h, 'dec_mean_all_ms']:.1f} ms vs {c} "
                  f"{perf.loc[c, 'dec_mean_all_ms']:.1f} ms")

    print("\nCP vs EASY per batch (mean slowdown; batches where CP is worse):")
    cps = [d for d in sd.columns if d.startswith(("hcp", "pcp"))]
    for d in cps:
        worse = sd.index[sd[d] > sd["easy"]]
        print(f"  {d}: pooled {pooled[d]:.3f} vs easy {pooled['easy']:.3f}; worse on "
              f"{len(worse)} of {len(sd)}: {', '.join(worse)}")

    if rules is not None:
        rr = pd.read_csv(rules / "results.csv")
        new = rr.pivot(index="workload", columns="dispatcher", values="mean_slowdown")
        jobs = rr.groupby("dispatcher")["jobs_run"].sum()
        print(f"\nRule-based rows re-run ({rules.name}), pooled over {jobs.iloc[0]} jobs:")
        for d in new.columns:
            g = rr[rr["dispatcher"] == d]
            print(f"  {d}: mean slowdown "
                  f"{(g['mean_slowdown'] * g['jobs_run']).sum() / g['jobs_run'].sum():.3f}, "
                  f"mean wait {(g['mean_wait'] * g['jobs_run']).sum() / g['jobs_run'].sum():.0f} s")
        new = new.reindex(sd.index)
        for base in new.columns:
            print(f"  CP worse than re-run {base} (mean slowdown), batches of {len(sd)}:")
            for d in ("hcp3", "pcp3", "hcp3-real", "pcp3-real", "hcp3-heuristic",
                      "pcp3-heuristic", "hcp1", "pcp1"):
                print(f"    {d}: {(sd[d] > new[base]).sum()}")

    if pred is not None:
        pq = pd.read_csv(pred / "quality.csv").set_index("dispatcher")["all slowdown mean"]
        pr = pd.read_csv(pred / "runs.csv").pivot(index="batch", columns="dispatcher",
                                                  values="mean_slowdown").reindex(sd.index)
        print(f"\nheuristic-request predictor ({pred.name}), pooled mean slowdown:")
        for cp in ("hcp", "pcp"):
            for v in ("1", "2", "3"):
                d = f"{cp}{v}-heuristic-request"
                print(f"  {d}: {pq[d]:.3f} (user key {pooled[f'{cp}{v}-heuristic']:.3f}, "
                      f"wall-time {pooled[f'{cp}{v}']:.3f})")
            for a, b in ((f"{cp}1", f"{cp}3-heuristic-request"),
                         (f"{cp}2-heuristic-request", f"{cp}3-heuristic-request"),
                         (f"{cp}3", f"{cp}3-heuristic-request")):
                base = pooled[a] if a in pooled else pq[a]
                col = sd[a] if a in sd else pr[a]
                per = change_series(col, pr[b])
                print(f"  {b} vs {a}: {change(base, pq[b]):+.1f} % pooled; per batch better /"
                      f" equal (±0.5 %) / worse {(per < -0.5).sum()}/"
                      f"{(per.abs() <= 0.5).sum()}/{(per > 0.5).sum()}")

    full = results.groupby("workload")["dispatcher"].nunique()
    partial = results[results["workload"].isin(full[full < full.max()].index)]
    print(f"\nPartial batches: {partial['workload'].nunique()} batches, {len(partial)} runs "
          "stored in results.csv (not in the pooled tables)")
    h2 = results[results["dispatcher"] == "hcp2-real"]
    slow = h2.loc[h2["run_seconds"].idxmax()]
    print(f"  slowest hcp2-real run: {slow['run_seconds']:.0f} s on {slow['workload']}")
    for d in ("hcp-heuristic", "hcp2-real", "hcp3-heuristic", "hcp3-real"):
        r = results[results["dispatcher"] == d]
        print(f"  {d}: longest run {r['run_seconds'].max():.0f} s "
              f"({r.loc[r['run_seconds'].idxmax(), 'workload']})")


def change_series(a: pd.Series, b: pd.Series) -> pd.Series:
    """Per-batch relative change from ``a`` to ``b`` in %."""
    return 100.0 * (b - a) / a


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else None,
         Path(sys.argv[3]) if len(sys.argv) > 3 else None)
