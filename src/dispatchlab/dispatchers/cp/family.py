"""The CP family's catalogue record (PCP and HCP, versions 0–3)."""

from dispatchlab.dispatchers.cp.presets import entries
from dispatchlab.dispatchers.cp.spec import canonical_cp_spec, parse_cp_spec
from dispatchlab.dispatchers.family import Family

FAMILY = Family("cp", "constraint-programming dispatchers solved with CP-SAT at every "
                "event (Galleguillos et al.)", entries, parse_cp_spec, canonical_cp_spec,
                ("cp",))
