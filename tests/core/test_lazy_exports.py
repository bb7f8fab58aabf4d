"""One lazy-export helper for the packages: names import on first use, ``dir()`` lists
them, unknown names raise AttributeError naming the package (issue 26)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

PACKAGES = {
    "dispatchlab": "simulate",
    "dispatchlab.report": "write_report",
    "dispatchlab.workload": "load_workload",
    "dispatchlab.stats": "friedman",
    "dispatchlab.experiments": "RunStore",
    "dispatchlab.dispatchers.offline_plan.planner": "plan_jobs",
    "dispatchlab.dispatchers.cp": "CPConfig",
}


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_dir_lists_every_export(package: str) -> None:
    module = importlib.import_module(package)
    assert set(module.__all__) <= set(dir(module))


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_export_resolves(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, name


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_unknown_name_names_the_package(package: str) -> None:
    module = importlib.import_module(package)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'nope'"):
        module.nope  # noqa: B018
    assert not hasattr(module, "nope")


def test_name_is_imported_on_first_use_only() -> None:
    probe = ("import sys, dispatchlab.stats as s\n"
             "before = 'dispatchlab.stats.ranking' in sys.modules\n"
             "s.friedman\n"
             "print(before, 'dispatchlab.stats.ranking' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True"]


def test_helper_outside_dispatchlab() -> None:
    from dispatchlab.lazy import lazy_exports

    getattr_, dir_ = lazy_exports("json", {"JSONDecoder": "decoder"})
    assert getattr_("JSONDecoder").__name__ == "JSONDecoder"
    assert "JSONDecoder" in dir_()
    with pytest.raises(AttributeError, match="module 'json' has no attribute 'x'"):
        getattr_("x")
