"""A section per family of results, shown only when the runs have its data: energy and
power, variable capacity, desired profiles (DARDIS / hybrid), profit per pricing
scenario, malleable jobs, and the dispatchers' own statistics (CP solver, …)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from dispatchlab.report.analysis import Comparison
from dispatchlab.report.figures import RunView
from dispatchlab.report.web.families.capacity import capacity_section
from dispatchlab.report.web.families.common import Family
from dispatchlab.report.web.families.energy import energy_section
from dispatchlab.report.web.families.malleable import malleable_section
from dispatchlab.report.web.families.profile import profile_section
from dispatchlab.report.web.families.profit import profit_section
from dispatchlab.report.web.families.solver import solver_section

FAMILIES: tuple[Callable[[Comparison, Sequence[RunView], dict[str, str]], Family | None], ...] = (
    energy_section,
    capacity_section,
    profile_section,
    profit_section,
    malleable_section,
    solver_section,
)


def family_sections(cmp: Comparison, views: Sequence[RunView],
                    colors: dict[str, str]) -> list[Family]:
    """The sections of every family the runs have data for."""
    out = []
    for build in FAMILIES:
        got = build(cmp, views, colors)
        if got is not None:
            out.append(got)
    return out
