"""Offline plans replayed in the engine: plan files and per-day profit-driven planning
(thesis ch. 6). See docs/planning.md."""
