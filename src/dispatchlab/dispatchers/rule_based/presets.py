"""Named rule-based dispatchers and the ``order=…,select=…,alloc=…`` spec parser.

A spec combines any ordering with any selection scheme and allocator::

    order=sjf,select=easy,alloc=best-fit,depth=50,estimate=real
    preset=pbs-fifo,estimate=real          # a preset with one part changed

Keys: ``order`` (default fifo), ``select`` (strict), ``alloc`` (first-fit), ``depth``
(backfill depth, none), ``estimate`` (walltime), ``preset`` (start from a preset).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial

from dispatchlab.dispatchers.allocators import get_allocator
from dispatchlab.dispatchers.family import Entry, preset
from dispatchlab.dispatchers.rule_based.orderings import get_ordering
from dispatchlab.dispatchers.rule_based.policy import Policy
from dispatchlab.dispatchers.rule_based.selection import get_selection
from dispatchlab.errors import ConfigError
from dispatchlab.estimates.registry import get_estimator


@dataclass(frozen=True)
class PolicySpec:
    """The parts of a rule-based dispatcher, by name."""

    order: str = "fifo"
    select: str = "strict"
    alloc: str = "first-fit"
    depth: int | None = None
    estimate: str = "walltime"

    def build(self, name: str | None = None) -> Policy:
        """A new dispatcher with these parts."""
        return Policy(
            get_ordering(self.order),
            get_selection(self.select, self.depth),
            get_allocator(self.alloc),
            get_estimator(self.estimate),
            name=name,
        )


#: Preset name → (parts, one-line description).
PRESETS: dict[str, tuple[PolicySpec, str]] = {
    "fifo": (PolicySpec(), "strict FIFO (submit order), first-fit"),
    "sjf": (PolicySpec(order="sjf"), "strict shortest-requested-time first"),
    "ljf": (PolicySpec(order="ljf"), "strict longest-requested-time first"),
    "edf": (PolicySpec(order="edf"), "strict earliest latest-start (deadline) first"),
    "wfp3": (PolicySpec(order="wfp3"), "strict WFP3 score −(w/r)³·n (Tang et al. 2009)"),
    "uni": (PolicySpec(order="uni"), "strict UNI score −w/(log2(n)·r) (Tang et al. 2009)"),
    "f1": (PolicySpec(order="f1"), "strict F1 score log10(r)·n + 870·log10(s)"),
    "prb": (
        PolicySpec(order="prb", select="nonstrict", alloc="energy"),
        "PRB: expected wait then demand, non-strict, energy-efficient then most loaded",
    ),
    "prb-power": (
        PolicySpec(order="prb", select="nonstrict", alloc="energy-model"),
        "PRB under a power cap (Borghesi et al. 2015 §4): expected wait then demand, "
        "non-strict, least marginal power then most loaded node; the cap, idle power "
        "included, checked at every start",
    ),
    "easy-power": (
        PolicySpec(select="easy-power"),
        "FIFO with EASY backfilling, the head's reservation in power (idle included) as "
        "well as nodes",
    ),
    "fifo-nonstrict": (PolicySpec(select="nonstrict"), "FIFO, start every job that fits"),
    "easy": (PolicySpec(select="easy"), "FIFO with EASY backfilling"),
    "easy-sjf": (
        PolicySpec(order="sjf", select="easy"),
        "shortest-requested-time first with EASY backfilling",
    ),
    "conservative": (PolicySpec(select="conservative"), "FIFO with conservative backfilling"),
    "conservative-power": (
        PolicySpec(select="conservative-power"),
        "FIFO with conservative backfilling, every reservation in power (idle included) "
        "as well as nodes",
    ),
    "pbs-fifo": (
        PolicySpec(select="top-jobs", depth=10),
        "PBS at CINECA (thesis): FIFO, strict_ordering, backfill_depth 10 (the first 10 "
        "jobs that cannot run get reservations; any job may backfill around them)",
    ),
    "pbs-walltime": (
        PolicySpec(order="sjf", select="top-jobs", depth=400),
        "PBS (thesis): strict order by increasing wall-time, backfill_depth 400 top jobs",
    ),
    "pbs-fifo-window": (
        PolicySpec(select="easy", depth=10),
        "pbs-fifo read as EASY looking only at the first 10 queued jobs from the head",
    ),
    "pbs-walltime-window": (
        PolicySpec(order="sjf", select="easy", depth=400),
        "pbs-walltime read as EASY looking only at the first 400 queued jobs from the head",
    ),
}

#: The keys of a rule-based spec.
SPEC_KEYS = ("preset", "order", "select", "alloc", "depth", "estimate")


def build_preset(name: str) -> Policy:
    """A new dispatcher for preset ``name``."""
    return PRESETS[name][0].build(name)


def entries() -> list[Entry]:
    """Every preset above."""
    return [preset(name, partial(build_preset, name), description, kind=Policy)
            for name, (_, description) in PRESETS.items()]


def parse_spec(fields: dict[str, str]) -> Policy | None:
    """A dispatcher from ``key=value`` fields, or ``None`` when they are not ours."""
    if not set(fields) <= set(SPEC_KEYS):
        return None
    spec = policy_spec(fields)
    base = fields.get("preset")
    if base is not None and len(fields) == 1:
        return spec.build(base)
    return spec.build()


def canonical_spec(fields: dict[str, str]) -> str | None:
    """One spelling per rule-based dispatcher (for run hashes): the preset's name when the
    fields describe a preset (``order=fifo,select=easy`` → ``easy``), else
    ``order=…,select=…,alloc=…`` plus ``depth``/``estimate`` when not the default;
    ``None`` when the fields are not ours."""
    if not set(fields) <= set(SPEC_KEYS):
        return None
    spec = policy_spec(fields)
    for name, (parts, _) in PRESETS.items():
        if parts == spec:
            return name
    out = f"order={spec.order},select={spec.select},alloc={spec.alloc}"
    if spec.depth is not None:
        out += f",depth={spec.depth}"
    if spec.estimate != "walltime":
        out += f",estimate={spec.estimate}"
    return out


def policy_spec(fields: dict[str, str]) -> PolicySpec:
    """The parts ``key=value`` fields describe (a ``preset`` with changes, or defaults)."""
    spec = PolicySpec()
    base = fields.get("preset")
    if base is not None:
        if base not in PRESETS:
            known = ", ".join(PRESETS)
            raise ConfigError(f"unknown preset '{base}' (known: {known})", field="preset")
        spec = PRESETS[base][0]
    changes: dict[str, object] = {k: v for k, v in fields.items() if k not in ("preset", "depth")}
    if "depth" in fields:
        raw = fields["depth"]
        if raw in ("", "none", "all"):
            changes["depth"] = None
        else:
            try:
                changes["depth"] = int(raw)
            except ValueError:
                raise ConfigError(f"depth must be an integer, got '{raw}'", field="depth") from None
    return replace(spec, **changes)  # type: ignore[arg-type]
