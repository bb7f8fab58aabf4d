"""A dispatcher offers its compiled plan; the engine side knows only that protocol."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import dispatchlab.engine.compiled as compiled_pkg
from dispatchlab import Platform, simulate
from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.dispatchers.rule_based.compiled.kernel import AVAILABLE
from dispatchlab.dispatchers.rule_based.compiled.runner import run_plan
from dispatchlab.dispatchers.rule_based.compiled_plan import policy_plan
from dispatchlab.dispatchers.rule_based.policy import Policy
from dispatchlab.engine.compiled.plan import CompiledPlan, OffersCompiledPlan
from dispatchlab.engine.simulator import map_requests
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError
from dispatchlab.workload.workload import Workload
from tests.conftest import jobs

WL = jobs((0, 5, 9, 2), (1, 3, 4, 1), (1, 8, 8, 1), (2, 1, 30, 2))
PLAT = Platform.homogeneous(2, {"cores": 2})


def plan_of(spec: str, wl: Workload = WL) -> CompiledPlan | str:
    disp = get_dispatcher(spec)
    assert isinstance(disp, OffersCompiledPlan)
    view = SystemView(wl, PLAT, map_requests(wl, PLAT))
    view.jobs.known = wl.n_jobs
    return disp.compiled_plan(wl, view)


def test_policy_offers_its_plan() -> None:
    easy = plan_of("order=sjf,select=easy,depth=2")
    assert isinstance(easy, CompiledPlan)
    assert (easy.selection, easy.depth) == ("easy", 2)
    assert easy.estimate.tolist() == [9, 4, 8, 30]  # requested times
    assert easy.ranks().tolist() == [2, 0, 1, 3]  # shortest requested time first
    real = plan_of("order=fifo,select=conservative,estimate=real")
    assert isinstance(real, CompiledPlan)
    assert (real.selection, real.depth) == ("conservative", -1)
    assert real.estimate.tolist() == [5, 3, 8, 1]
    assert real.ranks().tolist() == [0, 1, 2, 3]
    power = plan_of("easy-power")
    assert isinstance(power, CompiledPlan)
    assert (power.selection, power.depth) == ("easy-power", -1)


@pytest.mark.parametrize(("spec", "reason"), [
    ("order=wfp3,select=nonstrict", "is dynamic"),
    ("order=fifo,select=strict,alloc=best-fit", "not first-fit"),
    ("order=fifo,select=top-jobs", "neither strict, non-strict, EASY, easy-power nor "
     "conservative"),
])
def test_policy_says_why_it_has_no_plan(spec: str, reason: str) -> None:
    found = plan_of(spec)
    assert isinstance(found, str) and reason in found


def test_a_subclass_has_no_plan_unless_it_offers_one() -> None:
    class Tweaked(Policy):
        pass

    class Offering(Policy):
        def compiled_plan(self, workload: Workload, view: SystemView) -> CompiledPlan | str:
            return policy_plan(self, workload, view)

    view = SystemView(WL, PLAT, map_requests(WL, PLAT))
    found = Tweaked("fifo", "easy").compiled_plan(WL, view)
    assert isinstance(found, str) and "not a rule-based Policy" in found
    assert isinstance(Offering("fifo", "easy").compiled_plan(WL, view), CompiledPlan)
    if AVAILABLE:
        res = simulate(WL, PLAT, Offering("fifo", "easy"))
        assert res.summary["loop"] == "compiled"
        ref = simulate(WL, PLAT, "easy", loop="general")
        assert res.jobs["start"].tolist() == ref.jobs["start"].tolist()


def test_a_plan_names_a_known_selection() -> None:
    with pytest.raises(ValueError, match="unknown selection 'backfill'"):
        CompiledPlan("backfill", -1, np.ones(1, np.int64), lambda: np.zeros(1, np.int64),
                     run_plan)


def test_the_engine_side_imports_no_dispatcher() -> None:
    """The compiled loops read the protocol, never a dispatcher class."""
    for path in Path(compiled_pkg.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                assert not name.startswith(("dispatchlab.dispatchers", "dispatchlab.estimates")), \
                    f"{path.name}:{node.lineno} imports {name}"


@pytest.mark.skipif(not AVAILABLE, reason="Numba disabled")
@pytest.mark.parametrize(("spec", "vectors", "why"), [
    ("order=wfp3,select=easy", True, "dynamic ordering"),  # the vector loop sorts by rank
    ("easy+poweroff:60", True, "power-off"),  # the vector loop switches no node
    ("order=uni,select=nonstrict", False, "dynamic"),  # non-strict runs in the vector loop
    ("order=wfp3,select=strict,alloc=energy-model", False, "dynamic"),
])
def test_loops_that_take_one_feature_refuse_its_combination(spec: str, vectors: bool,
                                                            why: str) -> None:
    """Features compiled in different loops do not combine: the run goes general, and
    ``loop="compiled"`` says why."""
    n = 6
    wl = Workload.from_columns(submit=[0, 0, 1, 2, 3, 5], walltime=[10] * n,
                               runtime=[4, 9, 2, 7, 3, 1], units=[1, 2, 1, 1, 2, 1],
                               req={"cores": [1, 2, 1, 3, 1, 2] if vectors else [1] * n,
                                    "mem": [1, 1, 2, 1, 1, 1] if vectors else [1] * n})
    plat = Platform.homogeneous(3, {"cores": 4, "mem": 4})
    assert simulate(wl, plat, spec).summary["loop"] == "general"
    with pytest.raises(ConfigError, match=why):
        simulate(wl, plat, spec, loop="compiled")
