"""Home page content: what LeakLens answers, one card per page (each test's from its registered kind), and the
active model."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from core.errors import LeakLensError
from core.results.kinds import TEST_PAGES, PageCard
from ui.common import current_model_spec, get_model
from ui.served_picker import SERVED_PAGES

ROOT = Path(__file__).resolve().parents[1]


RESULTS_PAGE = PageCard(
    "pages/7_Results.py",
    "Results",
    ":material/leaderboard:",
    "Every method on every dataset ranked by AUROC with confidence intervals, ROC curves and export.",
)
PAGES: tuple[PageCard, ...] = (*TEST_PAGES, RESULTS_PAGE)
"""One card per page: each test's page as its kind registers it (``core.results.kinds``), then Results."""


def render_home() -> None:
    st.title("LeakLens")
    st.markdown(
        "**Has this language model seen this text before?** LeakLens measures how a model predicts a text, "
        "token by token, and turns that into membership scores you can compare against texts you know it saw "
        "and texts it cannot have seen."
    )
    _model_status()
    st.subheader("What each page is for")
    columns = st.columns(3)
    for index, card in enumerate(PAGES):
        with columns[index % 3].container(border=True):
            available = (ROOT / card.path).exists()
            if available:
                st.page_link(card.path, label=card.title, icon=card.icon)
            else:
                st.markdown(f"**{card.title}** · _not installed yet_")
            st.caption(card.purpose)


def _model_status() -> None:
    spec = current_model_spec()
    with st.container(border=True):
        st.markdown(f"**Active model:** `{spec}` — change it in the sidebar; every page uses the same one.")
        try:
            lm = get_model()
        except LeakLensError as exc:
            st.error(str(exc))
            return
        served = lm.device_label == "server"
        extra = f" · runs on: {SERVED_PAGES}. The weights behind a server cannot be verified through its API."
        st.markdown(lm.status_line() + (extra if served else ""))
