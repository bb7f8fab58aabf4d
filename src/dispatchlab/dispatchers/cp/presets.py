"""Registry presets of the CP dispatchers: ``pcp``, ``pcp1`` … ``hcp3``.

Each version also comes with the other two duration predictors as ``<name>-real`` and
``<name>-heuristic`` (the base name uses the requested wall-time, as the paper's "-W"),
and ``<name>-paper`` runs the paper's wall-clock search control (δ = 1 s, δmax = 16 s,
2 workers; not reproducible bit for bit).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from dispatchlab.dispatchers.cp.config import CP_CAPABILITIES, DEC_CAPABILITIES
from dispatchlab.dispatchers.registry import register, register_spec_parser

if TYPE_CHECKING:
    from dispatchlab.dispatchers.cp.config import CPConfig
    from dispatchlab.dispatchers.cp.dispatcher import CPDispatcher
    from dispatchlab.dispatchers.dec.dispatcher import DecDispatcher

_WHAT = {
    0: "original model",
    1: "reduced model + solver-aware restarts",
    2: "v1 + underestimated running jobs kept 1 s",
    3: "v2 + slowdown objective and priority",
}
_KIND = {
    "hcp": "hybrid CP (pooled schedule, best-fit mapper)",
    "pcp": "pure CP (per-node schedule and allocation)",
}


def preset_config(kind: str, version: int, variant: str) -> CPConfig:
    """The configuration of a preset; ``variant``: an estimator name or ``paper``."""
    from dispatchlab.dispatchers.cp.config import CPConfig, SearchConfig

    paper = variant == "paper"
    search = (
        SearchConfig(deterministic=False, delta=1.0, delta_max=16.0, workers=2, wall_limit=16.0)
        if paper
        else SearchConfig()
    )
    estimator = "walltime" if paper else variant
    return CPConfig(kind=kind, version=version, estimator=estimator, search=search)


def _make(kind: str, version: int, estimator: str, paper: bool) -> CPDispatcher:
    """Build a CP dispatcher; OR-Tools is imported only now, not when presets are listed."""
    from dispatchlab.dispatchers.cp.dispatcher import CPDispatcher

    return CPDispatcher(preset_config(kind, version, "paper" if paper else estimator))


def register_all() -> None:
    """Register every CP preset and the ``cp=<preset>,key=value`` spec parser."""
    from dispatchlab.dispatchers.cp.spec import parse_cp_spec

    register_spec_parser(parse_cp_spec)
    for kind in ("hcp", "pcp"):
        for version in range(4):
            base = kind + (str(version) if version else "")
            what = f"{_KIND[kind]}, v{version}: {_WHAT[version]}"
            register(
                base,
                partial(_make, kind, version, "walltime", False),
                f"{what}; wall-time durations",
                family="cp", capabilities=CP_CAPABILITIES,
            )
            for est in ("real", "heuristic"):
                register(
                    f"{base}-{est}",
                    partial(_make, kind, version, est, False),
                    f"{what}; {est} durations",
                    family="cp", capabilities=CP_CAPABILITIES,
                )
            register(
                f"{base}-paper",
                partial(_make, kind, version, "walltime", True),
                f"{what}; paper search control (δ=1 s wall clock, δmax=16 s; "
                "not reproducible)",
                family="cp", capabilities=CP_CAPABILITIES,
            )


#: ``dec-feedback-N`` presets registered besides ``dec-feedback`` (the default N).
FEEDBACK_PRESETS = (1, 2, 3, 10)


def dec_preset(feedback: int, paper: bool) -> DecDispatcher:
    """DEC (``feedback=0``) or DEC-feedback; ``paper``: the paper's search budget (5 s of
    wall clock doubling to 60 s while no solution is found; not reproducible)."""
    from dispatchlab.dispatchers.cp.config import SearchConfig, dec_name
    from dispatchlab.dispatchers.dec.dispatcher import DecConfig, DecDispatcher, dec_cp_config

    search = (SearchConfig(deterministic=False, delta=5.0, delta_max=60.0, workers=1,
                           wall_limit=60.0) if paper else SearchConfig())
    return DecDispatcher(DecConfig(feedback=feedback, cp=dec_cp_config(search=search)),
                         name=dec_name(feedback, paper))


def register_dec() -> None:
    """Register ``dec``, ``dec-feedback``, ``dec-feedback-N`` and their ``-paper`` twins."""
    from dispatchlab.dispatchers.cp.config import DEC_FEEDBACK as DEFAULT_FEEDBACK

    what = ("DEC (Borghesi et al. 2015 §5): relaxed CP-SAT schedule (pooled resources + "
            "linear active power under the cap) then a mapper on real nodes counting idle "
            "power; postponed jobs wait for the next event")
    fb = ("DEC_feedBack: DEC plus up to {n} re-solves, each adding the mapper's conflict "
          "sets (unit cumulatives, capacity |set| - 1) and a strictly better objective")
    paper = "; the paper's budget (5 s wall clock doubling to 60 s; not reproducible)"
    register("dec", partial(dec_preset, 0, False), what, family="dec",
             capabilities=DEC_CAPABILITIES)
    register("dec-paper", partial(dec_preset, 0, True), what + paper, family="dec",
             capabilities=DEC_CAPABILITIES)
    register("dec-feedback", partial(dec_preset, DEFAULT_FEEDBACK, False),
             fb.format(n=DEFAULT_FEEDBACK), family="dec", capabilities=DEC_CAPABILITIES)
    register("dec-feedback-paper", partial(dec_preset, DEFAULT_FEEDBACK, True),
             fb.format(n=DEFAULT_FEEDBACK) + paper, family="dec", capabilities=DEC_CAPABILITIES)
    for n in FEEDBACK_PRESETS:
        if n != DEFAULT_FEEDBACK:
            register(f"dec-feedback-{n}", partial(dec_preset, n, False), fb.format(n=n),
                     family="dec", capabilities=DEC_CAPABILITIES)


def register_dec_spec() -> None:
    """``dec=<preset>,key=value,...`` specs (``cp/spec.py``) and their canonical spelling."""
    from dispatchlab.dispatchers.cp.spec import parse_dec_spec
    from dispatchlab.dispatchers.registry import register_canonicalizer

    register_spec_parser(parse_dec_spec)
    register_canonicalizer(lambda f: f["dec"].strip() if set(f) == {"dec"} else None)


register_all()
register_dec()
register_dec_spec()
