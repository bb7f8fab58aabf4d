"""Offline planning of a chunk of jobs (a day) for profit: the job-based heuristic
(thesis Alg. 5), the CP-SAT model with the cooling (PUE) table, and the Multi-,
Relaxation- and Delay-Searches. See docs/planning.md."""

from dispatchlab.planning.plan import Plan, concat_plans, load_plan

__all__ = ["Plan", "concat_plans", "load_plan"]
