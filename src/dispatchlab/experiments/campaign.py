"""Run the planned runs that are not stored yet, storing each one as soon as it finishes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from dispatchlab.experiments.backends import Backend
from dispatchlab.experiments.config import PlannedRun, RunConfig
from dispatchlab.experiments.store import RunStore
from dispatchlab.experiments.worker import GroupOutput, describe_error, execute_group


@dataclass
class Progress:
    """Where a campaign stands; handed to the progress callback after every run."""

    total: int
    skipped: int
    stored: int = 0
    failed: int = 0
    duplicates: int = 0
    last: PlannedRun | None = None

    @property
    def finished(self) -> int:
        """Runs accounted for so far (skipped, stored or failed)."""
        return self.skipped + self.stored + self.failed


@dataclass
class CampaignOutcome:
    """How a campaign ended: what ran, what was already there, what failed and why."""

    total: int
    skipped: int
    stored: int
    duplicates: int
    failures: dict[str, str] = field(default_factory=dict)
    backend: str = ""

    @property
    def ok(self) -> bool:
        """True when every planned run is stored."""
        return not self.failures


def run_campaign(
    runs: Sequence[PlannedRun],
    store: RunStore,
    backend: Backend,
    *,
    on_progress: Callable[[Progress], None] | None = None,
) -> CampaignOutcome:
    """Execute the runs of ``runs`` that ``store`` lacks on ``backend`` (already entered).

    Finished runs are skipped, so calling this again after an interruption resumes the
    campaign. A failing run is reported (first line of its error) and not stored; the
    others go on. Runs that differ only in their pricing scenario, whose dispatcher does
    not read pricing inputs, are simulated once between them (:func:`simulation_groups`).
    """
    store.clean_temporary()
    todo = [r for r in runs if not store.is_done(r.key)]
    by_key = {r.key: r for r in todo}
    state = Progress(total=len(runs), skipped=len(runs) - len(todo))
    failures: dict[str, str] = {}
    if on_progress:
        on_progress(state)

    def key_of(cfgs: tuple[RunConfig, ...]) -> str:
        return cfgs[0].key  # every run is in one group: unique

    groups = [tuple(r.config for r in g) for g in simulation_groups(todo)]
    for cfgs, result in backend.map_unordered(execute_group, groups, key_of):
        if isinstance(result, BaseException):
            outcome = GroupOutput([], {c.key: describe_error(result) for c in cfgs})
        elif isinstance(result, GroupOutput):
            outcome = result
        else:  # pragma: no cover - execute_group returns nothing else
            raise TypeError(f"unexpected result {type(result).__name__}")
        for out in outcome.outputs:
            run = by_key[out.key]
            state.last = run
            if store.save(run, out, backend=backend.name):
                state.stored += 1
            else:
                state.duplicates += 1
                state.skipped += 1
            if on_progress:
                on_progress(state)
        for key, why in outcome.failures.items():
            state.last = by_key[key]
            failures[key] = why
            state.failed += 1
            if on_progress:
                on_progress(state)
    return CampaignOutcome(
        total=len(runs),
        skipped=state.skipped - state.duplicates,
        stored=state.stored,
        duplicates=state.duplicates,
        failures=failures,
        backend=backend.name,
    )


def simulation_groups(runs: Sequence[PlannedRun]) -> list[list[PlannedRun]]:
    """The runs in groups that one simulation serves, in planned order: runs with pricing
    inputs whose dispatcher does not read them (``shares_simulation``) and whose
    configurations differ only in those inputs; every other run alone."""
    groups: dict[str, list[PlannedRun]] = {}
    for r in runs:
        shared = r.shares_simulation and r.config.workload.cooling is not None
        key = f"sim:{r.config.simulation_key}" if shared else f"run:{r.key}"
        groups.setdefault(key, []).append(r)
    return list(groups.values())
