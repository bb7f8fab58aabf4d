"""Issue 29: every preset of every family under every scenario kind either runs with the
audit passing or is refused before the first event naming the missing capability.

The default cells are a representative subset (one to three presets a family, every
scenario column: 65 cells); the rest of the full matrix (every registered preset, 450
cells in all, ~30 s of CPU) is marked slow.
"""

from __future__ import annotations

import pytest

from dispatchlab.dispatchers.registry import families, get_dispatcher, presets
from dispatchlab.engine.capabilities import capabilities_of, required
from dispatchlab.report.composition import (
    HOMES,
    SCENARIOS,
    _home_inputs,
    dispatcher_spec,
    markdown,
    presets_by_family,
    run_cell,
    scenario_for,
)

#: Two or three presets of each family: the default suite's cells.
SUBSET = {
    "rule-based": ("easy", "conservative-power"),
    "cp": ("hcp", "pcp1"),
    "dec": ("dec-feedback",),
    "dardis": ("dardis-throughput", "dardis70", "rb-fcfs"),
    "variable-capacity": ("ff-aware", "target-asap"),
    "malleable": ("mejri-fifo-poff", "mejri-swarm2"),
    "offline-plan": ("offline-heuristic",),
    "pa-hpc-sim": ("pa-easy",),
    "slurm": ("slurm",),
}


def _expected(family: str, preset: str, kind: str) -> str:
    """``refused`` when the family declares it lacks what the scenario needs, else ``ok``."""
    wl, plat = _home_inputs(family)
    scen = scenario_for(kind, wl, plat).get("scenario")
    kinds = scen.kinds() if scen is not None else set()
    caps = capabilities_of(get_dispatcher(dispatcher_spec(family, preset)))
    needs = required(kinds, None, int(wl.units.max()))
    return "refused" if any(not getattr(caps, name) for name, _ in needs) else "ok"


def _check(family: str, preset: str, kind: str) -> None:
    cell = run_cell(family, preset, kind)
    assert cell.outcome != "error", cell
    assert cell.outcome == _expected(family, preset, kind), cell
    if cell.outcome == "refused":
        assert f"(family {family})" in cell.message and "does not support" in cell.message


def test_every_family_has_a_home_and_a_subset() -> None:
    families = set(presets_by_family())
    assert families == set(HOMES) == set(SUBSET)
    for family, names in SUBSET.items():
        assert set(names) <= set(presets_by_family()[family])


@pytest.mark.parametrize("kind", SCENARIOS)
@pytest.mark.parametrize(("family", "preset"),
                         [(f, p) for f, names in SUBSET.items() for p in names])
def test_subset_cell(family: str, preset: str, kind: str) -> None:
    _check(family, preset, kind)


@pytest.mark.slow
@pytest.mark.parametrize("kind", [k for k in SCENARIOS if k != "none"])
@pytest.mark.parametrize(("family", "preset"),
                         [(e.family, e.name) for e in presets().values()
                          if e.name not in SUBSET.get(e.family, ())])
def test_full_matrix_cell(family: str, preset: str, kind: str) -> None:
    _check(family, preset, kind)


@pytest.mark.parametrize(("family", "preset"),
                         [(f.name, e.name) for f in families() for e in f.entries()
                          if e.name not in SUBSET.get(f.name, ())])
def test_every_preset_of_the_catalogue_runs_audited_on_its_home(family: str, preset: str
                                                                ) -> None:
    """Every preset of every family in the catalogue, on its family's small real (or
    generated) workload, with the audit on."""
    _check(family, preset, "none")


def test_every_preset_declares_its_family() -> None:
    """Each registered preset carries the capability record of the family it is listed in."""
    for entry in presets().values():
        caps = capabilities_of(get_dispatcher(entry.name))
        assert caps.family == entry.family, entry.name


def test_markdown_lists_refusals_with_their_reason() -> None:
    cells = [run_cell("malleable", "mejri-fifo", k) for k in ("none", "power-cap")]
    text = markdown(cells)
    assert "| malleable | `mejri-fifo` | runs | refused [1] |" in text
    assert "1. (family malleable) does not support a varying power cap" in text
