"""Duration estimates: what a dispatcher believes a job will run for."""

from dispatchlab.estimates.base import DurationEstimator, OracleEstimate, WalltimeEstimate

__all__ = ["DurationEstimator", "OracleEstimate", "WalltimeEstimate"]
