"""``cp=<preset>,key=value`` dispatcher specs (experiment files, ``-d`` options)."""

from __future__ import annotations

import pytest

from dispatchlab.dispatchers.cp import CPDispatcher
from dispatchlab.dispatchers.registry import get_dispatcher
from dispatchlab.errors import ConfigError


def test_preset_with_changes() -> None:
    d = get_dispatcher("cp=pcp1,objective=wait,delta=0.05,wall_limit=2,repair_hint=yes")
    assert isinstance(d, CPDispatcher)
    cfg = d.config
    assert (cfg.kind, cfg.version, cfg.objective_name) == ("pcp", 1, "wait")
    assert cfg.search.delta == 0.05 and cfg.search.wall_limit == 2.0
    assert cfg.search.repair_hint is True
    assert cfg.estimator == "walltime"


def test_estimator_variants_and_paper_mode() -> None:
    real = get_dispatcher("cp=hcp3-real,m=20")
    assert isinstance(real, CPDispatcher)
    assert real.config.estimator == "real" and real.config.m == 20
    paper = get_dispatcher("cp=hcp3-paper,bounded=late+makespan")
    assert isinstance(paper, CPDispatcher)
    assert not paper.config.search.deterministic
    assert paper.config.bounded == ("late", "makespan")


@pytest.mark.parametrize(
    ("spec", "field"),
    [("cp=xcp3", "cp"), ("cp=hcp3,colour=red", "colour"), ("cp=hcp3,m=many", "m"),
     ("cp=hcp3,hint=maybe", "hint")],
)
def test_bad_specs_name_the_key(spec: str, field: str) -> None:
    with pytest.raises(ConfigError) as err:
        get_dispatcher(spec)
    assert err.value.field == field


def test_rule_based_specs_still_parse() -> None:
    assert not isinstance(get_dispatcher("order=sjf,select=easy"), CPDispatcher)
