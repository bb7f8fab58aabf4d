"""The comparison tables: summary per dispatcher, per duration class and per queue."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from dispatchlab.report.format import fmt_metric
from dispatchlab.stats.job_classes import CLASS_LABELS
from dispatchlab.stats.metrics import METRICS

#: Summary metrics shown in the comparison table, in order.
SUMMARY_METRICS = (
    "mean_wait",
    "p90_wait",
    "max_wait",
    "mean_bounded_slowdown",
    "max_bounded_slowdown",
    "utilization",
    "makespan",
    "mean_queue_length",
    "killed",
    "dispatch_time_mean_ms",
)

#: Metrics shown per job group.
GROUP_METRICS = ("jobs", "mean_wait", "p90_wait", "mean_bounded_slowdown")


def summary_table(
    runs: pd.DataFrame, order: Sequence[str], metrics: Sequence[str] = SUMMARY_METRICS
) -> pd.DataFrame:
    """Per dispatcher (rows, in ``order``) the mean of each metric over its runs (seeds)."""
    cols = [m for m in metrics if m in runs]
    table = runs.groupby("dispatcher", sort=False)[cols].mean(numeric_only=True)
    table.insert(0, "runs", runs.groupby("dispatcher", sort=False).size())
    return table.reindex([d for d in order if d in table.index])


def group_table(
    breakdown: pd.DataFrame, kind: str, order: Sequence[str], metrics: Sequence[str] = GROUP_METRICS
) -> pd.DataFrame:
    """Dispatchers × (group, metric), mean over runs; empty when there is no such group."""
    part = breakdown[breakdown["kind"] == kind] if len(breakdown) else breakdown
    if not len(part):
        return pd.DataFrame()
    groups = list(dict.fromkeys(part["group"]))
    names = [d for d in order if d in set(part["dispatcher"])]
    data: dict[tuple[str, str], list[Any]] = {}
    for g in groups:
        rows = part[part["group"] == g].groupby("dispatcher", sort=False)[list(metrics)].mean()
        for m in metrics:
            data[(str(g), m)] = [rows[m].get(d, float("nan")) for d in names]
    wide = pd.DataFrame(data, index=pd.Index(names, name="dispatcher"))
    wide.columns = pd.MultiIndex.from_tuples(list(data))
    return wide


def groups_of(table: pd.DataFrame) -> list[str]:
    """The group names of a :func:`group_table`, in column order."""
    return list(dict.fromkeys(str(col[0]) for col in table.columns))


def group_rows(table: pd.DataFrame, metrics: Sequence[str]) -> list[list[str]]:
    """Per dispatcher of a :func:`group_table`: its name, then each group's ``metrics``
    formatted in their units."""
    groups = groups_of(table)
    return [[str(d), *(fmt_metric(m, row[(g, m)]) for g in groups for m in metrics)]
            for d, row in table.iterrows()]


def best_rows(summary: pd.DataFrame, key: str) -> set[str]:
    """Dispatchers holding the best value of ``key`` (empty when all equal or unknown)."""
    info = METRICS.get(key)
    if info is None or key not in summary or len(summary) < 2:
        return set()
    col = summary[key].astype(float)
    if col.isna().all() or col.nunique() < 2:
        return set()
    target = col.min() if info.lower_is_better else col.max()
    return {str(d) for d, v in col.items() if math.isclose(v, target, rel_tol=1e-12)}


def group_label(kind: str, group: str) -> str:
    """``short (< 1 h)`` for classes, the queue name for queues."""
    return CLASS_LABELS.get(group, group) if kind == "class" else f"queue {group}"
