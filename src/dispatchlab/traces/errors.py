"""Errors of the trace catalogue: each names the trace, the file or address, and what to do."""

from __future__ import annotations

from dispatchlab.errors import DispatchlabError


class TraceError(DispatchlabError):
    """A trace name the catalogue does not know, or a trace that is not available."""


class TraceDownloadError(TraceError):
    """A download failed (HTTP error, host unreachable, connection dropped)."""


class TraceChecksumError(TraceDownloadError):
    """What was downloaded is not the catalogued file (size or SHA-256 differs)."""
