"""Shared presentation links: every shown result offers ``?present=1&run=RUN_ID`` for its page, and a page
opened by such a link (or by a plain ``?present=1``) draws that stored run, or its most recent one, from the
store alone: no model is loaded, so a link opens at once in a fresh browser. Which run is ``core.results.links``.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from core.errors import LeakLensError
from core.results.links import RUN_PARAM, linked_run
from core.store.results import ResultStore
from ui.layout import PageFrame
from ui.results import show_run


def show_linked_result(frame: PageFrame, kinds: Sequence[str], *, how_to_make: str) -> bool:
    """Draw the run a link names (``?run=``), or in Present mode with no result of the session's own, the
    page's most recent stored run; returns whether a run was drawn. When there is none, one line says so and
    ``how_to_make`` one."""
    wanted = str(st.query_params.get(RUN_PARAM, "")).strip()
    if not wanted and (frame.has_result or not frame.present):
        return False
    store = ResultStore()
    with frame.result:
        try:
            runs = store.list_runs()
        except LeakLensError as exc:
            st.error(str(exc))
            return False
        linked = linked_run(runs, kinds, wanted, how_to_make=how_to_make)
        if linked.run is None:
            st.info(linked.message, icon=":material/slideshow:")
            return False
        show_run(store, linked.run, linked.why_shown)
    return True


def how_to_make(what: str) -> str:
    """The end of the line shown when there is nothing to present: how to get a result onto the page."""
    return f"Turn Present off, {what} in Setup, then turn Present on: the result opens here."
