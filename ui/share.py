"""The "Copy presentation link" of a shown result: its page's address with ``?present=1&run=RUN_ID``, which
opens that stored result in Present mode in a fresh browser (``ui.presentation``)."""

from __future__ import annotations

import streamlit as st

from core.results.links import presentation_url
from ui.layout import controls


def share_link(run_id: str, key: str) -> None:
    """The "Copy presentation link" control of a shown result (a control: gone in Present mode)."""
    with controls(f"share_{key}"), st.popover("Copy presentation link", icon=":material/link:"):
        st.caption(
            "Opens this result in Present mode in any browser that reaches this dashboard, without loading a "
            "model. Copy it with the button at the link's right."
        )
        st.code(presentation_url(st.context.url or "", run_id), language=None, wrap_lines=True)
