"""Presets and specs of the offline-plan family.

- ``plan=FILE[,compress=1]`` — replay a plan file;
- ``offline-heuristic`` | ``offline-multi`` | ``offline-relax`` | ``offline-delay`` — plan
  each day with that search and replay (air cooling, cheap prices, the scenario's
  temperature);
- ``offline=SEARCH,chunk=S,duration=runtime|walltime,step=S,cooling=air|hybrid|FILE[:scaled],
  temperature=summer|winter|FILE,prices=cheap|expensive|K1:K2,runs=N,time=S,cpdet=DET,
  delay=SLOTS,compress=0|1,wpc=W,seed=N`` — any setting.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from dispatchlab.dispatchers.base import Dispatcher
from dispatchlab.dispatchers.family import Entry, preset
from dispatchlab.dispatchers.offline_plan.dispatcher import OfflinePlanner, PlanFileDispatcher
from dispatchlab.dispatchers.spec_values import convert_field, sorted_spelling
from dispatchlab.errors import ConfigError

#: Preset → (search, description).
PRESETS = {
    "offline-heuristic": ("heuristic", "plan each day with the job-based heuristic (thesis "
                          "Alg. 5, submission order) and replay it; reads the future"),
    "offline-multi": ("multi", "plan each day with Multi-Search (thesis §6.7.1: 22 orderings "
                      "of Alg. 5, best profit) and replay it; reads the future"),
    "offline-relax": ("relax", "plan each day with Relaxation-Search (thesis §6.7.2: CP-SAT "
                      "from the Multi-Search plan, multi-unit jobs fixed) and replay it"),
    "offline-delay": ("delay", "plan each day with Delay-Search (thesis Alg. 7, 500 delay "
                      "iterations of 1 h) and replay it; reads the future"),
}
#: Defaults of the presets beyond the search (offline-delay: 500 iterations, the
#: dispatcher's default for Delay-Search).
PRESET_OPTIONS: dict[str, dict[str, Any]] = {}

_PLANNER_KEYS = {"offline": "search", "chunk": "chunk", "duration": "duration", "step": "step",
                 "cooling": "cooling", "temperature": "temperature", "prices": "prices",
                 "runs": "runs", "time": "time_s", "cpdet": "cp_det_time", "delay": "delay",
                 "compress": "compress", "wpc": "watts_per_core", "seed": "seed"}
_INTS = {"chunk", "step", "runs", "delay", "seed"}
_FLOATS = {"time_s", "cp_det_time", "watts_per_core"}


def entries() -> list[Entry]:
    """The presets above."""
    return [preset(name, partial(OfflinePlanner, search, name=name,
                                 **PRESET_OPTIONS.get(name, {})), description)
            for name, (search, description) in PRESETS.items()]


def parse_spec(fields: dict[str, str]) -> Dispatcher | None:
    """``plan=FILE,...`` or ``offline=SEARCH,...`` (module doc); ``None`` if not ours."""
    if "plan" in fields:
        if not set(fields) <= {"plan", "compress"}:
            bad = sorted(set(fields) - {"plan", "compress"})
            raise ConfigError(f"plan replay takes plan= and compress=, not {', '.join(bad)}",
                              field=bad[0])
        return PlanFileDispatcher(fields["plan"],
                                  convert_field("compress", fields.get("compress", "0"), bool))
    if "offline" not in fields:
        return None
    unknown = sorted(set(fields) - set(_PLANNER_KEYS))
    if unknown:
        raise ConfigError(f"offline planner: unknown key(s) {', '.join(unknown)} (known: "
                          f"{', '.join(_PLANNER_KEYS)})", field=unknown[0])
    kwargs: dict[str, Any] = {}
    for key, raw in fields.items():
        arg = _PLANNER_KEYS[key]
        kind = int if arg in _INTS else float if arg in _FLOATS else (
            bool if arg == "compress" else str)
        kwargs[arg] = convert_field(key, raw, kind)
    return OfflinePlanner(**kwargs)


def canonical_spec(fields: dict[str, str]) -> str | None:
    """Sorted ``key=value`` spelling (the search first) for run hashes."""
    if "plan" in fields or "offline" in fields:
        head = "plan" if "plan" in fields else "offline"
        return sorted_spelling(fields, head)
    return None

