"""The comparison tables: summary per dispatcher, per duration class and per queue."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from dispatchlab.stats.breakdown import CLASS_LABELS

#: Summary metrics shown in the comparison table, in order.
SUMMARY_METRICS = (
    "mean_wait", "p90_wait", "max_wait", "mean_bounded_slowdown", "max_bounded_slowdown",
    "utilization", "makespan", "mean_queue_length", "killed", "dispatch_time_mean_ms",
)

#: Metrics shown per job group.
GROUP_METRICS = ("jobs", "mean_wait", "p90_wait", "mean_bounded_slowdown")


def summary_table(runs: pd.DataFrame, order: Sequence[str],
                  metrics: Sequence[str] = SUMMARY_METRICS) -> pd.DataFrame:
    """Per dispatcher (rows, in ``order``) the mean of each metric over its runs (seeds)."""
    cols = [m for m in metrics if m in runs]
    table = runs.groupby("dispatcher", sort=False)[cols].mean(numeric_only=True)
    table.insert(0, "runs", runs.groupby("dispatcher", sort=False).size())
    return table.reindex([d for d in order if d in table.index])


def group_table(breakdown: pd.DataFrame, kind: str, order: Sequence[str],
                metrics: Sequence[str] = GROUP_METRICS) -> pd.DataFrame:
    """Dispatchers × (group, metric), mean over runs; empty when there is no such group."""
    part = breakdown[breakdown["kind"] == kind] if len(breakdown) else breakdown
    if not len(part):
        return pd.DataFrame()
    table = part.groupby(["dispatcher", "group"], sort=False)[list(metrics)].mean()
    wide = table.unstack("group")
    wide.columns = wide.columns.swaplevel(0, 1)
    groups = list(dict.fromkeys(part["group"]))
    wide = wide.reindex(columns=pd.MultiIndex.from_product([groups, list(metrics)]))
    return wide.reindex([d for d in order if d in wide.index])


def group_label(kind: str, group: str) -> str:
    """``short (< 1 h)`` for classes, the queue name for queues."""
    return CLASS_LABELS.get(group, group) if kind == "class" else f"queue {group}"
