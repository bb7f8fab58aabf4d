"""Statistics over many runs: confidence intervals, Friedman ranking, per-class breakdowns."""

from dispatchlab.stats.breakdown import breakdown, job_class
from dispatchlab.stats.ci import MeanCI, mean_ci, summarize_runs
from dispatchlab.stats.metrics import METRICS, MetricInfo, metric_info
from dispatchlab.stats.ranking import (
    FriedmanResult,
    Pair,
    Ranking,
    RankRow,
    SetStatistics,
    analyze_sets,
    compare_on_metric,
    friedman,
    posthoc,
    rank_blocks,
    standard_error,
)

__all__ = [
    "METRICS",
    "FriedmanResult",
    "MeanCI",
    "MetricInfo",
    "Pair",
    "RankRow",
    "Ranking",
    "SetStatistics",
    "analyze_sets",
    "breakdown",
    "compare_on_metric",
    "friedman",
    "job_class",
    "mean_ci",
    "metric_info",
    "posthoc",
    "rank_blocks",
    "standard_error",
    "summarize_runs",
]
