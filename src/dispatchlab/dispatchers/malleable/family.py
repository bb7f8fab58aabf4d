"""The malleable family's catalogue record."""

from dispatchlab.dispatchers.family import Family
from dispatchlab.dispatchers.malleable.setups import entries

FAMILY = Family("malleable", "malleable jobs with reconfigurations and server power-offs "
                "(Mejri et al.)", entries)
