"""The greedy scheduler's parameter space: the box each parameter lives in and the range
its first values are drawn from, as the paper states it and as the authors' code does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from dispatchlab.arrays import FloatArray
from dispatchlab.dispatchers.malleable.config import param_names

Rule = Literal["paper", "code"]


@dataclass(frozen=True)
class Bounds:
    """Reflection box and initial ranges of each parameter."""

    names: tuple[str, ...]
    lo: FloatArray
    hi: FloatArray
    init_lo: FloatArray
    init_hi: FloatArray


#: (reflection lo, hi, initial lo, hi) per parameter. Paper: weights, scales and the
#: probability in [0, 1], the bias in [−0.5, 0.5], durations from the 362 s that make a
#: power-off pay (the paper gives no upper bound: the code's 100,000 s is used), drawn
#: initially in [362, 4000] s both. Code (``Particle._check_bounds``, ``SchedulerConfig
#: .random``): durations reflected at 260 s and 100,000 s, initial ranges as drawn there.
_PAPER_BOX = {"w_n": (0, 1, 0, 1), "w_alpha": (0, 1, 0, 1), "s_reconfig": (0, 1, 0, 1),
              "w_d": (0, 1, 0, 1), "bias": (-0.5, 0.5, -0.5, 0.5), "w_off": (0, 1, 0, 1),
              "s_off": (0, 1, 0, 1), "t1": (362, 100000, 362, 4000),
              "t2": (362, 100000, 362, 4000), "p_t1": (0, 1, 0, 1)}
_CODE_BOX = {**_PAPER_BOX, "w_n": (0, 1, 0.01, 1), "w_alpha": (0, 1, 0.001, 1),
             "s_reconfig": (0, 1, 0.001, 1), "w_off": (0, 1, 0.01, 1),
             "s_off": (0, 1, 0.001, 1), "t1": (260, 100000, 370, 1200),
             "t2": (260, 100000, 370, 4000), "p_t1": (0, 1, 0.0001, 1)}


def bounds_for(condition: int, style: Rule = "paper") -> Bounds:
    """The box of the 8 or 9 parameters of ``condition``."""
    box = _PAPER_BOX if style == "paper" else _CODE_BOX
    names = param_names(condition)
    rows = np.array([box[n] for n in names], dtype=np.float64)
    return Bounds(names, rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3])
