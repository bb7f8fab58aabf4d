"""DARDIS's catalogue record: DARDIS, its profile-aware rule-based baselines, node
shutdown and the hybrid pipeline of thesis ch. 7."""

from dispatchlab.dispatchers.dardis.presets import entries
from dispatchlab.dispatchers.dardis.spec import canonical_dardis_spec, parse_dardis_spec
from dispatchlab.dispatchers.family import Family

FAMILY = Family("dardis", "distributed randomized dispatching that follows a desired "
                "utilization profile (thesis ch. 5–7)", entries, parse_dardis_spec,
                canonical_dardis_spec, ("dardis",))
