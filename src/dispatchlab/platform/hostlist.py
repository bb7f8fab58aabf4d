"""Slurm host lists: ``n[01-16],gpu[1,3]`` → one name per node (zero padding kept).

The syntax is Slurm's (``slurm.conf(5)``, "NodeName"; ``src/common/hostlist.c``,
``hostlist_create``): comma-separated names, each with bracketed ranges or lists of
numbers; a range keeps the width of its zero-padded lower bound.
"""

from __future__ import annotations

import re

_RANGE = re.compile(r"^([^\[\],]*)\[([^\]]+)\](.*)$")


def expand_hostlist(text: str) -> list[str]:
    """``n[1-3,7],m2`` → ``['n1', 'n2', 'n3', 'n7', 'm2']`` (zero padding kept);
    ``ValueError`` on a malformed range."""
    out: list[str] = []
    for part in _split_top(text):
        m = _RANGE.match(part)
        if not m:
            if "[" in part or "]" in part:
                raise ValueError(f"'{part}' has unbalanced brackets")
            out.append(part)
            continue
        prefix, body, rest = m.groups()
        for item in body.split(","):
            lo, _, hi = item.strip().partition("-")
            if not lo.isdigit() or (hi and not hi.isdigit()):
                raise ValueError(f"'{item}' in '{part}' is not a number or a range a-b")
            if hi and int(hi) < int(lo):
                raise ValueError(f"'{item}' in '{part}' is a decreasing range")
            width = len(lo) if lo.startswith("0") else 0
            for k in range(int(lo), int(hi or lo) + 1):
                for tail in expand_hostlist(rest) if rest else [""]:
                    out.append(f"{prefix}{k:0{width}d}{tail}")
    return out


def _split_top(text: str) -> list[str]:
    """Split at commas outside brackets."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text.strip():
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        depth += (ch == "[") - (ch == "]")
        cur.append(ch)
    parts.append("".join(cur))
    return [p for p in parts if p]
