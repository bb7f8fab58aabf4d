"""The variable-capacity family's catalogue record."""

from dispatchlab.dispatchers.family import Family
from dispatchlab.dispatchers.variable_capacity.authors import parse_vc_spec
from dispatchlab.dispatchers.variable_capacity.presets import entries

FAMILY = Family("variable-capacity", "machines that come and go with the power supply "
                "(Robert et al.); vc=NAME,semantics=authors runs the authors' simulator's "
                "rules", entries, parse_vc_spec, spec_keys=("vc",))
