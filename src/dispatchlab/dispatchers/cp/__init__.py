"""Constraint-programming dispatchers: HCP and PCP, versions 0–3 (Galleguillos et al.)."""

from dispatchlab.dispatchers.cp.config import CPConfig, SearchConfig
from dispatchlab.dispatchers.cp.dispatcher import CPDispatcher, make_estimator

__all__ = ["CPConfig", "CPDispatcher", "SearchConfig", "make_estimator"]
