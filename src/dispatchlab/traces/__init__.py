"""The catalogue of real traces, with checksummed downloads and a local cache.

``trace:NAME`` works wherever a trace file path does; see docs/traces.md.
"""

from dispatchlab.traces.catalogue import Trace, TraceFile, all_traces, find_trace
from dispatchlab.traces.errors import TraceChecksumError, TraceDownloadError, TraceError
from dispatchlab.traces.resolve import is_trace_ref, local_copy, resolve, resolve_source

__all__ = [
    "Trace",
    "TraceChecksumError",
    "TraceDownloadError",
    "TraceError",
    "TraceFile",
    "all_traces",
    "find_trace",
    "is_trace_ref",
    "local_copy",
    "resolve",
    "resolve_source",
]
