"""Tables of the ch. 7 experiment from ``results/*.json`` (run.py): profit gain of the
hybrid DARDIS versions over the best rule-based setup per workload and scenario (Table
7.1 / Fig. 7.2 layout), makespan (Fig. 7.3) and overhead (Fig. 7.4).

    .venv/bin/python experiments/hybrid/report.py --tag days10   # writes tables_<tag>.md
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
HYBRID = ("hybrid-dardis100", "hybrid-dardis70", "hybrid-dardis50")
#: Thesis Table 7.1, DARDIS70 % over RB (%), summer-air, summer-hybrid, winter-air,
#: winter-hybrid.
THESIS_71 = {"low": (29.50, 17.84, 7.37, 15.00), "medium": (10.46, 18.23, 13.19, -7.50),
             "high": (0.36, 0.20, 0.23, 0.01)}
SCEN = ("summer-air", "summer-hybrid", "winter-air", "winter-hybrid")


def load(tag: str) -> pd.DataFrame:
    rows = []
    for p in sorted((HERE / "results").glob(f"{tag}_*.json")):
        r = json.loads(p.read_text())
        for scen, fig in r["profit"].items():
            rows.append({"workload": r["workload"], "dispatcher": r["dispatcher"],
                         "scenario": scen, "profit": fig["profit"], "pue": fig["mean_pue"],
                         "makespan_d": r["makespan_s"] / 86_400,
                         "mean_wait_h": r["mean_wait_s"] / 3600,
                         "overhead_ms": 1e3 * r["overhead_per_job_s"], "wall_s": r["wall_s"],
                         "power_offs": r["power_offs"], "jobs": r["jobs"],
                         "audited": r["audited"]})
    return pd.DataFrame(rows)


def tables(df: pd.DataFrame) -> str:
    out = []
    rb = df[~df["dispatcher"].isin(HYBRID)]
    best = rb.loc[rb.groupby(["workload", "scenario"])["profit"].idxmax()]
    best = best.set_index(["workload", "scenario"])
    out.append("## Profit gain over the best rule-based setup (%)\n")
    out.append("| workload | scenario | best RB | RB profit (€) | dardis100 | dardis70 | "
               "dardis50 | thesis dardis70 |")
    out.append("|---|---|---|---|---|---|---|---|")
    for w in ("low", "medium", "high"):
        for k, s in enumerate(SCEN):
            if (w, s) not in best.index:
                continue
            b = best.loc[(w, s)]
            cells = []
            for h in HYBRID:
                row = df[(df.workload == w) & (df.scenario == s) & (df.dispatcher == h)]
                cells.append(f"{100 * (row.profit.iloc[0] / b.profit - 1):+.1f}"
                             if len(row) else "–")
            out.append(f"| {w} | {s} | {b.dispatcher} | {b.profit:,.0f} | "
                       + " | ".join(cells) + f" | {THESIS_71[w][k]:+.2f} |")
    out.append("\n## Makespan (days), mean wait (h), overhead per job (ms), switch-offs\n")
    out.append("| workload | dispatcher | jobs | makespan | mean wait | overhead | "
               "power-offs | wall (s) | audited |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    one = df[df.scenario == "summer-air"]
    for _, r in one.sort_values(["workload", "dispatcher"]).iterrows():
        offs = "–" if pd.isna(r.power_offs) else f"{int(r.power_offs):,}"
        out.append(f"| {r.workload} | {r.dispatcher} | {r.jobs:,} | {r.makespan_d:.2f} | "
                   f"{r.mean_wait_h:.2f} | {r.overhead_ms:.3f} | {offs} | {r.wall_s:.1f} | "
                   f"{r.audited} |")
    out.append("\n## Profit (€) per dispatcher and scenario\n")
    piv = df.pivot_table(index=["workload", "dispatcher"], columns="scenario",
                         values="profit")
    out.append("| workload | dispatcher | " + " | ".join(piv.columns) + " |")
    out.append("|---|---|" + "---|" * len(piv.columns))
    for (w, d), r in piv.iterrows():
        out.append(f"| {w} | {d} | " + " | ".join(f"{v:,.0f}" for v in r) + " |")
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tag", default="full")
    args = ap.parse_args()
    text = tables(load(args.tag))
    (HERE / f"tables_{args.tag}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
