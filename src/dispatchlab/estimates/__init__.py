"""Duration estimates: what a dispatcher believes a job will run for."""

from dispatchlab.estimates.base import DurationEstimator, OracleEstimate, WalltimeEstimate
from dispatchlab.estimates.registry import estimators, get_estimator, register_estimator

__all__ = [
    "DurationEstimator",
    "OracleEstimate",
    "WalltimeEstimate",
    "estimators",
    "get_estimator",
    "register_estimator",
]
