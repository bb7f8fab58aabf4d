"""Registry presets of the CP dispatchers: ``pcp``, ``pcp1`` … ``hcp3``.

Each version also comes with the other two duration predictors as ``<name>-real`` and
``<name>-heuristic`` (the base name uses the requested wall-time, as the paper's "-W"),
and ``<name>-paper`` runs the paper's wall-clock search control (δ = 1 s, δmax = 16 s,
2 workers; not reproducible bit for bit).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from dispatchlab.dispatchers.cp.config import CP_CAPABILITIES
from dispatchlab.dispatchers.family import Entry, preset

if TYPE_CHECKING:
    from dispatchlab.dispatchers.cp.config import CPConfig
    from dispatchlab.dispatchers.cp.dispatcher import CPDispatcher

_WHAT = {
    0: "original model",
    1: "reduced model + solver-aware restarts",
    2: "v1 + underestimated running jobs kept 1 s",
    3: "v2 + slowdown objective and priority",
}
_KIND = {
    "hcp": "hybrid CP (pooled schedule, best-fit mapper)",
    "pcp": "pure CP (per-node schedule and allocation)",
}


def preset_config(kind: str, version: int, variant: str) -> CPConfig:
    """The configuration of a preset; ``variant``: an estimator name or ``paper``."""
    from dispatchlab.dispatchers.cp.config import CPConfig, SearchConfig

    paper = variant == "paper"
    search = (
        SearchConfig(deterministic=False, delta=1.0, delta_max=16.0, workers=2, wall_limit=16.0)
        if paper
        else SearchConfig()
    )
    estimator = "walltime" if paper else variant
    return CPConfig(kind=kind, version=version, estimator=estimator, search=search)


def _make(kind: str, version: int, estimator: str, paper: bool) -> CPDispatcher:
    """Build a CP dispatcher; OR-Tools is imported only now, not when presets are listed."""
    from dispatchlab.dispatchers.cp.dispatcher import CPDispatcher

    return CPDispatcher(preset_config(kind, version, "paper" if paper else estimator))


def entries() -> list[Entry]:
    """Every CP preset: each version with the three duration predictors and the paper's
    search control."""
    out: list[Entry] = []
    for kind in ("hcp", "pcp"):
        for version in range(4):
            base = kind + (str(version) if version else "")
            what = f"{_KIND[kind]}, v{version}: {_WHAT[version]}"
            out.append(preset(base, partial(_make, kind, version, "walltime", False),
                              f"{what}; wall-time durations", capabilities=CP_CAPABILITIES))
            for est in ("real", "heuristic"):
                out.append(preset(f"{base}-{est}", partial(_make, kind, version, est, False),
                                  f"{what}; {est} durations",
                                  capabilities=replace(CP_CAPABILITIES,
                                                       oracle=est == "real")))
            out.append(preset(f"{base}-paper", partial(_make, kind, version, "walltime", True),
                              f"{what}; paper search control (δ=1 s wall clock, δmax=16 s; "
                              "not reproducible)", capabilities=CP_CAPABILITIES))
    return out
