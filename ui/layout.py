"""Result-first pages: the verdict where the eye already is when a run ends, the inputs under it, and a Present
mode that shows a stakeholder only verdicts, key charts and plain explanations.

Every page is laid out by ``result_first_page``: the title (with the Present switch), then the *result area*
(progress and Cancel while a run goes, then the verdict banner and the chart that carries it), then *Setup*
(every input), which folds away once the page holds a result. Present mode (the switch, or ``?present=1`` in
the URL, so a link can be shared) hides Setup, the sidebar and every other control with CSS: the widgets stay
on the page, so their values, and with them the shown result, survive switching back.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.results.links import PRESENT_PARAM, RUN_PARAM
from ui.common import model_picker, page_setup
from ui.freshness import Input, keep_result
from ui.run_control import scroll_to_finding

PRESENT_KEY = "leaklens_present"
SETUP_KEY = "setup"
JUST_FINISHED_KEY = "leaklens_just_finished"
RESULT_AREA_KEY = "result_area"

PRESENT_CSS = """<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stExpandSidebarButton"],
.st-key-setup, [class*="st-key-controls_"], [class*="st-key-details_"],
.leaklens-numbers { display: none !important; }
[data-testid="stMainBlockContainer"] { padding-top: 2rem; }
</style>"""
SCROLL_TO_RESULT_JS = """<script>
(function go(tries) {
  const el = document.querySelector('.st-key-result_area');
  if (el) { el.style.scrollMarginTop = '4rem'; el.scrollIntoView({behavior: 'auto', block: 'start'}); }
  else if (tries > 0) { setTimeout(() => go(tries - 1), 100); }
})(20);
</script>"""


@dataclass(frozen=True)
class PageFrame:
    """Where a page draws: ``result`` at the top, ``setup`` below it."""

    result: DeltaGenerator
    setup: DeltaGenerator
    present: bool
    has_result: bool
    """The page holds a result of the session's own."""


def present_mode() -> bool:
    """True when the page is shown to an audience: ``?present=1`` in the URL (the switch sets it)."""
    return str(st.query_params.get(PRESENT_PARAM, "")).lower() in ("1", "true", "yes", "on")


def _sync_present() -> None:
    if st.session_state.get(PRESENT_KEY):
        st.query_params[PRESENT_PARAM] = "1"
    else:
        st.query_params.pop(PRESENT_PARAM, None)


def result_first_page(title: str, intro: str, *, has_result: bool, present_intro: str | None = None) -> PageFrame:
    """Set the page up result first and return its two areas.

    ``intro`` explains the page to someone running it; ``present_intro`` (default: the same) is the plain
    explanation an audience sees above the verdict in Present mode. Setup starts open and folds once
    ``has_result`` (the page holds a result): the verdict is then the first thing under the title.
    """
    page_setup(title)
    present = present_mode()
    st.session_state[PRESENT_KEY] = present
    model_picker()
    heading, switch = st.columns([5, 1], vertical_alignment="bottom")
    heading.title(title)
    switch.toggle(
        "Present",
        key=PRESENT_KEY,
        on_change=_sync_present,
        help="Show only the verdicts, key charts and plain explanations (for a meeting or a screen "
        "share). The link with ?present=1 opens the page this way.",
    )
    if present:
        st.html(PRESENT_CSS)
        st.markdown(present_intro or intro)
    else:
        st.caption(intro)
    result = st.container(key=RESULT_AREA_KEY)
    if st.session_state.get(JUST_FINISHED_KEY):
        st.session_state[SETUP_KEY] = False  # a fresh result: fold the inputs away under it
    setup = st.expander("Setup", expanded=not has_result, icon=":material/tune:", key=SETUP_KEY, on_change="rerun")
    return PageFrame(result=result, setup=setup, present=present, has_result=has_result)


@contextmanager
def controls(key: str) -> Iterator[None]:
    """A container for controls inside the result area (a chart picker, downloads): gone in Present mode."""
    with st.container(key=f"controls_{key}"):
        yield


@contextmanager
def details(key: str) -> Iterator[None]:
    """A container for what backs the verdict up (tables, further charts, what a result was computed for):
    shown while working, left out in Present mode."""
    with st.container(key=f"details_{key}"):
        yield


def scroll_to_result_area() -> None:
    """Bring the result area into view as a run starts there (the button that started it may be far below)."""
    st.html(SCROLL_TO_RESULT_JS, unsafe_allow_javascript=True)


def finish_run(key: str, result: Any, inputs: Sequence[Input]) -> None:
    """Keep a fresh result and draw the page again: Setup folds, the verdict is the first thing under the
    title, and the next draw brings it into view (``scroll_after_run``)."""
    keep_result(key, result, inputs)
    st.query_params.pop(RUN_PARAM, None)  # the address no longer names a linked run: this result replaces it
    st.session_state[JUST_FINISHED_KEY] = True
    st.rerun()


def scroll_after_run() -> None:
    """Once, right after ``finish_run``: bring the verdict into view wherever the reader had scrolled to."""
    if st.session_state.pop(JUST_FINISHED_KEY, False):
        scroll_to_finding()
