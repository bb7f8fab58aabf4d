"""Offline planning of a chunk of jobs (a day) for profit: the job-based heuristic
(thesis Alg. 5), the CP-SAT model with the cooling (PUE) table, and the Multi-,
Relaxation- and Delay-Searches. See docs/planning.md."""

from typing import TYPE_CHECKING

from dispatchlab.dispatchers.offline_plan.planner.plan import Plan, concat_plans, load_plan
from dispatchlab.lazy import lazy_exports

if TYPE_CHECKING:
    from dispatchlab.dispatchers.offline_plan.planner.api import plan_jobs

__all__ = ["Plan", "concat_plans", "load_plan", "plan_jobs"]

# plan_jobs on first use: it imports OR-Tools and SciPy
__getattr__, __dir__ = lazy_exports(__name__, {"plan_jobs": "api"})
