"""The DARDIS setups of the thesis (§5.3.3–5.3.5) and the profile-aware rule-based
baselines (§5.5), registered as dispatcher presets."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from dispatchlab.dispatchers.base import Dispatcher
from dispatchlab.dispatchers.dardis.dispatcher import Dardis
from dispatchlab.dispatchers.dardis.rule_based import ProfileRuleBased
from dispatchlab.dispatchers.dardis.shutdown import DardisShutdown
from dispatchlab.dispatchers.family import Entry, preset

#: Preset name → (factory, description).
PRESETS: dict[str, tuple[Callable[[], Dispatcher], str]] = {
    "dardis-throughput": (
        partial(Dardis, "first", "min-start", backfill=True, depth=32,
                name="dardis-throughput"),
        "DARDIS Throughput: First starts, Min start, backfilling at terminations (depth 32)"),
    "dardis-profile": (
        partial(Dardis, "uniform", "random", name="dardis-profile"),
        "DARDIS Profile: starts drawn ∝ fitting index, random start and nodes"),
    "dardis-balanced": (
        partial(Dardis, "exponential", "max-probability", name="dardis-balanced"),
        "DARDIS Balanced: exponentially weighted starts, Max probability"),
    "dardis100": (partial(DardisShutdown, 0.0, name="dardis100"),
                  "DARDIS100 % (thesis §7.6): First, Min start, backfilling, 300 s slots, "
                  "no node shutdown"),
    "dardis70": (partial(DardisShutdown, 0.3, name="dardis70"),
                 "DARDIS70 %: as dardis100, switching off 30 % of the nodes the desired "
                 "profile leaves unused"),
    "dardis50": (partial(DardisShutdown, 0.5, name="dardis50"),
                 "DARDIS50 %: as dardis100, switching off 50 % of the unused nodes"),
    "rb-fcfs": (partial(ProfileRuleBased, "est", name="rb-fcfs"),
                "profile-aware rule-based, by earliest start (thesis Alg. 4)"),
    "rb-df": (partial(ProfileRuleBased, "lst", name="rb-df"),
              "profile-aware rule-based, by latest start (deadline first)"),
    "rb-wt": (partial(ProfileRuleBased, "walltime", name="rb-wt"),
              "profile-aware rule-based, by increasing wall-time"),
}


def _hybrid(off_fraction: float, name: str, **params: Any) -> Dispatcher:
    from dispatchlab.dispatchers.hybrid.pipeline import HybridDardis

    return HybridDardis(off_fraction, name=name, **params)


#: The hybrid pipeline of thesis ch. 7 (docs/hybrid.md): daily forecast → offline plan →
#: Alg. 8 profile → DARDIS with node shutdown.
HYBRID: dict[str, tuple[Callable[[], Dispatcher], str]] = {
    f"hybrid-dardis{pct}": (partial(_hybrid, frac, name=f"hybrid-dardis{pct}"),
                            f"hybrid pipeline (thesis ch. 7): daily forecast, offline plan "
                            f"(Alg. 5), Alg. 8 profile, dardis{pct}")
    for pct, frac in ((100, 0.0), (70, 0.3), (50, 0.5))}


def entries() -> list[Entry]:
    """Every preset above (the hybrid class imports pandas: named, not imported)."""
    return ([preset(name, factory, description) for name, (factory, description)
             in PRESETS.items()]
            + [preset(name, factory, description,
                      kind="dispatchlab.dispatchers.hybrid.pipeline:HybridDardis")
               for name, (factory, description) in HYBRID.items()])
