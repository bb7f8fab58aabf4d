"""The decisions of Algorithm 1 as plain functions, shared by the engine dispatcher and the
dedicated job-set simulation (so both decide identically)."""

from __future__ import annotations

import math
from collections.abc import Callable

from dispatchlab.dispatchers.malleable.config import GreedyConfig
from dispatchlab.engine.work import reconfiguration_time


def wants_reconfiguration(cfg: GreedyConfig, n_new: int, n_max: int, alpha: float,
                          data: float) -> bool:
    """Condition 1, 2 or 3 of §4.2.1 for growing a job to ``n_new`` servers (condition 0:
    always)."""
    c = cfg.condition
    if c == 0:
        return True
    base = (n_new / n_max) ** cfg.w_n * alpha ** cfg.w_alpha
    if c == 1:
        return base * cfg.s_reconfig > 0.5
    if c == 2:
        return base * (data / cfg.data_max) ** cfg.w_d * cfg.s_reconfig > 0.5
    return math.tanh(base * (data / cfg.data_max) ** cfg.w_d + cfg.bias) > 0.5


def wants_power_off(cfg: GreedyConfig, n_available: int, n_total: int) -> bool:
    """The power-off condition of §4.2.2 (always true without the decision process)."""
    if not cfg.decide_poweroff:
        return True
    # written as the authors' code tests it (``not 0.5 > x``): identical but for x == 0.5
    return not (n_available / n_total) ** cfg.w_off * cfg.s_off < 0.5


def power_off_duration(cfg: GreedyConfig, draw: Callable[[], float]) -> float:
    """``t1`` with probability ``p_t1``, else ``t2`` (one ``draw()`` in [0, 1) with the
    decision process; ``t1`` without it, drawing nothing)."""
    if not cfg.decide_poweroff:
        return cfg.t1
    return cfg.t1 if draw() < cfg.p_t1 else cfg.t2


def code_reconfiguration_time(data: float, n: int, m: int) -> float:
    """The authors' code: ``D / max(n, m) · floor(max(n, m) / min(n, m))`` (it differs from
    eq. 3 when one count divides the other)."""
    hi, lo = max(n, m), min(n, m)
    return data / hi * math.floor(hi / lo)


def paper_reconfiguration_time(data: float, n: int, m: int) -> float:
    """Eq. 3 of the paper (the engine's work model, not rounded)."""
    return reconfiguration_time(data, n, m)
