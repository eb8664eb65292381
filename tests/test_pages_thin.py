"""Pages stay thin: a page script lays out widgets and calls ``core`` and ``ui``; it defines no helpers of its own
and types no rule numbers (thresholds, step counts) that belong with the code they govern.

Allowed in a page: a small function Streamlit calls back (named in an ``on_click=`` / ``on_change=`` keyword),
a function handed to ``st.Page`` / ``st.navigation`` (``app.py``'s Home page), and UPPER_CASE numbers used only
as arguments of Streamlit commands (a layout size such as ``st.container(height=...)``), never inside text.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import streamlit as st

REPO = Path(__file__).resolve().parents[1]
PAGES = [*sorted((REPO / "pages").glob("*.py")), REPO / "app.py"]
CALLBACK_KEYWORDS = ("on_click", "on_change")
PAGE_MAKERS = ("Page", "navigation")
STREAMLIT_COMMANDS = frozenset(name for name in dir(st) if not name.startswith("_"))
UPPER_CASE = re.compile(r"^[A-Z][A-Z0-9_]*$")
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _is_st_call(node: ast.AST, names: tuple[str, ...] | frozenset[str]) -> bool:
    """``st.NAME(...)`` for one of ``names``."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in names
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "st"
    )


def _is_streamlit_command(node: ast.AST) -> bool:
    """A call of a Streamlit command, on ``st`` or on a container of it (``cols[0].number_input(...)``)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in STREAMLIT_COMMANDS


def _arguments(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(keyword.value for keyword in call.keywords)]


def _callbacks(tree: ast.AST) -> set[str]:
    """Names Streamlit calls back: ``on_click=NAME`` / ``on_change=NAME``, and any name inside the arguments
    of ``st.Page(...)`` / ``st.navigation(...)`` (a page function, possibly through a helper)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        found |= {k.value.id for k in node.keywords if k.arg in CALLBACK_KEYWORDS and isinstance(k.value, ast.Name)}
        if _is_st_call(node, PAGE_MAKERS):
            found |= {n.id for arg in _arguments(node) for n in ast.walk(arg) if isinstance(n, ast.Name)}
    return found


def _module_level(tree: ast.Module) -> list[ast.stmt]:
    """Every statement outside a function or class body (inside ``with`` / ``if`` / ``for`` / ``try`` too)."""
    found: list[ast.stmt] = []
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        statement = todo.pop(0)
        found.append(statement)
        if isinstance(statement, DEFINITIONS):
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            todo.extend(getattr(statement, field, []))
    return found


def _number(node: ast.expr | None) -> float | None:
    """The value of an int or float literal (``-0.2`` included); None for anything else."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return sign * node.value
    return None


def _numeric_constants(tree: ast.Module) -> list[tuple[str, int]]:
    """(name, line) of each module-level ``UPPER_CASE = number`` other than 0 and 1."""
    found = []
    for statement in _module_level(tree):
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign):
            targets, value = [statement.target], statement.value
        else:
            continue
        number = _number(value)
        if number is None or number in (0, 1):
            continue
        found += [(t.id, statement.lineno) for t in targets if isinstance(t, ast.Name) and UPPER_CASE.match(t.id)]
    return found


def _layout_only(tree: ast.Module, name: str) -> bool:
    """True when ``name`` is read at least once, and only inside the arguments of Streamlit commands and
    never inside an f-string (a number in text is prose, which ``core`` builds)."""
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    if not uses:
        return False
    for use in uses:
        node, in_command = use, False
        while node in parents:
            parent = parents[node]
            if isinstance(parent, ast.JoinedStr):
                return False
            if _is_streamlit_command(parent) and node is not parent.func:
                in_command = True
            node = parent
        if not in_command:
            return False
    return True


def page_violations(source: str, name: str = "<page>") -> list[str]:
    """What a page script holds that belongs in ``ui/`` or ``core/``, one line each."""
    tree = ast.parse(source, filename=name)
    callbacks = _callbacks(tree)
    found = [
        f"{name}:{node.lineno} defines {node.name}: move it to ui/ (drawing) or core/ (logic)"
        for node in ast.walk(tree)
        if isinstance(node, DEFINITIONS) and (isinstance(node, ast.ClassDef) or node.name not in callbacks)
    ]
    found += [
        f"{name}:{line} sets {constant}: a rule number belongs with the code it governs in core/"
        for constant, line in _numeric_constants(tree)
        if not _layout_only(tree, constant)
    ]
    return sorted(found, key=lambda line: int(line.split(":")[1].split()[0]))


def test_pages_only_lay_out_widgets_and_call_core_and_ui():
    found = [line for path in PAGES for line in page_violations(path.read_text(), path.name)]
    assert found == [], "pages must stay thin:\n" + "\n".join(found)


PLANTED = """
import streamlit as st
from ui.common import page_setup

MANY_CARDS = 8
THRESHOLD = -0.02
STEPS = 50
UNUSED = 3
LIMIT = 1
label_width = 7


def home():
    page_setup("Home")


def _choose(run_id):
    st.session_state["open"] = run_id


def page_batch_size(n):
    return max(1, n // STEPS)


class Kept:
    pass


st.navigation(app_pages(home)).run()
with st.container(height=620 if page_batch_size(10) > MANY_CARDS else "content"):
    def _inner():
        return None
    st.button("Open", on_click=_choose, args=("a",))
    st.number_input("Threshold", value=THRESHOLD)
    st.caption(f"Flagged below {THRESHOLD}")
"""


def test_the_check_finds_planted_helpers_and_rule_numbers():
    assert page_violations(PLANTED, "planted.py") == [
        "planted.py:6 sets THRESHOLD: a rule number belongs with the code it governs in core/",
        "planted.py:7 sets STEPS: a rule number belongs with the code it governs in core/",
        "planted.py:8 sets UNUSED: a rule number belongs with the code it governs in core/",
        "planted.py:21 defines page_batch_size: move it to ui/ (drawing) or core/ (logic)",
        "planted.py:25 defines Kept: move it to ui/ (drawing) or core/ (logic)",
        "planted.py:31 defines _inner: move it to ui/ (drawing) or core/ (logic)",
    ]


def test_callbacks_page_functions_and_layout_numbers_are_allowed():
    allowed = """
import streamlit as st

MANY_CARDS = 8


def home():
    pass


def _use_full_set():
    st.session_state["methods"] = []


def _sync():
    pass


st.navigation([st.Page(home, title="Home")]).run()
st.button("All", on_click=_use_full_set)
st.toggle("Present", on_change=_sync)
cols = st.columns(2)
with st.container(height=620 if cols else MANY_CARDS):
    cols[0].number_input("Size", 1, MANY_CARDS)
"""
    assert page_violations(allowed) == []
