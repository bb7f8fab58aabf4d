"""Reading ``key=value`` dispatcher-spec values, shared by the families' spec parsers
(``cp=``, ``dec=``, ``dardis=``, ``offline=``/``plan=``): one conversion with one error
message, and one sorted spelling for run hashes."""

from __future__ import annotations

from typing import Any

from dispatchlab.errors import ConfigError
from dispatchlab.keyvalue import BOOL_WORDS

_NONE = ("none", "auto", "")


def convert_field(key: str, raw: str, kind: Any) -> Any:
    """``raw`` as ``kind``: a type (``int``, ``float``, ``bool``, ``str``) or a dataclass
    field's annotation text (``"int"``, ``"float | None"``, ``"tuple[str, ...]"`` — a
    ``+``-separated tuple); ``none``/``auto`` give ``None`` where the annotation allows."""
    text = kind.__name__ if isinstance(kind, type) else str(kind)
    low = raw.strip().lower()
    if "None" in text and low in _NONE:
        return None
    if text.startswith("bool"):
        if low not in BOOL_WORDS:
            raise ConfigError(f"{key}: '{raw}' is not a yes/no value (1/0, true/false, "
                              "yes/no, on/off)", field=key)
        return BOOL_WORDS[low]
    try:
        if text.startswith("int"):
            return int(raw)
        if text.startswith("float"):
            return float(raw)
    except ValueError:
        raise ConfigError(f"{key}: '{raw}' is not a number ({text})", field=key) from None
    if text.startswith("tuple"):
        return tuple(p for p in raw.split("+") if p)
    return raw.strip()


def sorted_spelling(fields: dict[str, str], head: str) -> str:
    """``head=…`` first, then the other fields by key."""
    rest = sorted(k for k in fields if k != head)
    return ",".join(f"{k}={fields[k]}" for k in (head, *rest))
