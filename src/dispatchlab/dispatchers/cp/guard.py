"""Crash containment for CP-SAT: solve in a forked child so a native crash (a failed
``CHECK``, a segfault) costs one decision, not the whole simulation.

OR-Tools aborts the process on some internal errors (docs/cp.md: hint repair on an
infeasible hint; feasibility jump without presolve). No Python ``except`` can catch that,
so :func:`solve_in_child` forks, lets the child solve and send back its response, and
raises :class:`SolverCrash` when the child dies instead — the dispatcher then takes its
greedy decision and counts the crash. Forking copies nothing up front (copy-on-write); it
costs ~1–5 ms per solver call, which is why trivial decisions never reach it.
"""

from __future__ import annotations

import os
import pickle
import signal
from typing import Any

from ortools.sat.python import cp_model
from ortools.sat.python import cp_model_helper as cmh

#: Fork is available (POSIX); elsewhere the solver runs in-process.
AVAILABLE = hasattr(os, "fork")


class SolverCrash(RuntimeError):
    """The solver's process died (native crash) before answering."""


class Answer:
    """A child's response with the reading interface of ``CpSolver`` used here."""

    def __init__(self, fields: dict[str, Any]):
        resp = cmh.CpSolverResponse()
        resp.status = cmh.CpSolverStatus(fields["status"])
        resp.solution.extend(fields["solution"])
        resp.objective_value = fields["objective"]
        resp.best_objective_bound = fields["bound"]
        resp.deterministic_time = fields["det_time"]
        resp.wall_time = fields["wall"]
        self._resp = resp
        self.objective_value = float(fields["objective"])
        self.best_objective_bound = float(fields["bound"])
        self.deterministic_time = float(fields["det_time"])
        self.wall_time = float(fields["wall"])

    def value(self, expression: Any) -> int:
        """Value of a variable or linear expression in the child's solution."""
        return int(cmh.ResponseHelper.value(self._resp, expression))


def child_solve(model: cp_model.CpModel, solver: cp_model.CpSolver) -> dict[str, Any]:
    """What the child runs (tests replace it to simulate a native crash)."""
    status = solver.solve(model)
    r = solver.response_proto
    return {"status": int(status), "solution": list(r.solution),
            "objective": r.objective_value, "bound": r.best_objective_bound,
            "det_time": r.deterministic_time, "wall": r.wall_time}


def solve_in_child(model: cp_model.CpModel, solver: cp_model.CpSolver) -> tuple[str, Answer]:
    """Solve in a forked child; the status name and the child's answer.

    Raises :class:`SolverCrash` when the child dies by a signal or sends nothing.
    """
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: solve, answer, leave without running any parent cleanup
        code = 0
        try:
            os.close(read_fd)
            data = pickle.dumps(child_solve(model, solver))
            with os.fdopen(write_fd, "wb") as out:
                out.write(data)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as inp:
        data = inp.read()
    _, wait_status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(wait_status):
        sig = os.WTERMSIG(wait_status)
        raise SolverCrash(f"CP-SAT died with {signal.Signals(sig).name}")
    if not data or os.WEXITSTATUS(wait_status) != 0:
        raise SolverCrash(f"CP-SAT's process exited with status "
                          f"{os.WEXITSTATUS(wait_status)} without an answer")
    fields = pickle.loads(data)
    return cmh.CpSolverStatus(fields["status"]).name, Answer(fields)
