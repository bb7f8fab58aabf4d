"""Slurm's marker values in the numbers of its JSON (``squeue``, ``sinfo``, ``sacct --json``).

Slurm stores "unlimited" and "not set" inside unsigned integers: ``INFINITE``
(0xFFFFFFFF) and ``NO_VAL`` (0xFFFFFFFE), and their 64-bit forms for 64-bit fields
(TRES counts). The data parser of Slurm 21–22 writes them as plain numbers
(``"limit": 4294967295``); from 23.02 a number is an object
``{"set": …, "infinite": …, "number": …}``. :func:`slurm_number` reads both shapes.

No dependencies: the live adapter imports it without pandas or pyarrow.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: "Unlimited" in a 32-bit field (``INFINITE``) and in a 64-bit one (``INFINITE64``).
INFINITE = 0xFFFFFFFF
INFINITE64 = 0xFFFFFFFFFFFFFFFF
#: "Not set" in a 32-bit field (``NO_VAL``) and in a 64-bit one (``NO_VAL64``).
NO_VAL = 0xFFFFFFFE
NO_VAL64 = 0xFFFFFFFFFFFFFFFE

_INFINITE = frozenset({INFINITE, INFINITE64})
_NO_VAL = frozenset({NO_VAL, NO_VAL64})
_INF = float("inf")


def slurm_number(value: Any) -> Any:
    """``float("inf")`` when ``value`` means unlimited, ``None`` when it means not set
    (or is null), else the number itself — or, when it is no number, ``value`` unchanged
    for the caller to reject with its own error.

    Plain numbers (Slurm 21–22) are compared with the markers; an object's ``infinite``
    and ``set`` flags decide first, and its ``number`` is compared with the markers too.
    """
    if type(value) is dict or isinstance(value, Mapping):  # hot in the live adapter
        if value.get("infinite"):
            return _INF
        if not value.get("set", True):
            return None
        value = value.get("number")
    if type(value) is int and value < NO_VAL:  # the usual case, quickly
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value in _INFINITE:
            return _INF
        if value in _NO_VAL:
            return None
    return value
