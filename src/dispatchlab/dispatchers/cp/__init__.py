"""Constraint-programming dispatchers: HCP and PCP, versions 0–3 (Galleguillos et al.).

Attributes are imported lazily so listing presets does not load OR-Tools.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dispatchlab.lazy import lazy_exports

if TYPE_CHECKING:
    from dispatchlab.dispatchers.cp.config import CPConfig, SearchConfig
    from dispatchlab.dispatchers.cp.dispatcher import CPDispatcher, make_estimator

__all__ = ["CPConfig", "CPDispatcher", "SearchConfig", "make_estimator"]

__getattr__, __dir__ = lazy_exports(__name__, {
    "CPConfig": "config", "SearchConfig": "config",
    "CPDispatcher": "dispatcher", "make_estimator": "dispatcher",
})
