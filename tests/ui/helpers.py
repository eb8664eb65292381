"""Helpers shared by the page tests: read what a result says about the inputs it was computed for."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from ui.freshness import STALE_HEADLINE


def stale_notes(app: AppTest) -> list[str]:
    """The out-of-date warnings on the page (at most one per shown result)."""
    return [w.value for w in app.warning if STALE_HEADLINE in w.value]


def computed_for(app: AppTest) -> str:
    """The one "Computed for …" caption of the shown result."""
    (caption,) = [c.value for c in app.caption if c.value.startswith("Computed for ")]
    return caption
