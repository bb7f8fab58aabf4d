"""DEC's catalogue record."""

from dispatchlab.dispatchers.dec.presets import entries
from dispatchlab.dispatchers.dec.spec import canonical_dec_spec, parse_dec_spec
from dispatchlab.dispatchers.family import Family

FAMILY = Family("dec", "power capping with a relaxed CP schedule and a node mapper "
                "(Borghesi et al. 2015)", entries, parse_dec_spec, canonical_dec_spec,
                ("dec",))
