"""The Results page's parts: a stored run reopened once, its card, and the opened run drawn as its kind
registers it (``core.results.kinds``): the verdict, the chart that carries it, its downloads, then what backs
it up, folded. A kind with no extra view here shows its verdict, chart and downloads alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import streamlit as st

from core.results.compare import same_question, why_they_differ
from core.results.kinds import COMPARISON_KIND, INFERENCE_KIND, MCQ_KIND, MEMBERSHIP_KIND, ORDER_KIND, kind_of
from core.results.report import stored_runs_report
from core.results.stored import StoredResult, run_card, stored_csv, try_open
from core.store.results import ResultStore, RunInfo
from core.viz.dataset_inference_plots import detector_weights, split_p_values
from core.viz.loss_delta_plots import delta2_bars, loss_change_html
from core.viz.mcq_plots import mcq_score_distribution, rank_histogram
from core.viz.membership_plots import roc_overlay, top_methods
from core.viz.run_cards import RunCard, card_html
from ui.benchmark_order import show_numbers
from ui.common import metric_columns
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
def _more(key: str) -> Iterator[None]:
    """What backs the opened run's verdict up, folded: the list of runs stays close under the verdict."""
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


def _more_membership(stored: StoredResult) -> None:
    result = stored.result
    with _more("membership"):
        members = sum(result.labels)
        st.caption(f"Membership benchmark · {result.n} texts ({members} members, {result.n - members} non-members)")
        st.dataframe(
            [
                {
                    "method": r["label"],
                    "AUROC": r["auroc"],
                    "CI low": r["ci_low"],
                    "CI high": r["ci_high"],
                    "TPR@1%FPR": r["tpr_at_1_fpr"],
                    "TPR@5%FPR": r["tpr_at_5_fpr"],
                }
                for r in result.table_rows()
            ],
            hide_index=True,
            width="stretch",
            column_config=metric_columns(("AUROC", "CI low", "CI high", "TPR@1%FPR", "TPR@5%FPR")),
        )
        for note in result.notes:
            st.caption(f"Note: {note}")
        available = [k for k in result.method_keys if result.metrics.get(k) is not None]
        with controls("roc"):
            shown = st.multiselect(
                "ROC curves",
                available,
                default=top_methods(result, 5),
                format_func=lambda k: result.method_labels.get(k, k),
                key="results_roc_methods",
            )
        st.plotly_chart(roc_overlay(result, shown), width="stretch", key="results_roc")


def _more_mcq(stored: StoredResult) -> None:
    report = stored.result
    with _more("mcq"):
        st.caption(
            f"Multiple-choice test · {len(report.original.results)} questions · "
            f"{report.original.n_options} options each · shuffle seed {report.mitigation.seed}"
        )
        st.plotly_chart(mcq_score_distribution(report, "next_token"), width="stretch", key="results_mcq_next")
        if report.permutation is not None:
            st.plotly_chart(rank_histogram(report), width="stretch", key="results_mcq_ranks")
        run = stored.run
        st.dataframe(
            report.to_dict(model=run.model, benchmark=run.dataset)["summary"],
            hide_index=True,
            width="stretch",
            key="results_mcq_summary",
        )
        with st.expander("Per question"):
            st.dataframe(report.question_rows(), hide_index=True, width="stretch", key="results_mcq_questions")


def _more_delta(stored: StoredResult) -> None:
    leakage = stored.result
    with _more("delta"):
        first = leakage.models[0].stats
        st.caption(
            f"Loss-delta test · {first.n_test} benchmark and {first.n_ref} reference problems · "
            f"{'paired by task id' if leakage.paired else 'unpaired'} · significance test: {leakage.test_used}"
        )
        if leakage.delta2_table():
            st.html(loss_change_html(leakage))
            st.plotly_chart(delta2_bars(leakage), width="stretch", key="results_delta2_bars")
        st.dataframe(leakage.delta_table(), hide_index=True, width="stretch", key="results_delta_models")


def _more_inference(stored: StoredResult) -> None:
    inference = stored.result
    with _more("inference"):
        result = inference.result
        st.caption(
            f"Dataset inference · {result.n_suspect} suspect and {result.n_validation} validation texts · "
            f"{len(result.split_p_values)} random splits · p = {result.p_value:.2g}"
        )
        st.plotly_chart(detector_weights(inference), width="stretch", key="results_inference_weights")
        st.plotly_chart(split_p_values(inference), width="stretch", key="results_inference_splits")


def _more_order(stored: StoredResult) -> None:
    test = stored.result
    with _more("order"):
        result = test.result
        st.caption(
            f"Benchmark-order test · {result.n_examples} examples in {len(result.shards)} shards · up to "
            f"{result.permutations} shuffles per shard (seed {result.seed})"
        )
        show_numbers(test, key="results_order")


MORE: dict[str, Callable[[StoredResult], None]] = {
    MEMBERSHIP_KIND: _more_membership,
    MCQ_KIND: _more_mcq,
    COMPARISON_KIND: _more_delta,
    INFERENCE_KIND: _more_inference,
    ORDER_KIND: _more_order,
}
"""The folded tables and further charts of each kind (optional: a kind without one shows its chart alone)."""
FIGURE_KEYS = {
    MEMBERSHIP_KIND: "results_bars",
    MCQ_KIND: "results_mcq_completion",
    COMPARISON_KIND: "results_delta_bars",
    INFERENCE_KIND: "results_inference_scores",
    ORDER_KIND: "results_order_chart",
}
"""Widget keys of the verdict's chart (a kind not named here gets ``results_KIND_figure``)."""


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
    if kind.figure is not None:
        st.plotly_chart(
            kind.figure(stored.result), width="stretch", key=FIGURE_KEYS.get(run.kind, f"results_{run.kind}_figure")
        )
    run_exports(store, stored)
    share_link(run.run_id, "results")
    if run.kind in MORE:
        MORE[run.kind](stored)


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
