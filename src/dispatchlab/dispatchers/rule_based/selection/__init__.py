"""Selection schemes: strict, non-strict, EASY, conservative and top-jobs (PBS) backfilling."""

from __future__ import annotations

from dispatchlab.dispatchers.rule_based.selection.base import Selection
from dispatchlab.dispatchers.rule_based.selection.conservative import Conservative
from dispatchlab.dispatchers.rule_based.selection.conservative_power import ConservativePower
from dispatchlab.dispatchers.rule_based.selection.easy import Easy
from dispatchlab.dispatchers.rule_based.selection.easy_power import EasyPower
from dispatchlab.dispatchers.rule_based.selection.strict import NonStrict, Strict
from dispatchlab.dispatchers.rule_based.selection.top_jobs import TopJobs
from dispatchlab.errors import ConfigError

SELECTIONS: dict[str, type[Selection]] = {
    "strict": Strict,
    "nonstrict": NonStrict,
    "non-strict": NonStrict,
    "easy": Easy,
    "easy-power": EasyPower,
    "conservative": Conservative,
    "conservative-power": ConservativePower,
    "top-jobs": TopJobs,
}


def get_selection(name: str, depth: int | None = None) -> Selection:
    """A new selection scheme by name, with an optional backfill depth."""
    cls = SELECTIONS.get(name)
    if cls is None:
        known = ", ".join(SELECTIONS)
        raise ConfigError(f"unknown selection '{name}' (known: {known})", field="select")
    if cls is Strict:
        if depth is not None:
            raise ConfigError(
                "strict selection stops at the first job; it has no depth", field="depth"
            )
        return Strict()
    return cls(depth=depth)  # type: ignore[call-arg]


__all__ = [
    "SELECTIONS",
    "Conservative",
    "ConservativePower",
    "Easy",
    "EasyPower",
    "NonStrict",
    "Selection",
    "Strict",
    "TopJobs",
    "get_selection",
]
