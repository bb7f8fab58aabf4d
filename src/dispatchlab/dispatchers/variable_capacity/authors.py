"""Run the ``authors`` semantics on the authors' files (job file, variation file,
quantile file): :func:`simulate_authors`; its dispatcher spec ``vc=NAME,semantics=authors``
(:class:`AuthorsVC`, :func:`parse_vc_spec`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from dispatchlab.dispatchers.base import BaseDispatcher, Dispatcher
from dispatchlab.dispatchers.variable_capacity.authors_sim import (
    STRATEGIES,
    AuthorsResult,
    AuthorsSetup,
    simulate_rows,
)
from dispatchlab.dispatchers.variable_capacity.common import CAPABILITIES, WITH_FAMILY
from dispatchlab.dispatchers.variable_capacity.presets import entries
from dispatchlab.engine.capacity import read_variation_rows
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError
from dispatchlab.params import Attributes
from dispatchlab.seeds import check_seed
from dispatchlab.workload.vc_authors import (
    AuthorsJobs,
    authors_quantiles,
    read_authors_jobs,
    read_quantiles,
)


def simulate_authors(jobs: AuthorsJobs | str | Path, variation: str | Path,
                     setup: AuthorsSetup, quantiles: str | Path | list[int] | None = None
                     ) -> AuthorsResult:
    """One run of the authors' simulator's rules. ``quantiles``: a quantile file or list
    (``None``: what ``genData.py`` makes of the job file itself; the first-fit pair reads
    none)."""
    rows = jobs if isinstance(jobs, AuthorsJobs) else read_authors_jobs(jobs)
    initial, changes = read_variation_rows(variation)
    if setup.strategy.startswith("ff-"):
        q: list[int] = []
    elif quantiles is None:
        q = authors_quantiles(rows)
    elif isinstance(quantiles, list):
        q = quantiles
    else:
        q = read_quantiles(quantiles)
    return simulate_rows(rows.names, rows.release, rows.length, rows.cores, initial, changes,
                         q, setup)


#: How the authors' semantics is run (it has its own simulation, not the engine's loop).
RUN_AUTHORS = ("`dispatchlab simulate -w JOBFILE --scenario VARFILE --window-start S --window W "
               "-d vc=…,semantics=authors` (or "
               "dispatchers.variable_capacity.authors.simulate_authors)")


class AuthorsVC(BaseDispatcher):
    """A variable-capacity strategy with the ``authors`` semantics
    (``vc=NAME,semantics=authors[,quantiles=FILE,safe=16,neighbourhood=11,util_low=0.8,
    util_high=0.95,clock_seed=S]``). It runs in its own simulation, on the authors' job and
    variation files (``dispatchlab simulate`` does it), not in the engine: see
    :mod:`.authors_sim`."""

    capabilities = replace(CAPABILITIES, own_simulator=RUN_AUTHORS)
    semantics = "authors"
    described_attributes: ClassVar[Attributes] = {**WITH_FAMILY, "semantics": "semantics"}

    def __init__(self, strategy: str, quantiles: str | None = None, safe: int = 16,
                 neighbourhood: int = 11, util_low: float = 0.80, util_high: float = 0.95,
                 clock_seed: int | None = None):
        strategy = ALIASES.get(strategy, strategy)
        if strategy not in STRATEGIES:
            raise ConfigError(f"unknown variable-capacity strategy '{strategy}' (known: "
                              f"{', '.join(STRATEGIES)})", field="vc")
        if clock_seed is not None:
            check_seed(clock_seed, "clock_seed")
        if safe < 0 or neighbourhood < 0:
            name, value = ("safe", safe) if safe < 0 else ("neighbourhood", neighbourhood)
            raise ConfigError(f"{name}={value}: must be ≥ 0", field=name)
        for key, share in (("util_low", util_low), ("util_high", util_high)):
            if not 0 <= share <= 1:
                raise ConfigError(f"{key}={share}: must be within [0, 1]", field=key)
        if util_low > util_high:
            raise ConfigError(f"util_low={util_low} exceeds util_high={util_high}",
                              field="util_low")
        self.strategy = strategy
        self.quantiles = quantiles
        self.safe = safe
        self.neighbourhood = neighbourhood
        self.util_low = util_low
        self.util_high = util_high
        self.clock_seed = clock_seed  # ff-unaware: the order of their srand(this) shuffle
        self.name = f"{strategy}[authors]"

    def setup(self, start: int, window: int, machines: int, cores: int,
              metrics_from: int | None = None, seed: int = 0) -> AuthorsSetup:
        """The kernel's set-up for one run."""
        return AuthorsSetup(self.strategy, start, window, machines=machines, cores=cores,
                            safe=self.safe, neighbourhood=self.neighbourhood,
                            util_low=self.util_low, util_high=self.util_high,
                            metrics_from=metrics_from, seed=seed,
                            clock_seed=self.clock_seed)

    def reset(self, view: SystemView, rng: np.random.Generator) -> None:
        """Not an engine dispatcher (``simulate()`` refuses it before the run; this guards
        a :class:`Simulator` built by hand): say where it runs."""
        raise ConfigError(f"{self.name} runs in the authors' simulation, not in the engine: "
                          f"{RUN_AUTHORS}", field="semantics")


#: spellings of the strategies in specs
ALIASES = {"packed": "packed-target-asap", "ff": "ff-aware"}
SEMANTICS = ("slides", "authors")


def parse_vc_spec(fields: dict[str, str]) -> Dispatcher | None:
    """``vc=NAME[,semantics=slides|authors][,…]`` (``None``: not this family's keys)."""
    if "vc" not in fields:
        return None
    sem = fields.get("semantics", "slides")
    if sem not in SEMANTICS:
        raise ConfigError(f"unknown semantics '{sem}' (known: {', '.join(SEMANTICS)})",
                          field="semantics")
    name = ALIASES.get(fields["vc"], fields["vc"])
    rest = {k: v for k, v in fields.items() if k not in ("vc", "semantics")}
    if sem == "slides":
        if rest:
            raise ConfigError(f"vc=…,semantics=slides takes no other key (got "
                              f"{', '.join(rest)}); the preset is '{name}'", field=next(iter(rest)))
        if name not in STRATEGIES:
            raise ConfigError(f"unknown variable-capacity strategy '{name}' (known: "
                              f"{', '.join(STRATEGIES)})", field="vc")
        return {e.name: e for e in entries()}[name].factory()
    known = {"quantiles": str, "safe": int, "neighbourhood": int, "util_low": float,
             "util_high": float, "clock_seed": int}
    kwargs: dict[str, Any] = {}
    for k, v in rest.items():
        if k not in known:
            raise ConfigError(f"unknown key '{k}' for vc=…,semantics=authors (known: "
                              f"{', '.join(known)})", field=k)
        try:
            kwargs[k] = known[k](v)
        except ValueError:
            raise ConfigError(f"{k}={v} is not a {known[k].__name__}", field=k) from None
    return AuthorsVC(name, **kwargs)
