"""The rule-based family's catalogue record."""

from dispatchlab.dispatchers.family import Family
from dispatchlab.dispatchers.rule_based.presets import (
    SPEC_KEYS,
    canonical_spec,
    entries,
    parse_spec,
)

FAMILY = Family("rule-based", "a queue ordering × a selection scheme (strict, EASY, "
                "conservative, PBS top jobs, power-aware) × an allocator",
                entries, parse_spec, canonical_spec, SPEC_KEYS)
