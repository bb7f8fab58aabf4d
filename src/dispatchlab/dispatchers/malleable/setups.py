"""The ten setups of Mejri et al. §5.4 as configurations, and their dispatcher presets.

FIFO, FIFO-Rcfg, FIFO-Poff (900 s), FIFO-Rcfg-Poff (900 s), Rand-Param1–3 (conditions 1–3
with parameters drawn once, seeded, from the PSO's initial ranges) and Swarm1–3 (conditions
1–3 with trained parameters: by default the paper's Table 4).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import partial

import numpy as np

from dispatchlab.dispatchers.family import Entry, preset
from dispatchlab.dispatchers.malleable.config import (
    PAPER,
    GreedyConfig,
    Semantics,
    param_names,
)

SETUPS = ("FIFO", "FIFO-Rcfg", "FIFO-Poff", "FIFO-Rcfg-Poff", "Rand-Param1", "Rand-Param2",
          "Rand-Param3", "Swarm1", "Swarm2", "Swarm3")

#: Table 4 of the paper: the parameters each trained swarm found.
TABLE4: dict[int, dict[str, float]] = {
    1: {"w_n": 0.175, "w_alpha": 0.742, "s_reconfig": 0.331, "w_off": 0.455, "s_off": 0.760,
        "t1": 899.0, "t2": 1405.0, "p_t1": 0.717},
    2: {"w_n": 0.348, "w_alpha": 0.833, "s_reconfig": 0.579, "w_d": 0.730, "w_off": 0.516,
        "s_off": 0.814, "t1": 528.0, "t2": 2962.0, "p_t1": 0.959},
    3: {"w_n": 0.529, "w_alpha": 0.645, "w_d": 0.289, "bias": -0.106, "w_off": 0.494,
        "s_off": 0.813, "t1": 632.0, "t2": 1233.0, "p_t1": 0.615},
}

#: Seed of the Rand-Param draws (documented so the setups are reproducible).
RAND_SEED = 2020


def decided(condition: int, params: Mapping[str, float], semantics: Semantics = PAPER,
            data_max: float = 500.0) -> GreedyConfig:
    """Reconfigurations under ``condition`` and decided power-offs with ``params``."""
    return GreedyConfig(reconfigure=True, power_off=True, condition=condition,
                        decide_poweroff=True, data_max=data_max, semantics=semantics,
                        **dict(params))


def random_params(condition: int, rng: np.random.Generator) -> dict[str, float]:
    """Parameters drawn from the PSO's initial ranges (:mod:`.pso`)."""
    from dispatchlab.dispatchers.malleable.bounds import bounds_for

    b = bounds_for(condition, "paper")
    values = rng.uniform(b.init_lo, b.init_hi)
    return dict(zip(param_names(condition), values.tolist(), strict=True))


def setup_configs(semantics: Semantics = PAPER, *, data_max: float = 500.0,
                  swarms: Mapping[int, Mapping[str, float]] | None = None,
                  rand_seed: int = RAND_SEED, poweroff_s: float = 900.0
                  ) -> dict[str, GreedyConfig]:
    """The ten setups; ``swarms`` replaces Table 4 (e.g. parameters trained here)."""
    base = GreedyConfig(data_max=data_max, semantics=semantics, t1=poweroff_s, t2=poweroff_s)
    out = {
        "FIFO": base,
        "FIFO-Rcfg": replace(base, reconfigure=True),
        "FIFO-Poff": replace(base, power_off=True),
        "FIFO-Rcfg-Poff": replace(base, reconfigure=True, power_off=True),
    }
    rng = np.random.default_rng(rand_seed)
    for c in (1, 2, 3):
        out[f"Rand-Param{c}"] = decided(c, random_params(c, rng), semantics, data_max)
    trained = swarms or TABLE4
    for c in (1, 2, 3):
        out[f"Swarm{c}"] = decided(c, trained[c], semantics, data_max)
    return out


def entries() -> list[Entry]:
    """Dispatcher presets ``mejri-fifo`` … ``mejri-swarm3`` (paper semantics, Table 4)."""
    from dispatchlab.dispatchers.malleable.greedy import MalleableGreedy

    out = []
    for name, cfg in setup_configs().items():
        key = "mejri-" + name.lower().replace("rand-param", "rand")
        out.append(preset(key, partial(MalleableGreedy, cfg, key),
                          f"Mejri et al. greedy scheduler, setup {name} (malleable jobs, "
                          "power-offs)"))
    return out
