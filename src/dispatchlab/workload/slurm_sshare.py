"""Reader for Slurm ``sshare --parsable2`` exports: each user's raw fair-share usage.

Export with ``sshare --all --long --parsable2`` (Slurm 22.05 has no ``sshare --json``).
The header names the columns (any order); ``Account``, ``User`` and ``RawUsage`` are
needed. ``RawUsage`` is the association's decayed usage in billing-TRES seconds (CPU
seconds without ``TRESBillingWeights``) at the moment of the export. Account rows (empty
``User``) are skipped; a user with associations in several accounts gets their sum, since
the ``slurm`` family's fair share knows users, not accounts. Indentation of the account
tree (leading spaces in ``Account``) is ignored.
"""

from __future__ import annotations

import math
from pathlib import Path

from dispatchlab.errors import WorkloadError
from dispatchlab.workload.input_file import input_file

NEEDED = ("Account", "User", "RawUsage")


def read_sshare_usage(path: str | Path) -> dict[str, float]:
    """User name → raw usage (summed over the user's associations), from ``path``."""
    p = input_file(path)
    src = str(p)
    lines = p.read_text(errors="replace").splitlines()
    if not lines or not lines[0].strip():
        raise WorkloadError("empty sshare export (write it with sshare --all --long "
                            "--parsable2)", source=src, line=1)
    head = [name.strip() for name in lines[0].split("|")]
    trailing = head[-1] == ""  # --parsable ends every line with a "|"
    if trailing:
        head.pop()
    missing = [name for name in NEEDED if name not in head]
    if missing:
        raise WorkloadError(f"sshare export lacks the {', '.join(missing)} column(s) "
                            "(write it with sshare --all --long --parsable2)", source=src,
                            line=1, field=missing[0])
    where = {name: head.index(name) for name in NEEDED}
    usage: dict[str, float] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split("|")
        if trailing and len(cells) == len(head) + 1 and cells[-1] == "":
            cells.pop()
        if len(cells) != len(head):
            raise WorkloadError(f"{len(cells)} fields where the header has {len(head)}",
                                source=src, line=number)
        user = cells[where["User"]].strip()
        if not user:
            continue  # an account's own row: the sum of its children
        text = cells[where["RawUsage"]].strip()
        try:
            raw = float(text)
        except ValueError:
            raise WorkloadError(f"RawUsage {text!r} is not a number", source=src,
                                line=number, field="RawUsage") from None
        if not math.isfinite(raw) or raw < 0:
            raise WorkloadError(f"RawUsage {text!r} is not a finite usage >= 0",
                                source=src, line=number, field="RawUsage")
        usage[user] = usage.get(user, 0.0) + raw
    return usage
