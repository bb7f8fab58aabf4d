"""A dispatcher's view on which every job of a workload has been submitted (for tests that
drive parts — estimators, orderings, allocators — without the engine)."""

from __future__ import annotations

import numpy as np

from dispatchlab import Platform, Workload
from dispatchlab.engine.simulator import map_requests
from dispatchlab.engine.state import SystemView


def known_view(wl: Workload, plat: Platform | None = None) -> SystemView:
    """``wl`` on ``plat`` (default: one 1-core node per job), every job known."""
    plat = plat or Platform.homogeneous(max(wl.n_jobs, 1), {"cores": 1})
    view = SystemView(wl, plat, map_requests(wl, plat))
    view._advance(wl.n_jobs)
    return view


RNG = np.random.default_rng(0)
