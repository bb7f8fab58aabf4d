"""Registry presets of DEC (Borghesi et al. 2015): ``dec``, ``dec-feedback``,
``dec-feedback-N``, each with a ``-paper`` twin running the paper's search budget."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from dispatchlab.dispatchers.dec.names import DEC_CAPABILITIES, DEC_FEEDBACK, dec_name
from dispatchlab.dispatchers.family import Entry, preset

if TYPE_CHECKING:
    from dispatchlab.dispatchers.dec.dispatcher import DecDispatcher

#: ``dec-feedback-N`` presets registered besides ``dec-feedback`` (the default N).
FEEDBACK_PRESETS = (1, 2, 3, 10)


def dec_preset(feedback: int, paper: bool) -> DecDispatcher:
    """DEC (``feedback=0``) or DEC-feedback; ``paper``: the paper's search budget (5 s of
    wall clock doubling to 60 s while no solution is found; not reproducible)."""
    from dispatchlab.dispatchers.cp.config import SearchConfig
    from dispatchlab.dispatchers.dec.dispatcher import DecConfig, DecDispatcher, dec_cp_config

    search = (SearchConfig(deterministic=False, delta=5.0, delta_max=60.0, workers=1,
                           wall_limit=60.0) if paper else SearchConfig())
    return DecDispatcher(DecConfig(feedback=feedback, cp=dec_cp_config(search=search)),
                         name=dec_name(feedback, paper))


def entries() -> list[Entry]:
    """``dec``, ``dec-feedback``, ``dec-feedback-N`` and their ``-paper`` twins."""
    what = ("DEC (Borghesi et al. 2015 §5): relaxed CP-SAT schedule (pooled resources + "
            "linear active power under the cap) then a mapper on real nodes counting idle "
            "power; postponed jobs wait for the next event")
    fb = ("DEC_feedBack: DEC plus up to {n} re-solves, each adding the mapper's conflict "
          "sets (unit cumulatives, capacity |set| - 1) and a strictly better objective")
    paper = "; the paper's budget (5 s wall clock doubling to 60 s; not reproducible)"
    caps = DEC_CAPABILITIES
    out = [preset("dec", partial(dec_preset, 0, False), what, capabilities=caps),
           preset("dec-paper", partial(dec_preset, 0, True), what + paper, capabilities=caps),
           preset("dec-feedback", partial(dec_preset, DEC_FEEDBACK, False),
                  fb.format(n=DEC_FEEDBACK), capabilities=caps),
           preset("dec-feedback-paper", partial(dec_preset, DEC_FEEDBACK, True),
                  fb.format(n=DEC_FEEDBACK) + paper, capabilities=caps)]
    out += [preset(f"dec-feedback-{n}", partial(dec_preset, n, False), fb.format(n=n),
                   capabilities=caps) for n in FEEDBACK_PRESETS if n != DEC_FEEDBACK]
    return out
