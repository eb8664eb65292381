"""Shared Streamlit pieces: the model picker, the model choice resolved once per process, progress bars, errors."""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

import streamlit as st

from core.engine.bundled import available_bundled_models
from core.engine.handle import ModelHandle, resolve_model, served_handle
from core.engine.identity import identity_line
from core.engine.model_source import ScoringModel
from core.engine.models import DEFAULT_MODEL
from core.engine.progress import TimeLeft, format_duration
from core.engine.served import ServedModel
from core.errors import LeakLensError
from ui.served_picker import SERVED_LABEL, served_model_inputs

MODEL_KEY = "leaklens_model_spec"
SERVED_KEY = "leaklens_served_model"
"""The connected served model (its connection), kept by the session that pressed Check connection."""
HANDLE_KEY = "leaklens_model_handle"
"""The session's handle of its connected served model (a local model's handle is the process's, ``_local_handle``)."""
START_TOKEN_KEY = "leaklens_start_token"
DEFAULT_MODEL_ENV = "LEAKLENS_DEFAULT_MODEL"
ASSETS = Path(__file__).resolve().parents[1] / "assets"
DRAWING_CSS = """<style>
[data-testid="stSkeleton"] { position: relative; min-height: 5rem; }
[data-testid="stSkeleton"]::after, [data-testid="stPlotlyChart"]:not(:has(.main-svg))::after {
  content: "drawing…"; position: absolute; inset: 0; display: flex; align-items: center;
  justify-content: center; color: #4a5963; font-size: 0.95rem; font-style: italic; }
[data-testid="stPlotlyChart"]:not(:has(.main-svg)) { position: relative; min-height: 5rem; }
</style>"""
"""A chart not drawn yet (its code still loading on a busy machine) says "drawing…" instead of showing an empty
grey box, which reads as "nothing found" to someone who has just seen the verdict above it."""


def page_setup(title: str) -> None:
    """Wide layout, tab title, favicon and sidebar logo; call first on every page."""
    _use_app_navigation()
    st.set_page_config(
        page_title=f"{title} · LeakLens" if title != "LeakLens" else title,
        page_icon=str(ASSETS / "favicon.png"),
        layout="wide",
    )
    st.logo(str(ASSETS / "wordmark.svg"), icon_image=str(ASSETS / "logo.svg"), size="large")
    st.html(DRAWING_CSS)


def _use_app_navigation() -> None:
    """Make sure the page list comes from ``app.py``'s ``st.navigation``.

    Until some session has run ``app.py``, Streamlit treats a ``pages/`` folder the legacy way: a first
    visitor who opens a page URL directly gets that page without ``app.py`` and a sidebar listing "app"
    and file names. Switching the process to ``st.navigation`` and rerunning shows the same page (its URL
    path is the same) with the proper navigation.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def default_model_spec() -> str:
    """The model selected when the app starts (``$LEAKLENS_DEFAULT_MODEL`` overrides, e.g. for tests)."""
    return os.environ.get(DEFAULT_MODEL_ENV) or DEFAULT_MODEL


def current_model_spec() -> str:
    if MODEL_KEY not in st.session_state:
        st.session_state[MODEL_KEY] = default_model_spec()
    return st.session_state[MODEL_KEY]


def current_start_token() -> str | None:
    """The session's start-token override for its chosen model; None = the documented rule."""
    return (st.session_state.get(START_TOKEN_KEY) or "").strip() or None


def _loading_notice(spec: str) -> AbstractContextManager[object]:
    return st.spinner(f"Loading {spec}… the first load of the bundled model dequantises it once (~20 s).")


@st.cache_resource(show_spinner=False, max_entries=4)
def _local_handle(spec: str, start_token: str | None) -> ModelHandle:
    """One resolved handle per choice for the whole process: its weights load once (a spinner the first time)
    and every session shares them, with the identity read beside them, so the weights the sidebar names are
    the weights that score. A reference or base model beside it loads into the same handle family, without the
    start token."""
    return resolve_model(spec, start_token=start_token, loading_notice=_loading_notice)


def _connected() -> ServedModel | None:
    """The session's connected served model, when it is the session's choice."""
    served = st.session_state.get(SERVED_KEY)
    return served if served is not None and served.spec == st.session_state.get(MODEL_KEY) else None


def current_model() -> ModelHandle:
    """The session's model choice, resolved once per choice (the sidebar's model, start token and connection)
    and handed to every run function."""
    spec, start_token, served = current_model_spec(), current_start_token(), _connected()
    if served is None:
        return _local_handle(spec, start_token)
    cached = st.session_state.get(HANDLE_KEY)
    if cached is not None and cached[0] is served:
        return cached[1]
    handle = served_handle(served)
    st.session_state[HANDLE_KEY] = (served, handle)
    return handle


def get_model() -> ScoringModel:
    """The session's model, loaded (once per process) or connected."""
    return current_model().load()


def model_picker(*, where=st.sidebar, key: str = "model_picker") -> str:
    """Pick a bundled model, type any hub id / local directory, or reach a served model; the choice is
    shared by all pages."""
    current = current_model_spec()
    options = available_bundled_models()
    custom_label = "Other (hub id or local folder)…"
    choices = options + [custom_label, SERVED_LABEL]
    served = _connected()
    if current in options:
        index = options.index(current)
    else:
        index = len(options) + (1 if served is not None else 0)
    choice = where.selectbox("Model", choices, index=index, key=key, help="Shared by every page.")
    if choice == SERVED_LABEL:
        connected = served_model_inputs(where, key) or served
        if connected is not None:
            st.session_state[SERVED_KEY] = connected
            st.session_state[MODEL_KEY] = connected.spec
        return st.session_state[MODEL_KEY]
    if choice == custom_label:
        typed = where.text_input(
            "Hub id or local directory",
            value="" if current in options or served is not None else current,
            key=f"{key}_custom",
            placeholder="e.g. EleutherAI/pythia-160m or /models/my-checkpoint",
        )
        if typed.strip():
            st.session_state[MODEL_KEY] = typed.strip()
    else:
        st.session_state[MODEL_KEY] = choice
    with where.expander("Scoring options"):
        model = current_model()
        with st.spinner("Checking which weights this is (a local folder is hashed once)…"):
            try:
                st.caption(f"Weights: {identity_line(model.identity)}")
            except (OSError, LeakLensError) as exc:
                st.caption(f"Weights: not readable yet ({exc})")
        planned = model.start_token
        st.text_input(
            "Start token",
            key=START_TOKEN_KEY,
            placeholder=f"automatic: {planned}",
            help="The token every passage is scored after. Leave empty for the documented rule (never a chat-role "
            "token); it changes every score, so runs with another start token are stored apart.",
        )
    return st.session_state[MODEL_KEY]


def streamlit_progress(label: str) -> Callable[[int, int], None]:
    """A ``progress(done, total)`` callback that drives an ``st.progress`` bar, with the time left."""
    bar = st.progress(0.0, text=label)
    time_left = TimeLeft()

    def update(done: int, total: int) -> None:
        left = format_duration(time_left.update(done, total)) if done < total else ""
        suffix = f" · {left} left" if left else ""
        bar.progress(min(1.0, done / total) if total else 1.0, text=f"{label} ({done}/{total}{suffix})")

    return update


# Metric names a stakeholder can read: (plain label with the technical name in brackets, tooltip).
# Keys are the technical names the tables and files use; only what is shown on screen changes.
METRICS: dict[str, tuple[str, str]] = {
    "AUROC": (
        "Separates seen from unseen (AUROC)",
        "Area under the ROC curve: the chance that a random member (seen in training) scores higher than a "
        "random non-member. 0.5 = chance, 1.0 = perfect separation.",
    ),
    "CI low": ("95% CI low (AUROC)", "Lower end of the AUROC's 95% bootstrap confidence interval (1000 resamples)."),
    "CI high": ("95% CI high (AUROC)", "Upper end of the AUROC's 95% bootstrap confidence interval (1000 resamples)."),
    "TPR@1%FPR": (
        "Members caught at 1% false alarms (TPR@1%FPR)",
        "True-positive rate when the threshold lets only 1% of non-members through as members.",
    ),
    "TPR@5%FPR": (
        "Members caught at 5% false alarms (TPR@5%FPR)",
        "True-positive rate when the threshold lets only 5% of non-members through as members.",
    ),
    "L_test": (
        "Loss on benchmark (L_test)",
        "Mean loss (−log-probability per solution token, given the prompt) on the benchmark: lower = easier "
        "for the model.",
    ),
    "L_ref": (
        "Loss on reference (L_ref)",
        "Mean loss (−log-probability per solution token, given the prompt) on the freshly written reference set.",
    ),
    "Δ": (
        "Benchmark easier than reference (Δ)",
        "Δ = L_test − L_ref. Negative: the model finds this benchmark (or its style) easier than the reference.",
    ),
    "Δ CI low": ("95% CI low (Δ)", "Lower end of Δ's 95% bootstrap confidence interval."),
    "Δ CI high": ("95% CI high (Δ)", "Upper end of Δ's 95% bootstrap confidence interval."),
    "p": (
        "Chance of no real difference (p)",
        "p-value of the significance test: how likely a Δ this far from 0 is if both sets were equally easy.",
    ),
    "Δ_SFT": ("Δ after fine-tuning (Δ_SFT)", "Δ = L_test − L_ref of the fine-tuned model."),
    "Δ_base": ("Δ of the base model (Δ_base)", "Δ = L_test − L_ref of the base model it was fine-tuned from."),
    "Δ²": (
        "What fine-tuning added (Δ²)",
        "Δ² = Δ_SFT − Δ_base. Markedly negative: fine-tuning made the benchmark easier than the reference.",
    ),
}


def metric_label(key: str) -> str:
    """The plain label of a metric (its key when it has none)."""
    return METRICS.get(key, (key, ""))[0]


def metric_help(key: str) -> str | None:
    """The tooltip of a metric: what the technical name means."""
    return METRICS.get(key, (key, None))[1] or None


def metric_columns(keys, number_format: str = "%.3f") -> dict:
    """``column_config`` for number columns named by metric keys: plain label, tooltip, format."""
    return {k: st.column_config.NumberColumn(metric_label(k), help=metric_help(k), format=number_format) for k in keys}
