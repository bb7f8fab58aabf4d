"""DEC's preset names, its default feedback iterations and its capability record: cheap
to import (no OR-Tools), shared by the presets, the spec parser and the dispatcher."""

from __future__ import annotations

from dispatchlab.engine.capabilities import Capabilities

#: What DEC supports (the class's record, here so that listing the presets reads it
#: without importing OR-Tools).
DEC_CAPABILITIES = Capabilities(family="dec")

#: Feedback iterations of ``dec-feedback`` when none is given. The paper (Borghesi et al.
#: 2015 §5) chose its *n* "empirically" and does not state it.
DEC_FEEDBACK = 5


def dec_name(feedback: int, paper: bool) -> str:
    """Preset name of DEC with ``feedback`` iterations: ``dec``, ``dec-feedback`` (the
    default iterations), ``dec-feedback-N``; ``-paper`` for the paper's budget."""
    base = ("dec" if feedback == 0 else "dec-feedback" if feedback == DEC_FEEDBACK
            else f"dec-feedback-{feedback}")
    return base + ("-paper" if paper else "")
