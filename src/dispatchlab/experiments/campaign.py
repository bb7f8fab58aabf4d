"""Run the planned runs that are not stored yet, storing each one as soon as it finishes."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from dispatchlab.experiments.config import PlannedRun, RunConfig
from dispatchlab.experiments.engines import Engine
from dispatchlab.experiments.store import RunStore
from dispatchlab.experiments.worker import RunOutput, execute_run


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
    engine: str = ""

    @property
    def ok(self) -> bool:
        """True when every planned run is stored."""
        return not self.failures


def run_campaign(
    runs: Sequence[PlannedRun],
    store: RunStore,
    engine: Engine,
    *,
    on_progress: Callable[[Progress], None] | None = None,
) -> CampaignOutcome:
    """Execute the runs of ``runs`` that ``store`` lacks on ``engine`` (already entered).

    Finished runs are skipped, so calling this again after an interruption resumes the
    campaign. A failing run is reported (first line of its error) and not stored; the
    others go on.
    """
    store.clean_temporary()
    todo = [r for r in runs if not store.is_done(r.key)]
    by_key = {r.key: r for r in todo}
    state = Progress(total=len(runs), skipped=len(runs) - len(todo))
    failures: dict[str, str] = {}
    if on_progress:
        on_progress(state)

    def key_of(cfg: RunConfig) -> str:
        return cfg.key

    for cfg, result in engine.map_unordered(execute_run, [r.config for r in todo], key_of):
        run = by_key[cfg.key]
        state.last = run
        if isinstance(result, BaseException):
            failures[run.key] = _describe(result)
            state.failed += 1
        elif isinstance(result, RunOutput):
            if store.save(run, result, engine=engine.name):
                state.stored += 1
            else:
                state.duplicates += 1
                state.skipped += 1
        if on_progress:
            on_progress(state)
    return CampaignOutcome(
        total=len(runs),
        skipped=state.skipped - state.duplicates,
        stored=state.stored,
        duplicates=state.duplicates,
        failures=failures,
        engine=engine.name,
    )


def _describe(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    if not isinstance(exc, Exception) or type(exc).__module__.startswith("dispatchlab"):
        return text.splitlines()[0]
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" (at {tb[-1].filename}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {text.splitlines()[0]}{where}"
