"""The offline-plan family's catalogue record."""

from dispatchlab.dispatchers.family import Family
from dispatchlab.dispatchers.offline_plan.presets import canonical_spec, entries, parse_spec

FAMILY = Family("offline-plan", "profit-driven offline plans per day, replayed online "
                "(thesis ch. 6)", entries, parse_spec, canonical_spec,
                ("offline", "plan"))
