"""How good a duration predictor was: mean absolute error, under/over-estimation rates.

Underestimation (prediction < actual run time) is what hurts planners most; the papers
report it next to the MAE (Galleguillos et al.: wall-time 3.6 % under / 96.3 % over,
heuristic 25.8 % / 53.7 % on Eurora). :class:`TrackedEstimator` wraps any estimator and
records, per job, the first prediction a dispatcher asked for and the run time observed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dispatchlab.engine.state import SystemView
from dispatchlab.estimates.base import DurationEstimator
from dispatchlab.params import Parametrized


def prediction_accuracy(
    actual: Sequence[int] | np.ndarray, predicted: Sequence[int] | np.ndarray
) -> dict[str, float]:
    """MAE (s), mean ratio A = actual/predicted, and the share of under-, over- and exact
    predictions, and of predictions with 0.75 ≤ A ≤ 1.25."""
    a = np.asarray(actual, dtype=np.float64)
    p = np.asarray(predicted, dtype=np.float64)
    if a.shape != p.shape:
        raise ValueError("actual and predicted must have the same length")
    n = len(a)
    if n == 0:
        return {
            "jobs": 0,
            "mae_s": 0.0,
            "under_rate": 0.0,
            "over_rate": 0.0,
            "exact_rate": 0.0,
            "within_25pct": 0.0,
            "mean_ratio": 0.0,
        }
    ratio = a / np.maximum(p, 1.0)
    return {
        "jobs": n,
        "mae_s": float(np.abs(a - p).mean()),
        "under_rate": float((p < a).mean()),
        "over_rate": float((p > a).mean()),
        "exact_rate": float((p == a).mean()),
        "within_25pct": float(((ratio >= 0.75) & (ratio <= 1.25)).mean()),
        "mean_ratio": float(ratio.mean()),
    }


class TrackedEstimator(Parametrized):
    """Delegates to ``inner``; remembers each job's first prediction and its run time.
    Described as ``inner`` is."""

    merged_params = ("inner",)

    def __init__(self, inner: DurationEstimator) -> None:
        self.inner = inner
        self.name = inner.name
        self.oracle = bool(getattr(inner, "oracle", False))
        self.predicted: dict[int, int] = {}
        self.actual: dict[int, int] = {}

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Reset the inner estimator and the records."""
        self.inner.reset(view, rng)
        self.predicted = {}
        self.actual = {}

    def estimate(self, job: int) -> int:
        """The inner estimate (the first one per job is recorded)."""
        value = self.inner.estimate(job)
        self.predicted.setdefault(job, value)
        return value

    def observe(self, job: int, runtime: int) -> None:
        """Record the run time and pass it on."""
        self.actual[job] = runtime
        self.inner.observe(job, runtime)

    def report(self) -> dict[str, float]:
        """Accuracy over the finished jobs that had a prediction."""
        jobs = [j for j in self.actual if j in self.predicted]
        return prediction_accuracy(
            [self.actual[j] for j in jobs], [self.predicted[j] for j in jobs]
        )
