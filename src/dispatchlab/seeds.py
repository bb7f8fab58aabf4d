"""The one check of a seed, wherever a run takes one (``--seed``, a dispatcher's or a
generator's ``seed=``): numpy's generators take whole numbers ≥ 0 only."""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.errors import ConfigError, WorkloadError


def check_seed(value: Any, field: str = "seed",
               error: type[ConfigError] | type[WorkloadError] = ConfigError) -> int:
    """``value`` as an ``int``; ``error`` naming ``field`` when it is not a whole number
    ≥ 0."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise error(f"a seed is a whole number ≥ 0, got {value!r}", field=field)
    return int(value)
