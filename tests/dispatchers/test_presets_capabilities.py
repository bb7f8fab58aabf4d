"""Issue 29 follow-up: a preset's capabilities are read from its class (or the record
registered with it) without building it, and only built when they depend on its settings;
``dispatchlab dispatchers`` shows them."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from dispatchlab.cli.dispatchers_cmd import FLAGS, flags
from dispatchlab.cli.main import app
from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.dispatchers.preset_capabilities import class_capabilities, preset_capabilities
from dispatchlab.dispatchers.registry import Entry, presets
from dispatchlab.engine.capabilities import Capabilities, capabilities_of

runner = CliRunner()


def test_every_presets_record_is_the_built_dispatchers() -> None:
    for name, entry in presets().items():
        assert preset_capabilities(entry) == capabilities_of(entry.factory()), name


class _Declared(BaseDispatcher):
    capabilities = Capabilities(family="t", fixed_power_cap=False)


class _PricedProperty(_Declared):
    def __init__(self, priced: bool) -> None:
        self.priced = priced

    @property
    def reads_pricing(self) -> bool:
        return self.priced


class _PricedAlways(_Declared):
    reads_pricing = True


class _RecordProperty(BaseDispatcher):
    def __init__(self, units: bool) -> None:
        self.units = units

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(family="t", multi_unit_jobs=self.units)


def _never_built() -> BaseDispatcher:
    raise AssertionError("the dispatcher was built")


@pytest.mark.parametrize(("cls", "expect"), [
    (_Declared, replace(_Declared.capabilities, reads_pricing=False)),
    (_PricedAlways, replace(_Declared.capabilities, reads_pricing=True)),
    (_PricedProperty, None), (_RecordProperty, None), (BaseDispatcher, None)])
def test_class_level_records_only(cls: type, expect: Capabilities | None) -> None:
    assert class_capabilities(cls) == expect


def test_presets_built_only_when_the_record_depends_on_settings() -> None:
    kind = f"{__name__}:_Declared"
    assert preset_capabilities(Entry("a", _never_built, "", "t", kind)).family == "t"
    record = Capabilities(family="given")
    assert preset_capabilities(Entry("b", _never_built, "", "t", "", record)) == record
    built = Entry("c", lambda: _PricedProperty(priced=True), "", "t",
                  f"{__name__}:_PricedProperty")
    assert preset_capabilities(built).reads_pricing
    small = Entry("d", lambda: _RecordProperty(units=False), "", "t")  # class not known
    assert not preset_capabilities(small).multi_unit_jobs


def test_listing_every_presets_capabilities_imports_no_solver_nor_pandas() -> None:
    """What keeps ``dispatchlab dispatchers`` quick (0.34 s, as before the column)."""
    code = ("from dispatchlab.dispatchers.registry import presets\n"
            "from dispatchlab.dispatchers.preset_capabilities import preset_capabilities\n"
            "import sys\n"
            "caps = [preset_capabilities(e) for e in presets().values()]\n"
            "print(len(caps), sorted({'ortools', 'pandas', 'scipy'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == f"{len(presets())} []"


def test_dispatchers_cmd_shows_capabilities() -> None:
    result = runner.invoke(app, ["dispatchers", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["name"]: r for r in json.loads(result.stdout)}
    entries = presets()
    for name, row in rows.items():
        assert row["capabilities"] == preset_capabilities(entries[name]).describe(), name
    assert rows["offline-delay"]["capabilities"]["reads_pricing"] is True
    assert rows["easy"]["capabilities"]["fixed_power_cap"] is True
    table = runner.invoke(app, ["dispatchers", "--family", "malleable"])
    assert table.exit_code == 0, table.output
    line = next(x for x in table.stdout.splitlines()
                if x.split()[:1] == ["mejri-fifo-rcfg-poff"])
    assert line.split()[1] == "d--m-sr----"
    assert flags(Capabilities()) == "dcvm-------"
    assert flags(Capabilities(own_simulator="run it so")).endswith("x")
    assert set(FLAGS) == set(Capabilities().describe()) - {"family"}
