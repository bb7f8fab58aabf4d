"""Constraint-programming dispatchers: HCP and PCP, versions 0–3 (Galleguillos et al.).

Attributes are imported lazily so listing presets does not load OR-Tools.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CPConfig", "CPDispatcher", "SearchConfig", "make_estimator"]


def __getattr__(name: str) -> Any:
    if name in ("CPConfig", "SearchConfig"):
        from dispatchlab.dispatchers.cp import config

        return getattr(config, name)
    if name in ("CPDispatcher", "make_estimator"):
        from dispatchlab.dispatchers.cp import dispatcher

        return getattr(dispatcher, name)
    raise AttributeError(name)
