"""Results that say what they were computed for, and say so loudly once the inputs have changed.

A page keeps its result together with the inputs that produced it (``keep_result``) and draws it with
``show_result``, which compares those inputs with the page's current ones on every rerun. A result whose
inputs differ is never shown as current: a warning above it names what changed (old → new) and how to
update it, and the result itself is dimmed until the page's run button is pressed again. Nothing here
recomputes anything; it only decides how an existing result is labelled.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from ui.dataset_picker import DatasetChoice

STALE_HEADLINE = "Out of date: these results are for earlier inputs."
MAX_BRIEF = 60
EXCERPT_WORDS = 8
STALE_CSS = """<style>
.st-key-result_{key} {{ opacity: 0.4; filter: grayscale(1); }}
:has(> .st-key-stale_{key}) {{ position: sticky; top: 3.75rem; z-index: 99; }}
.st-key-stale_{key} {{ background: #ffffff; padding: 0.25rem 0; }}
</style>"""
"""Dim the old result, and keep its warning in view while the reader scrolls through it: the sticky box is
the warning container's layout wrapper (the container itself is exactly as tall as its wrapper)."""


@dataclass(frozen=True)
class Input:
    """One input of a result: compared by ``value``, shown to people as ``brief``."""

    label: str
    """What a person calls it, lower case (``"sample size"``); unique within one result's inputs."""
    value: object
    """Anything comparable with ``==`` (a full text, a tuple, a ``DatasetChoice`` with its bytes)."""
    brief: str
    """One short line for people; shown in a code span, so it never turns into markup."""


def brief(value: object) -> str:
    """A short, single-line, markup-free rendering of an input value."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, DatasetChoice):
        return value.brief
    if isinstance(value, Mapping):
        return ", ".join(f"{brief(k)} → {brief(v)}" for k, v in value.items()) or "none"
    if isinstance(value, list | tuple | set | frozenset):
        return ", ".join(brief(v) for v in value) or "none"
    text = " ".join(str(value).split()).replace("`", "'")
    if not text:
        return "empty"
    if len(text) <= MAX_BRIEF:
        return text
    half = (MAX_BRIEF - 1) // 2  # keep both ends: a path's tail and a name's head both matter
    return f"{text[:half]}…{text[-half:]}"


def setting(label: str, value: object) -> Input:
    """An option, a model, a column name, a list of them: compared as given, shown by ``brief``."""
    return Input(label, value, brief(value))


def typed_text(label: str, text: str) -> Input:
    """A text the user typed: compared in full, shown as its first words and its length."""
    words = text.split()
    if not words:
        return Input(label, text, "empty")
    excerpt = brief(" ".join(words[:EXCERPT_WORDS]))
    more = "…" if len(words) > EXCERPT_WORDS else ""
    return Input(label, text, f"{excerpt}{more} ({len(words)} word{'s' if len(words) != 1 else ''})")


def changes(then: Sequence[Input], now: Sequence[Input]) -> list[tuple[str, str, str]]:
    """``(label, brief then, brief now)`` for every input that differs; one present on one side only counts."""
    before = {i.label: i for i in then}
    after = {i.label: i for i in now}
    labels = [i.label for i in then] + [i.label for i in now if i.label not in before]
    found = []
    for label in labels:
        old, new = before.get(label), after.get(label)
        if old is None or new is None or old.value != new.value:
            found.append((label, old.brief if old else "none", new.brief if new else "none"))
    return found


def _join(labels: Sequence[str]) -> str:
    if len(labels) > 3:
        return "several inputs"
    named = [f"the {label}" for label in labels]
    return named[0] if len(named) == 1 else f"{', '.join(named[:-1])} and {named[-1]}"


def stale_message(found: Sequence[tuple[str, str, str]], action: str) -> str:
    """The warning above an out-of-date result: that it is, what changed, how to update it, each change."""
    changed = _join([label for label, _, _ in found])
    lines = [
        f"**{STALE_HEADLINE}** {changed[0].upper()}{changed[1:]} changed since they were computed; "
        f"press **{action}** to update them."
    ]
    lines += [f"- {label}: `{old}` → now `{new}`" for label, old, new in found]
    return "\n".join(lines)


def computed_for(inputs: Sequence[Input]) -> str:
    """The caption every shown result carries: the inputs it was computed for."""
    return "Computed for " + " · ".join(f"{i.label} `{i.brief}`" for i in inputs)


def _inputs_key(key: str) -> str:
    return f"{key}_inputs"


def keep_result(key: str, result: Any, inputs: Sequence[Input]) -> None:
    """Remember ``result`` under ``st.session_state[key]`` with the inputs it was computed for; None clears."""
    if result is None:
        forget_result(key)
        return
    st.session_state[key] = result
    st.session_state[_inputs_key(key)] = tuple(inputs)


def forget_result(key: str) -> None:
    st.session_state.pop(key, None)
    st.session_state.pop(_inputs_key(key), None)


def show_result(key: str, inputs: Sequence[Input], render: Callable[[Any], None], *, action: str) -> bool:
    """Draw the kept result with what it was computed for; warn and dim it when ``inputs`` differ.

    ``action`` is the label of the button that recomputes (``"Analyse"``). Returns whether a result was
    drawn. The result sits in a container keyed ``result_{key}`` (class ``st-key-result_{key}``).
    """
    result = st.session_state.get(key)
    if result is None:
        return False
    then: Sequence[Input] = st.session_state.get(_inputs_key(key), ())
    found = changes(then, inputs)
    if found:
        with st.container(key=f"stale_{key}"):
            st.warning(stale_message(found, action), icon=":material/update:")
        st.html(STALE_CSS.format(key=key))
    with st.container(key=f"result_{key}"):
        render(result)
        with st.container(key=f"details_computed_{key}"):  # left out in Present mode (ui.layout)
            st.caption(computed_for(then))
    return True
