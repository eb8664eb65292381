"""The module maps in ``docs/architecture.md`` cannot drift from the tree: every module of ``core/`` and ``ui/``
has its line there, and every line names a module that exists.

The maps are the fenced blocks that open with ``core/`` (section "`core/`") and ``ui/`` (section "Pages stay
thin"). Each is an indented tree: a line starting with ``name/`` opens a package, one starting with ``name.py``
(or a comma-separated ``a.py, b.py, ...``) names modules of the package above it; text after the names is the
module's one-line job, and lines holding only that text continue it. A package's ``__init__.py`` needs a line
only when it does more than hold a docstring and re-export names.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "architecture.md"
MAPPED = ("core", "ui")
ENTRY = re.compile(r"^((?:\w+\.py,\s*)*\w+(?:\.py|/))(?:,?\s|,?$)")


def map_blocks(text: str) -> list[list[str]]:
    """The fenced blocks whose first line is one of the mapped packages (``core/``, ``ui/``)."""
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    return [block.splitlines() for block in blocks if block.split("\n", 1)[0].strip() in {f"{p}/" for p in MAPPED}]


def documented_modules(lines: list[str]) -> set[str]:
    """Repository paths (``core/engine/models.py``) named by one map block's tree."""
    found: set[str] = set()
    parents: list[tuple[int, str]] = []  # (indent, package path) of the packages enclosing the current line
    for line in lines:
        stripped = line.lstrip(" ")
        match = ENTRY.match(stripped)
        if not stripped or not match:
            continue  # a blank line or the continuation of a job
        indent = len(line) - len(stripped)
        while parents and parents[-1][0] >= indent:
            parents.pop()
        if parents and indent > parents[-1][0] + 2 and not match.group(1).endswith("/"):
            # deeper than a child of the package: a job's continuation that happens to start with a file name
            continue
        prefix = parents[-1][1] if parents else ""
        for name in re.split(r",\s*", match.group(1)):
            if name.endswith("/"):
                parents.append((indent, prefix + name))
            else:
                found.add(prefix + name)
    return found


def _does_something(init: Path) -> bool:
    """Whether a package's ``__init__.py`` holds more than a docstring, imports and ``__all__``."""
    for index, node in enumerate(ast.parse(init.read_text()).body):
        if index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["__all__"]:
            continue
        return True
    return False


def tree_modules(root: Path = REPO) -> set[str]:
    """Every module of ``core/`` and ``ui/`` that the map must name, as a repository path."""
    return {
        path.relative_to(root).as_posix()
        for package in MAPPED
        for path in (root / package).rglob("*.py")
        if path.name != "__init__.py" or _does_something(path)
    }


def _documented() -> set[str]:
    return set().union(*(documented_modules(block) for block in map_blocks(DOC.read_text())))


def test_both_maps_are_found():
    roots = {block[0].strip() for block in map_blocks(DOC.read_text())}
    assert roots == {"core/", "ui/"}


def test_every_module_is_in_the_map():
    missing = sorted(tree_modules() - _documented())
    assert missing == [], "modules without a line in docs/architecture.md's map: " + ", ".join(missing)


def test_every_mapped_module_exists():
    gone = sorted(path for path in _documented() if not (REPO / path).is_file())
    assert gone == [], "docs/architecture.md's map names modules that do not exist: " + ", ".join(gone)


def test_the_map_reader_follows_packages_lists_and_continuations():
    block = [
        "core/",
        "  __init__.py           the version",
        "  files/",
        "    outputs.py          the one writer; a long job",
        "                        continued.py here is not a module",
        "    backends/",
        "      base.py           the interface",
        "  cli/                  commands",
        "    a_cmd.py, b_cmd.py,",
        "    c_cmd.py            one module per command",
        "    d.py",
    ]
    assert documented_modules(block) == {
        "core/__init__.py",
        "core/files/outputs.py",
        "core/files/backends/base.py",
        "core/cli/a_cmd.py",
        "core/cli/b_cmd.py",
        "core/cli/c_cmd.py",
        "core/cli/d.py",
    }


def test_a_new_module_without_a_line_is_caught(tmp_path):
    (tmp_path / "core" / "stats").mkdir(parents=True)
    (tmp_path / "ui").mkdir()
    (tmp_path / "core" / "__init__.py").write_text('"""Doc."""\n\n__version__ = "1"\n')
    (tmp_path / "core" / "stats" / "__init__.py").write_text('"""Doc."""\n\nfrom core.stats.metrics import auroc\n')
    (tmp_path / "core" / "stats" / "metrics.py").write_text("")
    (tmp_path / "core" / "stats" / "new.py").write_text("")
    documented = documented_modules(["core/", "  __init__.py  v", "  stats/", "    metrics.py  AUROC"])
    assert tree_modules(tmp_path) - documented == {"core/stats/new.py"}
