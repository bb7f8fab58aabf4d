"""The real trace slice shipped inside the package, for demos, examples and quick tries.

It is the first 5,000 jobs of the cleaned KTH SP2 log of the Parallel Workloads Archive
(``KTH-SP2-1996-2.1-cln.swf``), so it needs neither a download nor the trace cache. Its
machine is 100 single-processor nodes (the log's ``MaxNodes`` and ``MaxProcs``).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

#: The bundled slice's file name (in ``dispatchlab/data/traces``).
SAMPLE_TRACE = "KTH-SP2-1996-2.1-cln.slice.swf.gz"

#: The platform spec of the slice's machine, the KTH IBM SP2.
SAMPLE_PLATFORM = "nodes=100,cores=1"


def sample_trace() -> Path:
    """Path of the bundled KTH SP2 slice (an SWF file, gzip-compressed)."""
    return Path(str(resources.files("dispatchlab") / "data" / "traces" / SAMPLE_TRACE))
