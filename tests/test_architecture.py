"""The shape of ``core/``: feature subpackages only, and no import cycle between its modules."""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "core"
TOP_LEVEL_ALLOWED = {"__init__.py", "__main__.py", "errors.py", "config.py"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(CORE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """Every core module ``path`` imports, at module level or inside functions (a lazy import still couples)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            if name in modules:
                found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for p in CORE.rglob("*.py")}
    modules = set(files)
    graph = {name: _imports(path, modules) - {name} for name, path in files.items()}
    # A package's __init__ is imported on the way to any of its modules; it only counts as an edge target
    # when imported by name, which _imports already records.
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_core_has_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_cycle_finder_finds_a_planted_cycle():
    graph = {"core.a": {"core.b"}, "core.b": {"core.c"}, "core.c": {"core.a"}, "core.d": set()}
    assert find_cycle(graph) == ["core.a", "core.b", "core.c", "core.a"]
    assert find_cycle({"core.a": {"core.b"}, "core.b": set()}) is None


def test_core_modules_live_in_feature_packages():
    stray = sorted(p.name for p in CORE.glob("*.py") if p.name not in TOP_LEVEL_ALLOWED)
    assert stray == [], f"modules outside a core/ subpackage: {stray}"
    packages = {p.parent.name for p in CORE.glob("*/__init__.py")}
    assert {
        "engine",
        "methods",
        "stats",
        "data",
        "store",
        "membership",
        "loss_delta",
        "mcq",
        "overlap",
        "viz",
        "cli",
    } <= packages


def test_pages_hold_no_bare_strings_streamlit_would_print():
    """Streamlit's "magic" renders a bare string statement on the page: only the docstring may be one."""
    pages = sorted((CORE.parent / "pages").glob("*.py")) + [CORE.parent / "app.py"]
    found = [
        f"{path.name}:{node.lineno}"
        for path in pages
        for index, node in enumerate(ast.parse(path.read_text()).body)
        if index > 0
        and isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    ]
    assert found == [], f"bare strings a page would print: {found}"


# ------------------------------------------------------------------------------------------ one-way layers

LAYERS: tuple[tuple[str, ...], ...] = (
    ("core", "core.errors"),
    ("core.files",),
    ("core.config",),
    ("core.data",),
    ("core.engine",),
    ("core.methods",),
    ("core.stats",),
    ("core.store",),
    ("core.membership", "core.loss_delta", "core.mcq", "core.overlap", "core.benchmark_order"),
    ("core.dataset_inference", "core.passage"),
    ("core.audit",),
    ("core.viz",),
    ("core.results",),
    ("core.cli",),
    ("core.__main__",),
    ("ui",),
    ("pages", "app"),
)
"""Lowest first, as ``docs/architecture.md`` draws them: a module imports only from its own package or from a
lower layer. Packages sharing a layer (the five independent tests) import none of each other."""
TESTS_LAYER = LAYERS.index(("core.membership", "core.loss_delta", "core.mcq", "core.overlap", "core.benchmark_order"))
"""Where a package of ``core/`` that ``LAYERS`` does not name sits: a new test's feature package, independent of the
others (one built on another test's runs, as dataset inference is on membership's, goes on the line above)."""


def layer_of(module: str) -> tuple[int, str]:
    """(rank, package) of a module: the longest ``LAYERS`` entry that is the module or a package holding it; a
    package of ``core/`` named nowhere is a test's feature package (``TESTS_LAYER``)."""
    best: tuple[int, str] | None = None
    for rank, packages in enumerate(LAYERS):
        for package in packages:
            holds = module == package or module.startswith(package + ".")
            if holds and (best is None or len(package) > len(best[1])):
                best = (rank, package)
    if best is not None and best[1] == "core" and module.count(".") >= 1:
        return TESTS_LAYER, ".".join(module.split(".")[:2])
    if best is None:
        raise ValueError(f"{module} is in no layer: add its package to LAYERS")
    return best


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import that points up a layer or sideways into another package of the same layer."""
    found = []
    for module, imported in sorted(graph.items()):
        rank, package = layer_of(module)
        for target in sorted(imported):
            target_rank, target_package = layer_of(target)
            if target_rank > rank or (target_rank == rank and target_package != package):
                found.append(f"{module} -> {target}")
    return found


def _whole_graph() -> dict[str, set[str]]:
    """Imports of every module of core/, ui/, pages/ and app.py, lazy ones included, as module names."""
    root = CORE.parent
    files = {p: _module_name(p) for p in CORE.rglob("*.py")}
    files |= {
        p: ".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        for p in [*root.joinpath("ui").rglob("*.py"), *root.joinpath("pages").glob("*.py"), root / "app.py"]
    }
    graph: dict[str, set[str]] = {}
    for path, name in files.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets.add(node.module)
        graph[name] = {t for t in targets if t.split(".")[0] in ("core", "ui", "pages")} - {name}
    return graph


def test_every_import_points_down_the_layers():
    violations = layer_violations(_whole_graph())
    assert violations == [], "imports that point up (or across) the layers:\n" + "\n".join(violations)


def test_the_layer_check_finds_a_planted_upward_import():
    graph = {
        "core.engine.scoring": {"core.data.text"},  # down: fine
        "core.engine.auxiliary": {"core.methods.base"},  # up
        "core.mcq.stored": {"core.membership.benchmark"},  # across, same layer
        "core.data.labelled": {"core.data.fingerprint", "core.errors"},  # own package, lower: fine
    }
    assert layer_violations(graph) == [
        "core.engine.auxiliary -> core.methods.base",
        "core.mcq.stored -> core.membership.benchmark",
    ]


def test_a_package_named_nowhere_is_a_tests_feature_package():
    """A new test's package needs no line in LAYERS: it sits with the independent tests, below core.viz."""
    assert layer_of("core.newtest.run") == (TESTS_LAYER, "core.newtest")
    assert layer_of("core.newtest") == (TESTS_LAYER, "core.newtest")
    graph = {
        "core.newtest.run": {"core.store.stored_run", "core.newtest.finding"},  # down, own package: fine
        "core.newtest.finding": {"core.viz.style"},  # up
        "core.newtest.stats": {"core.membership.benchmark"},  # across, same layer
        "core.results.kinds": {"core.newtest.run"},  # down: fine
    }
    assert layer_violations(graph) == [
        "core.newtest.finding -> core.viz.style",
        "core.newtest.stats -> core.membership.benchmark",
    ]
