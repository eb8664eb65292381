"""The Results page's parts: a stored run reopened once, its card, and the opened run drawn as its kind
registers it (``core.results.kinds``): the verdict, the chart that carries it, its downloads, then what backs
it up, folded (``results_more`` of the kind's page module, ``PageCard.ui_module``). A kind without one shows its
verdict, chart and downloads alone.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import streamlit as st

from core.results.compare import same_question, why_they_differ
from core.results.kinds import RunKind, kind_of
from core.results.report import stored_runs_report
from core.results.stored import StoredResult, run_card, stored_csv, try_open
from core.store.results import ResultStore, RunInfo
from core.viz.run_cards import RunCard, card_html
from ui.finding import finding_banner
from ui.layout import controls, details
from ui.share import share_link


@st.cache_resource(max_entries=256, show_spinner=False)
def _reopened(path: str, run_id: str, finished_at: float | None) -> tuple[StoredResult | None, str | None]:
    """A finished run rebuilt once per run (finished runs never change), or why it cannot be."""
    stored = ResultStore(path)
    run = stored.get_run(run_id)
    if run is None:
        return None, "This run is no longer stored."
    return try_open(stored, run)


def reopened(store: ResultStore, run: RunInfo) -> tuple[StoredResult | None, str | None]:
    """(the run reopened, None) or (None, why it cannot be), rebuilt once per session's server."""
    return _reopened(str(store.path), run.run_id, run.finished_at)


def card(store: ResultStore, run: RunInfo) -> RunCard:
    return run_card(run, *reopened(store, run))


@contextmanager
def more_details(key: str) -> Iterator[None]:
    """What backs the opened run's verdict up, folded: the list of runs stays close under the verdict. A kind's
    ``results_more(stored)`` (in its page's ``ui`` module, ``PageCard.ui_module``) draws into it."""
    with details(key), st.expander("Tables and further charts", key=f"results_more_{key}"):
        yield


def run_exports(
    store: ResultStore,
    stored: StoredResult,
    *,
    key: str = "results_run",
    report_label: str = "Report of this run (HTML)",
) -> None:
    """A stored run's downloads, named for what they hold (the Results page, and a page showing a stored run)."""
    with controls(f"{key}_exports"):
        csv = stored_csv(stored)
        left, right, _ = st.columns([1, 1, 2])
        left.download_button(
            report_label,
            lambda: stored_runs_report(store, [stored.run]),
            file_name=f"leaklens_{stored.kind}_report.html",
            mime="text/html",
            key=f"{key}_html",
            help="Opens in any browser without the app or a network.",
        )
        right.download_button(
            csv.label,
            csv.text,
            file_name=csv.file_name,
            mime="text/csv",
            key=f"{key}_csv",
            help="Every row starts with the verdict, the model and the data.",
        )


def show_run(store: ResultStore, run: RunInfo, why_shown: str) -> None:
    """The opened run: what it is about, its verdict, the chart that carries it, then the rest in details."""
    stored, why = reopened(store, run)
    shown = card(store, run)
    st.subheader(f"{shown.data} · {shown.model}")
    st.caption(f"{shown.test} · finished {shown.date} · {why_shown}")
    if stored is None:
        st.warning(why)
        return
    finding_banner(stored.finding)
    kind = kind_of(run.kind)
    lead = _page_view(kind, "results_lead")
    if lead is not None:
        lead(stored)
    if kind.figure is not None:
        st.plotly_chart(kind.figure(stored.result), width="stretch", key=kind.chart_key)
    run_exports(store, stored)
    share_link(run.run_id, "results")
    more = _page_view(kind, "results_more")
    if more is not None:
        more(stored)


def _page_view(kind: RunKind, name: str) -> Callable[[StoredResult], None] | None:
    """A view of the kind's page ``ui`` module, if it has one: ``results_lead`` (drawn right under the verdict, such
    as an audit's evidence table) or ``results_more`` (its folded tables and further charts)."""
    if kind.page is None or kind.page.ui_module is None:
        return None
    return getattr(importlib.import_module(kind.page.ui_module), name, None)


def show_same_question(store: ResultStore, run: RunInfo, runs: Sequence[RunInfo]) -> None:
    """The opened run beside another stored run of its question (test, model, data), and why they may differ.

    Two runs of one question that read two levels look like a contradiction; side by side with the choices
    that differ (rows, detectors, settings), they read as two answers to two slightly different questions.
    """
    others = same_question(runs, run)
    if not others:
        return
    shown = card(store, run)
    cards = {other.run_id: card(store, other) for other in others}
    other_id = others[0].run_id
    if len(others) > 1:
        with controls("same_question_choice"):
            other_id = st.selectbox(
                "Set beside it",
                list(cards),
                format_func=lambda rid: f"{cards[rid].date} · {cards[rid].level or 'not opened'}",
                key=f"results_same_question_{run.run_id}",
            )
    other = next(o for o in others if o.run_id == other_id)
    same_level = cards[other_id].level == shown.level
    title = (
        f"This question was run {len(others) + 1} times"
        + (": the other run reads the same level" if same_level and len(others) == 1 else "")
        + ("" if same_level else ": another run reads another level, and why")
    )
    with st.expander(title, expanded=not same_level, icon=":material/compare_arrows:"):
        left, right = st.columns(2)
        left.caption("This run")
        left.html(card_html(shown))
        right.caption("The other run")
        right.html(card_html(cards[other_id]))
        reasons = why_they_differ(run, other)
        if reasons:
            st.markdown("**Why they may differ**\n" + "\n".join(f"- {reason}" for reason in reasons))
        else:
            st.caption("Nothing recorded differs between the two runs.")
