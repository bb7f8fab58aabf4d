"""DEC: the power-capping CP dispatcher with decomposition and feedback (Borghesi et al.)."""
