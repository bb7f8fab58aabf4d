"""Compact JSON for figure data embedded in the page: numpy arrays as rounded lists,
NaN and infinities as ``null``, ``</`` escaped so the JSON can sit inside ``<script>``."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np


def rounded(values: Any, digits: int = 4) -> list[Any]:
    """A list of floats with ``digits`` significant digits (NaN → None)."""
    arr = np.asarray(values, dtype=np.float64)
    out: list[Any] = []
    for v in arr.tolist():
        if not math.isfinite(v):
            out.append(None)
        elif v.is_integer() and abs(v) < 1e15:
            out.append(int(v))
        else:
            out.append(float(f"{v:.{digits}g}"))
    return out


def _plain(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "fiu":
            return rounded(obj)
        return [_plain(v) for v in obj.tolist()]
    if isinstance(obj, np.generic):
        return _plain(obj.item())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def script_json(obj: Any) -> str:
    """``obj`` as JSON safe to embed in a ``<script>`` element."""
    text = json.dumps(_plain(obj), separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.replace("</", "<\\/").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
