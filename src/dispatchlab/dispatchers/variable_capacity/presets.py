"""The variable-capacity presets (Robert et al.; docs/variable_capacity.md)."""

from __future__ import annotations

from dispatchlab.dispatchers.family import Entry, preset
from dispatchlab.dispatchers.variable_capacity.first_fit import FirstFitVC
from dispatchlab.dispatchers.variable_capacity.target import TargetVC


def entries() -> list[Entry]:
    """ff-aware, ff-unaware, target-stretch, target-asap, packed-target-asap."""
    return [
        preset("ff-aware", lambda: FirstFitVC(aware=True),
               "variable capacity: first-fit by machine index, riskiest (highest) machines "
               "leave first (Robert et al.)",
               kind=FirstFitVC),
        preset("ff-unaware", lambda: FirstFitVC(aware=False),
               "variable capacity: first-fit by machine index, random machines leave",
               kind=FirstFitVC),
        preset("target-stretch", lambda: TargetVC("stretch"),
               "variable capacity: long jobs on safe machines, per-machine conservative "
               "backfilling, neighbourhood search when the target stretch is missed",
               kind=TargetVC),
        preset("target-asap", lambda: TargetVC("asap"),
               "variable capacity: target machine or nearest neighbour that starts the job "
               "now, else target within the target stretch, else earliest start",
               kind=TargetVC),
        preset("packed-target-asap", lambda: TargetVC("packed"),
               "variable capacity: TargetASAP with targets at the first machine of packs of 5",
               kind=TargetVC),
    ]
