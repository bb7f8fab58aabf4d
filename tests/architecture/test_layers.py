"""The layer rule (docs/architecture.md): a module imports only from its own layer or the
layers below it, and files that import each other in a circle share one folder.

Imports are read from the source (every ``import``, including those inside functions and
under ``TYPE_CHECKING``), so a lazy import counts as much as a top-level one.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "dispatchlab"

#: Bottom to top: the top-level modules and packages of each layer.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"errors", "arrays", "provenance", "keyvalue", "lazy", "params", "numba_loader",
               "numba_aot", "atomic_output", "seeds", "input_files", "processes"}),
    frozenset({"traces", "stats"}),
    frozenset({"platform"}),
    frozenset({"workload"}),
    frozenset({"engine"}),
    frozenset({"energy", "estimates"}),
    frozenset({"metrics"}),
    frozenset({"dispatchers"}),
    frozenset({"simulation", "run_settings"}),
    frozenset({"tuning", "live", "experiments", "extend", "__init__"}),
    frozenset({"report"}),
    frozenset({"cli"}),
)

#: Imports that run up a layer on purpose, each with its reason (at most 3).
ALLOWED_UPWARD: dict[tuple[str, str], str] = {
    ("dispatchlab.platform.presets", "dispatchlab.dispatchers.malleable.cost"):
        "the mejri-N platform preset is the malleable family's machine (Table 1's boot and "
        "shutdown delays live with the family's server power model); imported on use",
}


def module_name(path: Path) -> str:
    """``dispatchlab.engine.state`` for ``src/dispatchlab/engine/state.py``."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def module_names() -> frozenset[str]:
    """Every module of the package (``dispatchlab.engine`` for ``engine/__init__.py``)."""
    return frozenset(module_name(p) for p in PACKAGE.rglob("*.py"))


def imports_of(path: Path, modules: frozenset[str] | None = None) -> set[str]:
    """The ``dispatchlab`` modules ``path`` imports (see :func:`imports_in`)."""
    return imports_in(path.read_text(encoding="utf-8"), module_name(path),
                      path.name == "__init__.py",
                      module_names() if modules is None else modules)


def imports_in(source: str, name: str, is_package: bool, modules: frozenset[str]) -> set[str]:
    """The ``dispatchlab`` modules that module ``name`` (a package's ``__init__`` when
    ``is_package``) imports in ``source``, relative imports resolved.

    ``from pkg import name`` imports the module ``pkg.name`` when that is one of the
    package's ``modules`` (a submodule, as in ``from dispatchlab.engine import kernels`` or
    ``from . import handlers``), else the module ``pkg`` (a name defined in it).
    """
    package = name.split(".") if is_package else name.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                out.add(submodule if submodule in modules else target)
    return {t for t in out if t == "dispatchlab" or t.startswith("dispatchlab.")}


def layer_of(module: str) -> int:
    """The layer index of ``module`` (its top-level part under ``dispatchlab``)."""
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    for k, members in enumerate(LAYERS):
        if top in members:
            return k
    raise AssertionError(f"{module}: '{top}' has no layer: add it to LAYERS (and to "
                         "docs/architecture.md)")


def graph() -> dict[str, set[str]]:
    """Module → imported modules that are files of the package."""
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = frozenset(files)
    out: dict[str, set[str]] = {}
    for name, path in files.items():
        targets = set()
        for t in imports_of(path, modules):
            while t and t not in files:  # ``from pkg.mod import name`` names the module
                t = t.rpartition(".")[0]
            if t and t != name:
                targets.add(t)
        out[name] = targets
    return out


def test_no_import_runs_up_a_layer() -> None:
    upward = sorted((a, b) for a, targets in graph().items() for b in targets
                    if layer_of(b) > layer_of(a) and (a, b) not in ALLOWED_UPWARD)
    assert upward == [], "imports running up the layers:\n" + "\n".join(
        f"  {a} -> {b}" for a, b in upward)
    assert len(ALLOWED_UPWARD) <= 3


def test_the_engine_knows_no_dispatcher() -> None:
    """No exception for the engine: it reaches dispatchers through the protocol only (a
    dispatcher's compiled plan carries the loop that runs it), never by an import."""
    found = sorted((a, b) for a, targets in graph().items() for b in targets
                   if a.startswith("dispatchlab.engine")
                   and b.startswith("dispatchlab.dispatchers"))
    assert found == [], f"the engine imports dispatchers: {found}"


def test_allowed_exceptions_still_exist() -> None:
    """An exception that no longer occurs is removed from the list."""
    g = graph()
    assert all(b in g.get(a, set()) for a, b in ALLOWED_UPWARD)


def _cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in g:
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def _folder(module: str) -> str:
    path = PACKAGE.parent / module.replace(".", "/")
    return module if path.is_dir() else module.rpartition(".")[0]


def test_import_circles_stay_inside_one_folder() -> None:
    spanning = [c for c in _cycles(graph()) if len({_folder(m) for m in c}) > 1]
    assert spanning == [], f"import circles across folders: {spanning}"


def test_the_checker_sees_what_it_must() -> None:
    """The rule's own parts on a known case: a circle is found, layers are ordered."""
    g: dict[str, set[str]] = defaultdict(set, {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()})
    assert _cycles(dict(g)) == [["a", "b", "c"]]
    assert layer_of("dispatchlab.cli.app") > layer_of("dispatchlab.engine.simulator") \
        > layer_of("dispatchlab.platform.platform") > layer_of("dispatchlab.errors")
    assert "dispatchlab.engine.state" in imports_of(PACKAGE / "engine" / "simulator.py")


def test_from_a_package_import_a_module_names_the_module() -> None:
    """``from dispatchlab.engine import kernels`` imports ``engine/kernels.py``, not the
    package (the rule would not see it otherwise); relative imports resolve the same way."""
    assert "dispatchlab.engine.kernels" in imports_of(PACKAGE / "engine" / "appliers.py")
    modules = frozenset({"dispatchlab.engine", "dispatchlab.engine.kernels",
                         "dispatchlab.engine.state", "dispatchlab.engine.compiled",
                         "dispatchlab.engine.compiled.select"})
    source = ("from dispatchlab.engine import kernels, Simulator\n"
              "from .. import state\n"
              "from . import select as chosen\n"
              "from ..state import SystemView\n")
    assert imports_in(source, "dispatchlab.engine.compiled.plan", False, modules) == {
        "dispatchlab.engine.kernels", "dispatchlab.engine", "dispatchlab.engine.state",
        "dispatchlab.engine.compiled.select"}
    assert imports_in("from . import kernels\n", "dispatchlab.engine", True, modules) == {
        "dispatchlab.engine.kernels"}


def test_exported_names_survive_importing_every_submodule() -> None:
    """Importing ``pkg.name`` for the first time rebinds ``pkg.name`` to the submodule: a
    function exported (lazily) under a submodule's name would work only until then."""
    import importlib
    import types

    modules = sorted(module_name(p) for p in PACKAGE.rglob("*.py"))
    for name in modules:
        importlib.import_module(name)
    shadowed = []
    for init in sorted(PACKAGE.rglob("__init__.py")):
        package = importlib.import_module(module_name(init))
        shadowed += [f"{package.__name__}.{n}" for n in getattr(package, "__all__", ())
                     if isinstance(getattr(package, n), types.ModuleType)]
    assert shadowed == []
