"""Offline planning of a chunk of jobs (a day) for profit: the job-based heuristic
(thesis Alg. 5), the CP-SAT model with the cooling (PUE) table, and the Multi-,
Relaxation- and Delay-Searches. See docs/planning.md."""

from dispatchlab.dispatchers.offline_plan.planner.plan import Plan, concat_plans, load_plan

__all__ = ["Plan", "concat_plans", "load_plan", "plan_jobs"]


def __getattr__(name: str) -> object:
    """``plan_jobs`` on first use (it imports OR-Tools and SciPy)."""
    if name == "plan_jobs":
        from dispatchlab.dispatchers.offline_plan.planner.api import plan_jobs

        return plan_jobs
    raise AttributeError(name)
