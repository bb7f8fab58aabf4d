"""Whether a process is still there, by its pid (the one check shared by the output writer's
clean-up of stale temporary copies and the local Slurm/OpenPBS clusters' daemon stops)."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """True while process ``pid`` exists (also when it belongs to another user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: there, but not ours to signal
        return True
    return True
