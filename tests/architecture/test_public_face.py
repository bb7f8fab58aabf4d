"""The public module for dispatcher authors, :mod:`dispatchlab.extend`: its names stay,
each is documented, and the examples import nothing else from the package (so the
internal layout is free to move without breaking a user's dispatcher)."""

from __future__ import annotations

import ast
from pathlib import Path

import dispatchlab.extend as extend

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
DOCS = REPO / "docs" / "architecture.md"

#: The names a user's dispatcher may rely on. Removing one breaks their code: deprecate it
#: instead. Adding one: add it here and to docs/architecture.md.
PUBLIC = frozenset({
    # the dispatcher and what it reads
    "BaseDispatcher", "Dispatcher", "Capabilities", "SystemView", "JobRequests", "Running",
    "Budget", "Events", "WAKE_ON_SUBMIT", "WAKE_ON_END", "WAKE_ON_ALL",
    "ON", "OFF", "BOOTING", "SHUTTING_DOWN", "DOWN",
    # what it returns
    "Decision", "Start", "WakeAt", "Plan", "PowerOff", "PowerOn", "Reconfigure", "Kill",
    "Requeue", "InvalidDecision", "ConfigError",
    # placing units on nodes
    "Workspace", "Placement", "first_fit", "Allocator", "FirstFit", "BestFit", "WorstFit",
    "EnergyFirst", "MarginalPowerFirst", "ALLOCATORS", "get_allocator",
    # naming it and running it
    "register", "get_dispatcher", "presets", "simulate", "Results", "Workload", "Platform",
    "load_workload", "load_swf", "SwfOptions", "sample_trace", "SAMPLE_PLATFORM",
})


def test_the_public_names_stay() -> None:
    assert set(extend.__all__) == PUBLIC, (
        f"dropped: {sorted(PUBLIC - set(extend.__all__))}, "
        f"new (add them to PUBLIC and the docs): {sorted(set(extend.__all__) - PUBLIC)}")
    assert len(extend.__all__) == len(PUBLIC)  # no name listed twice
    assert [n for n in extend.__all__ if not hasattr(extend, n)] == []


def test_every_public_name_is_documented() -> None:
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("## Writing your own dispatcher"):]
    section = section[: section.find("\n## ", 1)]
    assert sorted(n for n in PUBLIC if f"`{n}`" not in section) == []


def dispatchlab_imports(path: Path) -> set[str]:
    """The ``dispatchlab`` modules a script imports from (its ``from M import …`` and
    ``import M`` statements, wherever they are)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level:
            out.add(node.module or "")
    return {m for m in out if m == "dispatchlab" or m.startswith("dispatchlab.")}


def test_examples_import_only_the_public_module() -> None:
    scripts = sorted(EXAMPLES.rglob("*.py"))
    assert scripts, "no example script found"
    found = {str(p.relative_to(REPO)): sorted(dispatchlab_imports(p) - {"dispatchlab.extend"})
             for p in scripts}
    assert {k: v for k, v in found.items() if v} == {}, (
        "examples must import from dispatchlab.extend only")
    assert all(dispatchlab_imports(p) == {"dispatchlab.extend"} for p in scripts)
