"""Home page content: what LeakLens answers, one card per page, and the active model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from core.errors import LeakLensError
from ui.common import current_model_spec, get_model
from ui.served_picker import SERVED_PAGES

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class PageCard:
    path: str
    title: str
    icon: str
    purpose: str
    url_path: str | None = None
    """The page's address when it is not the one Streamlit derives from the file name (kept for shared links)."""


PAGES: tuple[PageCard, ...] = (
    PageCard(
        "pages/1_Inspect_a_passage.py",
        "Inspect a passage",
        ":material/search:",
        "Paste one passage and see, token by token, how confidently the model predicts it, with every "
        "detector's score.",
    ),
    PageCard(
        "pages/2_Membership_benchmark.py",
        "Membership benchmark",
        ":material/dataset:",
        "Score a labelled dataset (members vs non-members) with many detectors and compare how well each "
        "separates them.",
    ),
    PageCard(
        "pages/3_Loss_delta.py",
        "Loss delta",
        ":material/compare_arrows:",
        "Compare the model's loss on a benchmark with its loss on freshly written reference text.",
    ),
    PageCard(
        "pages/4_MCQ_memorisation.py",
        "MCQ memorisation",
        ":material/quiz:",
        "Test whether the model completes multiple-choice options it should not know, and whether shuffling "
        "them changes its accuracy.",
    ),
    PageCard(
        "pages/5_Overlap_search.py",
        "Overlap search",
        ":material/manage_search:",
        "Find test items that appear (nearly) verbatim in a training corpus, report them and decontaminate.",
    ),
    PageCard(
        "pages/6_Dataset_inference.py",
        "Dataset inference",
        ":material/fact_check:",
        "Ask whether the model trained on a whole set of texts (a book, a benchmark, a corpus) and get a "
        "p-value, checked against texts from the same source that it never saw.",
    ),
    PageCard(
        "pages/8_Benchmark_order.py",
        "Benchmark order test",
        ":material/format_list_numbered:",
        "Ask whether the model read a benchmark file: does it find the examples likelier in the file's own order "
        "than shuffled? A model that never saw the file has no reason to.",
        url_path="Benchmark_order_test",
    ),
    PageCard(
        "pages/7_Results.py",
        "Results",
        ":material/leaderboard:",
        "Every method on every dataset ranked by AUROC with confidence intervals, ROC curves and export.",
    ),
)


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
            lm = get_model(spec)
        except LeakLensError as exc:
            st.error(str(exc))
            return
        served = lm.device_label == "server"
        extra = f" · runs on: {SERVED_PAGES}. The weights behind a server cannot be verified through its API."
        st.markdown(lm.status_line() + (extra if served else ""))
