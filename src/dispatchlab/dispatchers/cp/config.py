"""Parameters of the CP dispatchers (PCP, HCP) and what each paper version switches on.

Versions (Galleguillos et al., Table 1): **v0** the original model (HCP postpones jobs
beyond the first *m* to the end of the horizon, PCP keeps every queued job and every node);
**v1** smaller models (first *m* jobs only, jobs that cannot start now and unused
cumulatives dropped) and solver-state-aware restarts; **v2** v1 + a running job past its
predicted end keeps 1 s of remaining time; **v3** v2 + slowdown objective and priority.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from dispatchlab.engine.capabilities import Capabilities
from dispatchlab.errors import ConfigError
from dispatchlab.params import Attributes, Parametrized

#: What the CP family supports (the class's record, here so that listing the presets
#: reads it without importing OR-Tools).
CP_CAPABILITIES = Capabilities(family="cp")

OBJECTIVES = ("wait", "tardiness", "slowdown", "makespan", "late")
PRIORITIES = ("wait", "slowdown")


@dataclass(frozen=True)
class SearchConfig:
    """How CP-SAT is run at one decision point.

    ``deterministic`` (default): the budget is CP-SAT *deterministic time* (``delta`` and
    ``delta_max`` in its work units) plus a conflict limit (``conflicts_per_unit`` ×
    the budget: deterministic time barely counts LP-heavy conflicts, see docs/cp.md), one
    worker, fixed seed: same inputs and seed ⇒ same decisions, whatever the machine load.
    ``wall_limit`` (s) is only a safety net over the whole decision, restarts included:
    a decision where it fires is counted (``wall_limit_hits``) and the run is flagged as
    not reproducible (``reproducible: false`` in its summary and in the experiment store).
    ``deterministic=False`` is the paper's mode (the ``-paper`` presets): ``delta``/
    ``delta_max`` are wall-clock seconds (δ = 1 s, δmax = 16 s there) and the decision's
    solver time is capped at ``min(delta_max, wall_limit)``; such runs depend on the
    machine's speed and load by definition and are always flagged as not reproducible.
    ``repair_hint`` (default off) turns on CP-SAT's hint-repair search. It is off because
    OR-Tools 9.15 can abort the whole process with it ("Check failed:
    heuristics.fixed_search != nullptr", a native CHECK no Python code can catch) when the
    hint violates the model — as it must when the model is infeasible, e.g. v0/v1 with the
    heuristic predictor: `pcp-heuristic` on Eurora batch ``hist_1000_20140401_000243``
    aborted after ~80 s here. Measured with it on: with presolve (HCP) it stalls — on 3-job
    models it raises the objective bound one coefficient step per conflict, thousands of
    conflicts whose work deterministic time does not count (0.009 units took 1 s of wall
    time); without presolve (PCP) it was faster (60–100 ms instead of 0.2–1 s for 0.02
    units). The greedy hint is complete and feasible, so it is always the first solution —
    provided presolve keeps it feasible: with a hint, presolve runs with
    ``keep_all_feasible_solutions_in_presolve`` (its dual reductions otherwise cut the
    greedy schedule off; CP-SAT then searched from scratch
    and ended UNKNOWN at the 1 s cap on 20-job HCP models) and ``linearization_level=2``
    (without the dual reductions the bound-stepping stall above came back; the LP cuts
    close those models in milliseconds). See docs/cp.md.
    ``isolate`` (POSIX): every solver call runs in a forked child, so a native crash of
    OR-Tools becomes a greedy decision counted in ``solver_crashes`` instead of the end of
    the process (dispatchers/cp/guard.py). A fork costs 5–60 ms here (quiet to loaded
    machine), more than a typical HCP solve, so ``None`` (default) isolates the settings
    with known native crashes in OR-Tools 9.15: hint repair, several workers, presolve off
    (every PCP model); ``True``/``False`` force it.
    """

    deterministic: bool = True
    delta: float = 0.02
    delta_max: float = 0.32
    k: int = 2
    wall_limit: float = 10.0  # safety net only (deterministic mode): firing is counted
    conflicts_per_unit: float = 100_000.0  # conflict limit per unit of budget; 0: none
    workers: int = 1
    hint: bool = True
    repair_hint: bool = False  # True risks a native abort in OR-Tools 9.15 (see above)
    priority_search: bool | None = None  # None: as the version says
    presolve: bool | None = None  # None: off for PCP (cpsat.md), on for HCP
    gap: float = 0.0  # relative gap at which the search may stop
    fixed_search: bool = False  # FIXED_SEARCH branching (1 worker): the strategy only
    isolate: bool | None = None  # forked child per solve; None: when a crash is a risk

    def __post_init__(self) -> None:
        if self.delta <= 0 or self.delta_max < self.delta:
            raise ConfigError("need 0 < delta <= delta_max", field="delta")
        if self.k < 1 or self.workers < 1 or self.wall_limit <= 0:
            raise ConfigError("k, workers and wall_limit must be positive", field="search")
        if self.conflicts_per_unit < 0:
            raise ConfigError("conflicts_per_unit must be >= 0", field="conflicts_per_unit")
        if not 0.0 <= self.gap < 1.0:
            raise ConfigError("gap must be in [0, 1)", field="gap")


@dataclass(frozen=True)
class CPConfig(Parametrized):
    """One CP dispatcher: model kind, version, objective, sizes and search control.

    ``objective``/``priority`` of ``None`` take the version's defaults (PCP v0–v2:
    weighted tardiness, HCP v0–v2: weighted wait, v3: slowdown; priority by weighted wait
    before v3). ``bounded`` lists objectives turned into constraints (thesis composite
    models): each is bounded by ``bound_slack`` × its optimum found by the pure model.
    ``m``: queued jobs in the model; ``candidates``: nodes per job in PCP (v1+);
    ``max_optional``: PCP models larger than this are not built (greedy, counted).
    ``skip_trivial``: decide without the solver when the greedy schedule is provably
    optimal (default on from v1). ``warm_start``: hint the previous decision's job order
    when its list schedule beats the priority one.
    """

    kind: str = "hcp"  # "hcp" or "pcp"
    version: int = 3
    objective: str | None = None
    priority: str | None = None
    bounded: tuple[str, ...] = ()
    bound_slack: float = 1.0
    m: int = 100
    candidates: int = 8
    max_optional: int = 6000
    skip_trivial: bool | None = None
    warm_start: bool = True
    estimator: str = "walltime"
    search: SearchConfig = field(default_factory=SearchConfig)

    #: the description records the defaults a version resolves, not ``None``
    described_attributes: ClassVar[Attributes] = {
        "objective": "objective_name", "priority": "priority_name",
        "priority_search": "use_priority_search", "presolve": "use_presolve",
        "skip_trivial": "trivial_skip"}

    def __post_init__(self) -> None:
        if self.kind not in ("hcp", "pcp"):
            raise ConfigError(f"kind must be hcp or pcp, not {self.kind!r}", field="kind")
        if self.version not in (0, 1, 2, 3):
            raise ConfigError("version must be 0, 1, 2 or 3", field="version")
        for name in (self.objective, *self.bounded):
            if name is not None and name not in OBJECTIVES:
                raise ConfigError(
                    f"unknown objective {name!r} (known: {', '.join(OBJECTIVES)})",
                    field="objective",
                )
        if self.priority is not None and self.priority not in PRIORITIES:
            raise ConfigError(f"unknown priority {self.priority!r}", field="priority")
        if self.m < 1 or self.candidates < 1 or self.max_optional < 1:
            raise ConfigError("m, candidates and max_optional must be positive", field="m")
        if self.bound_slack < 1.0:
            raise ConfigError("bound_slack must be >= 1", field="bound_slack")

    # ---- what the version implies ------------------------------------------------------
    @property
    def name(self) -> str:
        """Preset-style name: ``hcp``, ``hcp1`` … ``pcp3``."""
        return self.kind + (str(self.version) if self.version else "")

    @property
    def shrink(self) -> bool:
        """v1+: drop jobs beyond *m* and jobs that cannot start now."""
        return self.version >= 1

    @property
    def fix_underestimates(self) -> bool:
        """v2+: a running job past its predicted end keeps 1 s of remaining time."""
        return self.version >= 2

    @property
    def objective_name(self) -> str:
        """The primary objective in force."""
        if self.objective is not None:
            return self.objective
        if self.version >= 3:
            return "slowdown"
        return "tardiness" if self.kind == "pcp" else "wait"

    @property
    def priority_name(self) -> str:
        """The priority rule of the search, greedy schedule and mapper."""
        if self.priority is not None:
            return self.priority
        return "slowdown" if self.version >= 3 else "wait"

    @property
    def use_priority_search(self) -> bool:
        """Branch on jobs in priority order (HCP always, PCP from v3)."""
        if self.search.priority_search is not None:
            return self.search.priority_search
        return self.kind == "hcp" or self.version >= 3

    @property
    def use_presolve(self) -> bool:
        """CP-SAT presolve (off for PCP: it stalls on optional-interval models)."""
        if self.search.presolve is not None:
            return self.search.presolve
        return self.kind == "hcp"

    @property
    def trivial_skip(self) -> bool:
        """Whether provably optimal greedy decisions skip the solver."""
        return self.version >= 1 if self.skip_trivial is None else self.skip_trivial

    def with_(self, **changes: Any) -> CPConfig:
        """A copy with some fields changed (``search`` fields by name too)."""
        search_fields = set(SearchConfig.__dataclass_fields__)
        s_changes = {k: changes.pop(k) for k in list(changes) if k in search_fields}
        out = replace(self, **changes)
        return replace(out, search=replace(out.search, **s_changes)) if s_changes else out
