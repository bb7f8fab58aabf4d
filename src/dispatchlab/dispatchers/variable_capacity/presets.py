"""The variable-capacity presets (Robert et al.; docs/variable_capacity.md)."""

from __future__ import annotations

from dispatchlab.dispatchers.registry import register, register_spec_parser
from dispatchlab.dispatchers.variable_capacity.authors import parse_vc_spec
from dispatchlab.dispatchers.variable_capacity.first_fit import FirstFitVC
from dispatchlab.dispatchers.variable_capacity.target import TargetVC


def register_presets() -> None:
    """Register ff-aware, ff-unaware, target-stretch, target-asap, packed-target-asap."""
    register("ff-aware", lambda: FirstFitVC(aware=True),
             "variable capacity: first-fit by machine index, riskiest (highest) machines "
             "leave first (Robert et al.)",
             family="variable-capacity", kind=FirstFitVC)
    register("ff-unaware", lambda: FirstFitVC(aware=False),
             "variable capacity: first-fit by machine index, random machines leave",
             family="variable-capacity", kind=FirstFitVC)
    register("target-stretch", lambda: TargetVC("stretch"),
             "variable capacity: long jobs on safe machines, per-machine conservative "
             "backfilling, neighbourhood search when the target stretch is missed",
             family="variable-capacity", kind=TargetVC)
    register("target-asap", lambda: TargetVC("asap"),
             "variable capacity: target machine or nearest neighbour that starts the job "
             "now, else target within the target stretch, else earliest start",
             family="variable-capacity", kind=TargetVC)
    register("packed-target-asap", lambda: TargetVC("packed"),
             "variable capacity: TargetASAP with targets at the first machine of packs of 5",
             family="variable-capacity", kind=TargetVC)
    register_spec_parser(parse_vc_spec)  # vc=NAME[,semantics=slides|authors,…]
