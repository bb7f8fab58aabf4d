"""The core's outcome codes and its "never" time (no Numba needed to read them)."""

from __future__ import annotations

#: Run outcomes (the record's ``status``): done; the general loop must run (to raise its
#: own error: a queue stuck for good, an idle machine waiting too long); the slot
#: accounting broke.
DONE, FALLBACK, BROKEN = 0, 1, 2
#: A time that never comes.
NEVER = 1 << 62
