"""Thesis Tables 4.13–4.15 from the `run-experiment` folders, next to the thesis's numbers.

Usage: ``python experiments/thesis_tables/report.py`` (after the campaigns). For each
test it reads ``results/<test>/results.csv`` (CP and the window-reading PBS rows, written
by ``run-experiment`` / ``dispatchlab results``) and ``results/<test>-pbs/results.csv``
(the PBS baselines under both readings of the backfill depth, and EASY), writes
``thesis_table.csv`` (WQT … %O, mean over seeds, and the per-seed values) and, where the
run folders are present, an HTML report (``report/index.html``; the PNG/SVG copies are
removed), then ``results/thesis_tables.md`` with every table beside the thesis's.

Rows stored as ``pbs-fifo`` / ``pbs-walltime`` before issue 18 used the window reading;
they are renamed ``-window`` after checking that they equal the re-run ``-window`` rows.
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
BASES = ("pbs-fifo", "pbs-fifo-window")
OLD_NAMES = {"pbs-fifo": "pbs-fifo-window", "pbs-walltime": "pbs-walltime-window"}
PBS_FIRST = ["pbs-fifo", "pbs-walltime", "pbs-fifo-window", "pbs-walltime-window", "easy"]
#: Schedule metrics that must agree exactly between a stored and a re-run window row.
SCHEDULE = ["weighted_queue_time", "mean_wait", "late_jobs", "total_tardiness",
            "weighted_tardiness", "makespan"]
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


def merged_results(key: str) -> tuple[pd.DataFrame, list[str]]:
    """The CP rows of ``results/<key>`` with the PBS rows of ``results/<key>-pbs``, and
    the dispatchers in table order; stored pre-issue-18 PBS rows checked and renamed."""
    folder = HERE / "results" / key
    results = pd.read_csv(folder / "results.csv")
    planned = RunStore(folder).planned_dispatchers() if (folder / "plan.json").is_file() \
        else list(dict.fromkeys(results["dispatcher"]))
    pbs_csv = HERE / "results" / f"{key}-pbs" / "results.csv"
    if not pbs_csv.is_file():
        done = set(results["dispatcher"])
        return results, [d for d in planned if d in done]
    pbs = pd.read_csv(pbs_csv)
    stored = results[results["dispatcher"].isin(OLD_NAMES)].copy()
    stored["dispatcher"] = stored["dispatcher"].map(OLD_NAMES)
    for name in stored["dispatcher"].unique():
        a = stored[stored["dispatcher"] == name].set_index("seed")[SCHEDULE].sort_index()
        b = pbs[pbs["dispatcher"] == name].set_index("seed")[SCHEDULE].sort_index()
        if not np.allclose(a.to_numpy(float), b.loc[a.index].to_numpy(float)):
            raise SystemExit(f"{key}: stored {name} rows differ from the re-run ones")
    results = results[~results["dispatcher"].isin(OLD_NAMES)
                      & ~results["dispatcher"].isin(pbs["dispatcher"])]
    merged = pd.concat([pbs, results], ignore_index=True)
    done = set(merged["dispatcher"])
    cp = [d for d in planned if d not in OLD_NAMES and d not in PBS_FIRST]
    return merged, [d for d in PBS_FIRST + cp if d in done]


def one_test(key: str, title: str) -> str:
    """Tables and HTML reports of one test; the Markdown section."""
    folder = HERE / "results" / key
    results, order = merged_results(key)
    ours = thesis_table(results)[order]
    per_seed = thesis_table(results.assign(ds=results["dispatcher"] + " s" +
                                           results["seed"].astype(str)), by="ds")
    pd.concat([ours, per_seed], axis=1).to_csv(folder / "thesis_table.csv")
    thesis = pd.DataFrame(THESIS[title]).T[list(THESIS_NAMES)].rename(columns=THESIS_NAMES)
    gain_thesis = relative_to(thesis, BASE).drop(columns=BASE)
    for sub in (folder, HERE / "results" / f"{key}-pbs"):
        records = list(RunStore(sub).records()) if (sub / "runs").is_dir() else []
        if not records:
            continue  # run folders are not committed: keep the stored report
        names = list(dict.fromkeys(r.labels["dispatcher"] for r in records))
        cmp = build_comparison(records, title=f"Thesis {title}", order=names,
                               stats_metrics=STATS)
        write_report(cmp, sub / "report", gantt_max_jobs=0)
        for fig in (sub / "report").glob("*.[ps][nv]g"):
            fig.unlink()  # index.html embeds every figure; keep the checked-in size small
    seeds = int(results["seed"].nunique())
    jobs = results.groupby("dispatcher")["jobs_run"].mean()
    rejected = int(results["rejected"].max())
    gains = []
    for base in BASES:
        if base in ours.columns:
            gain = relative_to(ours, base).drop(columns=base)
            gains += [f"Improvement over {base} in % (positive = better; thesis Figs. "
                      "4.6–4.10 convention) — ours:", "", md(gain.loc[list(NAMES[:5])]), ""]
    pairs = [(d, t) for d, t in (("pbs-fifo", "PBSFifo"), ("pbs-fifo-window", "PBSFifo"),
                                 ("pbs-walltime", "PBSWalltime"),
                                 ("pbs-walltime-window", "PBSWalltime")) if d in ours.columns]
    thesis_raw = pd.DataFrame(THESIS[title]).T
    ratio = pd.DataFrame({f"{d} / {t}": ours[d] / thesis_raw[t] for d, t in pairs})
    return "\n".join([
        f"## {title}", "",
        f"Ours: mean of {seeds} seeds (generator seeds = dispatcher seeds), "
        f"{jobs.min():.0f} jobs run per seed (≤ {rejected} rejected as infeasible). "
        "AO, MO in s; %O in % of the makespan. `pbs-fifo` / `pbs-walltime`: PBS "
        "`backfill_depth` reading (top jobs); `-window`: only the first 10 / 400 queued "
        "jobs looked at.", "",
        md(ours), "", "Thesis:", "", md(thesis), "",
        *gains,
        "Ours / thesis, PBS baselines (1 = same value):", "",
        md(ratio.loc[list(NAMES[:5])]), "",
        "thesis (over PBSFifo):", "", md(gain_thesis.loc[list(NAMES[:5])]), "",
        f"HTML reports: `results/{key}/report/index.html` (CP), "
        f"`results/{key}-pbs/report/index.html` (PBS, EASY).", "",
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
