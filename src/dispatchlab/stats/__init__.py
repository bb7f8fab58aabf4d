"""Statistics over many runs: confidence intervals, Friedman ranking, per-class breakdowns.

Names are imported on first use, so worker processes that only need the breakdown do not
pay for importing SciPy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dispatchlab.lazy import lazy_exports

if TYPE_CHECKING:
    from dispatchlab.stats.ci import MeanCI, mean_ci, summarize_runs
    from dispatchlab.stats.job_classes import breakdown, job_class
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

_WHERE = {
    "breakdown": "job_classes",
    "job_class": "job_classes",
    "MeanCI": "ci",
    "mean_ci": "ci",
    "summarize_runs": "ci",
    "METRICS": "metrics",
    "MetricInfo": "metrics",
    "metric_info": "metrics",
    "FriedmanResult": "ranking",
    "Pair": "ranking",
    "Ranking": "ranking",
    "RankRow": "ranking",
    "SetStatistics": "ranking",
    "analyze_sets": "ranking",
    "compare_on_metric": "ranking",
    "friedman": "ranking",
    "posthoc": "ranking",
    "rank_blocks": "ranking",
    "standard_error": "ranking",
}

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


__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
