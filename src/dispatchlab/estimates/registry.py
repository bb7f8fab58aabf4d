"""Duration estimators by name, shared by dispatcher specs and experiment configs."""

from __future__ import annotations

from collections.abc import Callable

from dispatchlab.errors import ConfigError
from dispatchlab.estimates.base import DurationEstimator, OracleEstimate, WalltimeEstimate
from dispatchlab.estimates.heuristic import HeuristicEstimate
from dispatchlab.estimates.user_ratio import UserRatioEstimate

_ESTIMATORS: dict[str, Callable[[], DurationEstimator]] = {
    "walltime": WalltimeEstimate,
    "wall": WalltimeEstimate,
    "requested": WalltimeEstimate,
    "real": OracleEstimate,
    "oracle": OracleEstimate,
    "heuristic": HeuristicEstimate,
    "heuristic-request": lambda: HeuristicEstimate(key="request"),
    "user-ratio": UserRatioEstimate,
}


def register_estimator(name: str, factory: Callable[[], DurationEstimator]) -> None:
    """Make ``factory`` available as ``estimate=<name>`` (re-registering replaces it)."""
    _ESTIMATORS[name] = factory


def estimators() -> list[str]:
    """Registered estimator names."""
    return sorted(_ESTIMATORS)


def get_estimator(name: str) -> DurationEstimator:
    """A new estimator by name: ``walltime`` (requested time), ``real``/``oracle`` (actual
    run time), ``heuristic`` (user/executable history, learned online) or
    ``heuristic-request`` (history per queue, wall-time and request) or ``user-ratio``
    (the limit × the run-time/limit ratio of the user's last two jobs)."""
    try:
        return _ESTIMATORS[name]()
    except KeyError:
        known = ", ".join(sorted(_ESTIMATORS))
        raise ConfigError(
            f"unknown duration estimate '{name}' (known: {known})", field="estimate"
        ) from None
