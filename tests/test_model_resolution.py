"""The model choice is resolved once: a model's text becomes a model (or a fact about one) only in the resolvers.

The command line (``core/cli/common.py``) and the sidebar (``ui/common.py``, ``ui/served_picker.py``) turn what the
user typed into a ``ModelHandle``; the handle (``core/engine/handle.py``) and the engine modules it calls load
the weights, read their identity and plan the start token; a run function that names a second model (a
reference or base model) asks the handle for it with ``beside``. Everywhere else a model's name is only a name:
a label, a cell, part of a stored key. These checks read the source, so a new room that parses a model spec
again fails here with its file and line.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = [p for d in ("core", "ui", "pages") for p in sorted((ROOT / d).rglob("*.py"))]

RESOLVERS = frozenset(
    {
        "resolve_model",
        "served_handle",
        "connect",
        "load_model",
        "model_identity",
        "planned_start_token",
        "model_kind",
        "is_served_name",
    }
)
"""Functions that read a model's text (or reach its server) to get a model or a fact about it."""

MAY_RESOLVE = {
    "core/engine/handle.py": RESOLVERS,
    "core/engine/models.py": {"model_kind"},
    "core/engine/identity.py": {"model_kind"},
    "core/cli/common.py": {"resolve_model", "connect", "served_handle"},
    "ui/common.py": {"resolve_model", "served_handle"},
    "ui/served_picker.py": {"connect"},
}
MAY_ASK_BESIDE = {
    "core/membership/benchmark.py",
    "core/loss_delta/run.py",
    "core/cli/loss_delta_cmd.py",
    "core/methods/reference.py",
}
"""Run functions that name a second model (reference, base, another tested model) and get it from the handle."""


def _engine_imports(tree: ast.Module) -> set[str]:
    """Names a module imports from ``core.engine``: a ``connect`` from sqlite3 is not a model's."""
    return {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("core.engine")
        for alias in node.names
    }


def resolutions(path: Path, source: str) -> list[tuple[str, int, str]]:
    """(file, line, function) for each call in ``source`` that turns a model's text into a model or its facts."""
    tree = ast.parse(source)
    name = path.relative_to(ROOT).as_posix()
    local = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    imported = _engine_imports(tree) | (local if name.startswith("core/engine/") else set())
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in RESOLVERS and func.id in imported:
            found.append((name, node.lineno, func.id))
        elif isinstance(func, ast.Attribute) and func.attr == "beside":
            found.append((name, node.lineno, "beside"))
    return found


def stray_resolutions(found: list[tuple[str, int, str]]) -> list[str]:
    strays = []
    for name, line, call in found:
        allowed = MAY_ASK_BESIDE if call == "beside" else set()
        if call == "beside" and name in allowed | {"core/engine/handle.py"}:
            continue
        if call != "beside" and call in MAY_RESOLVE.get(name, set()):
            continue
        strays.append(f"{name}:{line} calls {call}")
    return strays


def test_a_models_text_is_read_only_by_the_resolvers():
    found = [r for path in PRODUCT for r in resolutions(path, path.read_text())]
    assert stray_resolutions(found) == []
    assert {name for name, _, _ in found} >= {"core/engine/handle.py", "core/cli/common.py", "ui/common.py"}


def test_the_check_finds_a_view_that_turns_a_name_back_into_a_model():
    planted = (
        "from core.engine.models import load_model\n"
        "def draw(result, model):\n"
        "    load_model(result.model)\n"
        "    return model.beside(result.model)\n"
    )
    found = resolutions(ROOT / "ui" / "passage_view.py", planted)
    assert stray_resolutions(found) == ["ui/passage_view.py:3 calls load_model", "ui/passage_view.py:4 calls beside"]
    sqlite = "import sqlite3\ndef open_db(path):\n    return sqlite3.connect(path)\n"
    assert resolutions(ROOT / "core" / "store" / "results.py", sqlite) == []


def test_only_the_handle_reads_a_served_name():
    readers = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in PRODUCT
        for i, line in enumerate(p.read_text().splitlines(), 1)
        if "SERVED_PREFIX" in line and not line.lstrip().startswith(("from ", "import "))
    ]
    assert all(r.startswith(("core/engine/handle.py", "core/engine/served.py")) for r in readers), readers
    served = (ROOT / "core" / "engine" / "served.py").read_text()
    assert "startswith(SERVED_PREFIX)" not in served  # served.py only writes its own name; the handle reads it


CONTAINERS = {"dict", "defaultdict", "OrderedDict", "WeakKeyDictionary", "WeakValueDictionary", "list", "set"}


def connection_tables(path: Path, source: str) -> list[str]:
    """Module-level mutable containers that could hold connected models or handles, by type or by name."""
    tables = []
    for node in ast.parse(source).body:
        if not isinstance(node, ast.AnnAssign | ast.Assign) or node.value is None:
            continue
        value = node.value
        container = isinstance(value, ast.Dict | ast.List | ast.Set) or (
            isinstance(value, ast.Call) and ast.unparse(value.func).split(".")[-1] in CONTAINERS
        )
        targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
        names = " ".join(ast.unparse(t).lower() for t in targets)
        typed = ast.unparse(node.annotation) if isinstance(node, ast.AnnAssign) else ""
        about_models = any(w in names for w in ("connect", "served", "handle")) or "ServedModel" in (
            typed + ast.unparse(value)
        )
        if container and about_models:
            tables.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return tables


def test_no_module_keeps_a_table_of_connections():
    """A connection lives in its handle (and the sidebar's session), never in a module-level registry."""
    assert [t for path in PRODUCT for t in connection_tables(path, path.read_text())] == []
    planted = "_CONNECTED: dict[str, ServedModel] = {}\nSERVED_KEY = 'leaklens_served_model'\n"
    assert connection_tables(ROOT / "core" / "engine" / "served.py", planted) == ["core/engine/served.py:1"]


def test_no_room_asks_which_kind_of_source_it_holds():
    """The two sources answer one protocol; only their own modules name their classes in an isinstance."""
    adapters = {"core/engine/models.py", "core/engine/served.py", "core/engine/model_source.py"}
    checks = []
    for path in PRODUCT:
        name = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
                kinds = ast.unparse(node.args[1]) if len(node.args) > 1 else ""
                if ("LoadedModel" in kinds or "ServedModel" in kinds) and name not in adapters:
                    checks.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    assert checks == []
