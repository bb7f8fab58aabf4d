"""Thesis Tables 4.13–4.15 from the `run-experiment` folders, next to the thesis's numbers.

Usage: ``python experiments/thesis_tables/report.py`` (after the three campaigns). For
each test it reads ``results/<test>/results.csv`` (written by ``run-experiment`` /
``dispatchlab results``), writes ``thesis_table.csv`` (WQT … %O, mean over seeds, and the
per-seed values) and an HTML report (``report/index.html``: figures, tables, statistics,
configurations; the PNG/SVG copies are removed), then ``results/thesis_tables.md``
with every table beside the thesis's.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from dispatchlab.experiments.store import RunStore
from dispatchlab.metrics.thesis_metrics import NAMES, THESIS, relative_to, thesis_table
from dispatchlab.report.analysis import build_comparison
from dispatchlab.report.build import write_report

HERE = Path(__file__).resolve().parent
TESTS = {
    "t413": "4 nodes / 99 jobs (Table 4.13)",
    "t414": "65 nodes / 330 jobs (Table 4.14)",
    "t415": "65 nodes / 700 jobs (Table 4.15)",
}
BASE = "pbs-fifo"
THESIS_NAMES = {"PBSFifo": "pbs-fifo", "PBSWalltime": "pbs-walltime", "CPModel": "CP"}
STATS = ["weighted_queue_time", "mean_wait", "late_jobs", "total_tardiness",
         "weighted_tardiness", "dispatch_time_mean_ms", "dispatch_overhead_pct"]


def fmt(v: float) -> str:
    """Thesis-like number formatting."""
    if np.isnan(v):
        return ""
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v) >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def md(df: pd.DataFrame) -> str:
    """A pipe table."""
    head = "| | " + " | ".join(map(str, df.columns)) + " |"
    sep = "|" + "---|" * (len(df.columns) + 1)
    rows = ["| " + str(i) + " | " + " | ".join(fmt(float(v)) for v in r) + " |"
            for i, r in zip(df.index, df.to_numpy(), strict=True)]
    return "\n".join([head, sep, *rows])


def one_test(key: str, title: str) -> str:
    """Tables and HTML report of one test; the Markdown section."""
    folder = HERE / "results" / key
    results = pd.read_csv(folder / "results.csv")
    done = set(results["dispatcher"])
    order = [d for d in RunStore(folder).planned_dispatchers() if d in done]
    ours = thesis_table(results)[order]
    per_seed = thesis_table(results.assign(ds=results["dispatcher"] + " s" +
                                           results["seed"].astype(str)), by="ds")
    pd.concat([ours, per_seed], axis=1).to_csv(folder / "thesis_table.csv")
    thesis = pd.DataFrame(THESIS[title]).T[list(THESIS_NAMES)].rename(columns=THESIS_NAMES)
    gain_ours = relative_to(ours, BASE).drop(columns=BASE)
    gain_thesis = relative_to(thesis, BASE).drop(columns=BASE)
    records = list(RunStore(folder).records())
    cmp = build_comparison(records, title=f"Thesis {title}", order=order, stats_metrics=STATS)
    write_report(cmp, folder / "report", gantt_max_jobs=0)
    for fig in (folder / "report").glob("*.[ps][nv]g"):
        fig.unlink()  # index.html embeds every figure; keep the checked-in size small
    seeds = int(results["seed"].nunique())
    jobs = results.groupby("dispatcher")["jobs_run"].mean()
    rejected = int(results["rejected"].max())
    return "\n".join([
        f"## {title}", "",
        f"Ours: mean of {seeds} seeds (generator seeds = dispatcher seeds), "
        f"{jobs.min():.0f} jobs run per seed (≤ {rejected} rejected as infeasible). "
        "AO, MO in s; %O in % of the makespan.", "",
        md(ours), "", "Thesis:", "", md(thesis), "",
        f"Improvement over {BASE} in % (positive = better; thesis Figs. 4.6–4.10 "
        "convention) — ours:", "", md(gain_ours.loc[list(NAMES[:5])]), "",
        "thesis:", "", md(gain_thesis.loc[list(NAMES[:5])]), "",
        f"HTML report: `results/{key}/report/index.html`.", "",
    ])


def main(keys: list[str]) -> None:
    parts = ["# Thesis Tables 4.13–4.15: our runs next to the thesis", ""]
    for key in keys or list(TESTS):
        if (HERE / "results" / key / "results.csv").is_file():
            parts.append(one_test(key, TESTS[key]))
        else:
            parts.append(f"## {TESTS[key]}\n\nnot run yet\n")
    text = "\n".join(parts)
    (HERE / "results" / "thesis_tables.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main(sys.argv[1:])
