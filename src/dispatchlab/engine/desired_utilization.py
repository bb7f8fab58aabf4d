"""The desired utilization profile as dispatchers see it: a share (0–1) of each resource
over time, read from the announced part of the scenario (``desired_utilization`` rows;
target ``""`` or ``cores`` means cores). A resource without rows has share 1 (no wish
beyond capacity)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.engine.scenario import Scenario

KIND = "desired_utilization"


def desired_steps(scenario: Scenario | None, resource: str) -> tuple[IntArray, FloatArray]:
    """Change times and shares of the desired profile of ``resource`` (empty: none)."""
    if scenario is None:
        return np.zeros(0, np.int64), np.zeros(0)
    times, values = scenario.steps(KIND, resource)
    if resource == "cores":
        t0, v0 = scenario.steps(KIND, "")
        if len(t0):
            order = np.argsort(np.concatenate([t0, times]), kind="stable")
            times = np.concatenate([t0, times])[order]
            values = np.concatenate([v0, values])[order]
    return times, values


def desired_profiles(scenario: Scenario | None, resources: Sequence[str]
                     ) -> dict[str, tuple[IntArray, FloatArray]]:
    """Each of ``resources`` that has a desired profile: its change times and shares."""
    steps = {r: desired_steps(scenario, r) for r in resources}
    return {r: s for r, s in steps.items() if len(s[0])}
