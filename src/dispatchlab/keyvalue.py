"""The one reader of ``key=value,key=value`` text (platform ``nodes=128,cores=16``, generator
``gen:eurora-like:jobs=330,seed=3``, scenario ``gen:constant:value=1``, dispatcher
``order=fifo,select=easy``) and the value conversions the spec readers share.

Errors name the offending item: the malformed part, or the key given twice.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import TypeVar

from dispatchlab.errors import ConfigError, DispatchlabError

T = TypeVar("T")

#: Makes the error a reader raises: ``(message, field=...)``, as ConfigError and WorkloadError.
ErrorType = Callable[..., DispatchlabError]

#: The spellings of yes and no every spec accepts.
BOOL_WORDS = {"true": True, "yes": True, "1": True, "on": True,
              "false": False, "no": False, "0": False, "off": False}


def split_key_values(text: str, *, field: str, context: str = "",
                     error: ErrorType = ConfigError, separators: str = ",",
                     skip_empty: bool = True,
                     key: Callable[[str], str] = str.strip) -> dict[str, str]:
    """``k=v,k=v`` as ``{k: v}`` (keys through ``key``, values stripped), in order given.

    ``separators`` are the characters between items; an empty item is skipped when
    ``skip_empty``, an error otherwise. A part without ``=`` or with an empty key is an
    ``error`` with ``field``; a key given twice (after ``key``) an ``error`` naming the key.
    ``context`` prefixes every message (e.g. ``"scenario 'gen:constant:...': "``).
    """
    out: dict[str, str] = {}
    for part in re.split(f"[{re.escape(separators)}]", text):
        if skip_empty and not part.strip():
            continue
        name, sep, value = part.partition("=")
        name = key(name.strip())
        if not sep or not name:
            raise error(f"{context}expected key=value, got '{part.strip()}'", field=field)
        if name in out:
            raise error(f"{context}key '{name}' given twice", field=name)
        out[name] = value.strip()
    return out


def parse_int(text: str) -> int:
    """A whole number (``330``, ``-1``); ValueError otherwise."""
    try:
        return int(text)
    except ValueError:
        raise ValueError("expected a whole number") from None


def parse_float(text: str) -> float:
    """A finite number (``0.89``, ``1e-3``; not ``nan`` or ``inf``); ValueError otherwise."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError("expected a number") from None
    if not math.isfinite(value):
        raise ValueError("expected a finite number")
    return value


def parse_bool(text: str) -> bool:
    """``true/false``, ``yes/no``, ``1/0``, ``on/off`` (any case); ValueError otherwise."""
    try:
        return BOOL_WORDS[text.strip().lower()]
    except KeyError:
        raise ValueError("expected true or false (yes/no, 1/0, on/off)") from None


def parses(parser: Callable[[str], object], text: str) -> bool:
    """Whether ``parser(text)`` succeeds (``parses(float, "1e3")``, ``parses(int, "x")``)."""
    try:
        parser(text)
    except ValueError:
        return False
    return True


def convert(key: str, text: str, parser: Callable[[str], T], *, context: str = "",
            error: ErrorType = ConfigError) -> T:
    """``parser(text)``; its ValueError/TypeError becomes an ``error`` naming ``key``."""
    try:
        return parser(text)
    except (ValueError, TypeError) as exc:
        raise error(f"{context}bad value {text!r}: {exc}", field=key) from None
