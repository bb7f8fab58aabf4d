"""A comparison of dispatchers assembled from stored runs: the tables and the statistics.

The *main* runs (the whole workload, one per dispatcher and seed) feed the summary, the
per-class tables and the time-series figures; the *sets* (trace windows, or seeds when
there are no windows) feed the confidence intervals and the Friedman ranking.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from dispatchlab.experiments.collect import breakdown_table, runs_table
from dispatchlab.experiments.store import RunRecord
from dispatchlab.report.tables import group_table, summary_table
from dispatchlab.stats.ranking import SetStatistics, analyze_sets, drop_repeated_seeds

DEFAULT_STATS_METRICS = ("mean_wait", "mean_bounded_slowdown", "utilization")


@dataclass
class Comparison:
    """Everything the terminal table and the HTML report show."""

    title: str
    order: list[str]
    main: dict[str, RunRecord]
    runs: pd.DataFrame
    breakdown: pd.DataFrame
    summary: pd.DataFrame
    classes: pd.DataFrame
    queues: pd.DataFrame
    stats: SetStatistics | None
    sets_label: str
    context: dict[str, Any] = field(default_factory=dict)
    stats_note: str = ""

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form (``--json`` output and ``compare.json``)."""

        def frame(df: pd.DataFrame) -> list[dict[str, Any]]:
            return [
                {str(k): _plain(v) for k, v in row.items()} for row in df.to_dict(orient="records")
            ]

        def wide(df: pd.DataFrame) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for disp in df.index:
                groups: dict[str, dict[str, Any]] = {}
                for col in df.columns:
                    groups.setdefault(str(col[0]), {})[str(col[1])] = _plain(df.loc[disp, col])
                out[str(disp)] = groups
            return out

        doc: dict[str, Any] = {
            "title": self.title,
            "dispatchers": self.order,
            "summary": {
                str(d): {k: _plain(v) for k, v in row.items()} for d, row in self.summary.iterrows()
            },
            "classes": wide(self.classes) if len(self.classes) else {},
            "queues": wide(self.queues) if len(self.queues) else {},
            "runs": {d: r.key for d, r in self.main.items()},
            "context": self.context,
        }
        if self.stats is not None:
            doc["statistics"] = {
                "sets": self.sets_label,
                "n_sets": self.stats.n_sets,
                "note": self.stats_note,
                "means": frame(self.stats.means),
                "rankings": {m: ranking_json(r) for m, r in self.stats.rankings.items()},
            }
        return doc


def _plain(v: Any) -> Any:
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and v != v:
        return None
    return v


def ranking_json(r: Any) -> dict[str, Any]:
    fr = r.friedman
    return {
        "metric": r.metric,
        "lower_is_better": r.lower_is_better,
        "n_blocks": r.n_blocks,
        "dropped_blocks": r.dropped_blocks,
        "alpha": r.alpha,
        "p_adjust": r.adjust,
        "note": r.note,
        "friedman": None
        if fr is None
        else {
            "chi2": fr.chi2,
            "p_value": fr.p_value,
            "k": fr.k,
            "n": fr.n_blocks,
            "iman_davenport_f": _plain(fr.f),
            "f_p_value": _plain(fr.f_p_value),
            "standard_error": r.standard_error,
        },
        "ranking": [
            {
                "dispatcher": x.name,
                "mean_rank": x.mean_rank,
                "tier": x.tier,
                "better_than": list(x.better_than),
                "worse_than": list(x.worse_than),
            }
            for x in r.rows
        ],
        "pairs": [{k: _plain(v) for k, v in vars(p).items()} for p in r.pairs],
    }


def run_setting(rec: RunRecord) -> tuple[str, str, str, str]:
    """What a run was run on besides its dispatcher and seed: workload, platform, pricing
    scenario and experiment parameters."""
    lab = rec.labels
    return (str(lab.get("workload")), str(lab.get("platform")), str(lab.get("pricing")),
            json.dumps(lab.get("params") or {}, sort_keys=True, default=str))


def build_comparison(
    records: Sequence[RunRecord],
    *,
    title: str,
    order: Sequence[str] | None = None,
    stats_metrics: Sequence[str] = DEFAULT_STATS_METRICS,
    alpha: float = 0.05,
    adjust: str = "holm",
    confidence: float = 0.95,
    context: dict[str, Any] | None = None,
) -> Comparison:
    """Split ``records`` into main runs and sets, and compute every table."""
    main_recs = [r for r in records if r.labels.get("window") is None]
    set_recs = [r for r in records if r.labels.get("window") is not None]
    if not main_recs:
        main_recs = list(records)
    names = list(order) if order else list(dict.fromkeys(r.labels["dispatcher"] for r in main_recs))
    runs = runs_table(main_recs)
    bd = breakdown_table(main_recs)
    main: dict[str, RunRecord] = {}
    ordered = sorted(main_recs, key=lambda r: (r.labels["seed"], run_setting(r)))
    if ordered:  # every dispatcher's run in one setting (workload, cap, pricing…) if it can
        first = run_setting(ordered[0])
        for rec in ordered:
            if run_setting(rec) == first:
                main.setdefault(rec.labels["dispatcher"], rec)
    for rec in ordered:
        main.setdefault(rec.labels["dispatcher"], rec)
    stats = None
    sets_label = ""
    if set_recs:
        set_runs = runs_table(set_recs)
        n_win = int(set_runs["window"].nunique())
        n_seed = int(set_runs["seed"].nunique())
        size = int(set_runs["jobs"].iloc[0])
        sets_label = f"{n_win} consecutive trace windows of {size:,} jobs"
        if n_seed > 1:
            sets_label += f" × {n_seed} seeds"
    else:
        set_runs = runs
        n_seed = int(runs["seed"].nunique()) if len(runs) else 0
        sets_label = f"{n_seed} seeds of the whole workload"
    set_runs, repeated = drop_repeated_seeds(set_runs)
    stats_note = ""
    if repeated:
        stats_note = (
            f"{repeated} set(s) differing only by seed reproduced another seed's results for "
            "every dispatcher (deterministic dispatchers on a fixed workload) and were "
            "counted once; vary the workload (trace windows, a seeded generator) to get "
            "independent sets."
        )
    if len(set_runs) and set_runs["block"].nunique() >= 2:
        stats = analyze_sets(
            set_runs,
            stats_metrics,
            alpha=alpha,
            adjust=adjust,
            confidence=confidence,
            order=names,
        )
        stats.repeated_seeds = repeated
        if stats.repeated_pricing:
            stats_note += (" " if stats_note else "") + (
                "Sets differing only by pricing scenario, with the same values for every "
                "dispatcher (one schedule priced several ways), were counted once for: "
                + ", ".join(f"{m} ({n} fewer)" for m, n in stats.repeated_pricing.items())
                + ".")
        rank = {d: i for i, d in enumerate(names)}
        stats.means = stats.means.sort_values(
            "dispatcher", key=lambda col: col.map(lambda d: rank.get(d, len(rank))), kind="stable"
        ).reset_index(drop=True)
    return Comparison(
        title=title,
        order=names,
        main={d: main[d] for d in names if d in main},
        runs=runs,
        breakdown=bd,
        summary=summary_table(runs, names),
        classes=group_table(bd, "class", names),
        queues=group_table(bd, "queue", names),
        stats=stats,
        sets_label=sets_label,
        stats_note=stats_note,
        context=dict(context or {}),
    )
