"""Streamlit pieces of the MCQ memorisation page: the last run, verdict first, then the downloads, the probe
shown, the summary, the order test and each question as the model continued it.

The probes, the shuffle and the verdict come from ``core.mcq``, the charts from ``core.viz.mcq_plots``, the
downloads from ``core.viz.reports.mcq``; this module only arranges them.
"""

from __future__ import annotations

from typing import Any, NamedTuple, cast

import streamlit as st

from core.data.demo import dataset_label, demo_sample_note
from core.data.questions import to_jsonl
from core.mcq.completion import ProbeKind
from core.mcq.finding import mcq_finding
from core.mcq.study import MCQReport
from core.results.stored import StoredResult
from core.viz.mcq_plots import PROBE_TITLES, mcq_score_distribution, rank_histogram
from core.viz.mcq_view import question_html
from core.viz.reports.mcq import VERDICT_PROBE, mcq_report_html, questions_csv
from ui.finding import finding_banner
from ui.layout import controls, details
from ui.results import more_details
from ui.share import share_link


class MCQRun(NamedTuple):
    """What the page keeps of the last run between reruns."""

    report: MCQReport
    model: str
    benchmark: str
    skipped: str
    n_computed: int
    """Questions measured by that run (0: read from the store)."""
    run_id: str = ""
    """The stored run's id: its presentation link opens it."""


def show_run(shown: MCQRun) -> None:
    """The verdict and the score distribution of the verdict's probe, the downloads, then the details."""
    report, model, benchmark = shown.report, shown.model, dataset_label(shown.benchmark)
    finding = mcq_finding(report)
    st.subheader(f"{benchmark} · {model}")
    finding_banner(finding)
    small = demo_sample_note(shown.benchmark, finding.level, "questions")
    if small:
        st.info(small, icon=":material/science:")
    st.plotly_chart(mcq_score_distribution(report, VERDICT_PROBE), width="stretch", key="mcq_dist")
    with controls("mcq_exports"):
        cols = st.columns(3)
        cols[0].download_button(
            "Report (HTML)",
            lambda: mcq_report_html(report, model=model, benchmark=benchmark),
            "mcq_report.html",
            "text/html",
            key="mcq_report_html",
            on_click="ignore",
            icon=":material/description:",
            help="One self-contained file: the verdict, the charts and the numbers.",
        )
        cols[1].download_button(
            "Per-question scores (CSV)",
            questions_csv(report, finding, model=model, benchmark=benchmark),
            "mcq_scores.csv",
            "text/csv",
            key="mcq_csv",
            on_click="ignore",
            icon=":material/download:",
        )
        cols[2].download_button(
            "Shuffled benchmark (JSONL)",
            to_jsonl(report.shuffled_questions),
            "shuffled_benchmark.jsonl",
            "application/jsonl",
            key="mcq_jsonl",
            on_click="ignore",
            icon=":material/download:",
            help="The same questions with their options shuffled: a release less easy to memorise by heart.",
        )
    if shown.run_id:
        share_link(shown.run_id, "mcq")
    with details("mcq"):
        _show_details(shown)


def _show_details(shown: MCQRun) -> None:
    report = shown.report
    if shown.skipped:
        st.caption(shown.skipped)
    if shown.n_computed:
        st.success(
            f"{shown.n_computed} questions measured and stored: the Results page opens and exports this "
            "run, and an identical run is read back instead of measured again."
        )
    else:
        st.success(
            "Read from the store: these questions were measured earlier with the same model and settings, "
            "so nothing was recomputed. The Results page opens and exports this run."
        )
    with controls("mcq_probe"):
        # The probe shown is a view of the same measurements, so it is not an input of the result.
        kind = cast(
            ProbeKind,
            st.selectbox(
                "Probe shown",
                ["completion", "next_token", "similar"],
                format_func=lambda k: PROBE_TITLES[k],
                key="mcq_probe",
            ),
        )
    payload: dict[str, Any] = report.to_dict(model=shown.model, benchmark=shown.benchmark)
    k = report.original.n_options
    cols = st.columns(4)
    how = {
        "completion": "the greedy continuation of an option's first half reproduces the rest exactly",
        "next_token": "the greedy next token is the option's next token",
        "similar": "the greedy continuation is close enough to the rest of the option",
    }.get(kind, kind)
    cols[0].metric("Questions", payload["n"], help="Questions scored in this run.")
    cols[1].metric(
        f"Mean score, original ({kind})",
        f"{report.original.summary(kind).mean:.2f} of {k}",
        help=f"Options per question the model reproduced, in the published order (counted when {how}).",
    )
    cols[2].metric(
        f"Mean score, shuffled ({kind})",
        f"{report.shuffled.summary(kind).mean:.2f} of {k}",
        help="The same score after shuffling the options: what a shuffled release leaves.",
    )
    cols[3].metric(
        "Mitigation (drop)",
        f"{report.mitigation.drop(kind):+.2f}",
        help="Original minus shuffled score: how much shuffling the options removes.",
    )
    if kind != VERDICT_PROBE:
        st.plotly_chart(mcq_score_distribution(report, kind), width="stretch", key="mcq_dist_shown")

    st.subheader("Summary (model × benchmark)")
    st.dataframe(payload["summary"], hide_index=True, width="stretch", key="mcq_summary")

    if report.permutation is not None:
        st.plotly_chart(rank_histogram(report), width="stretch", key="mcq_ranks")
        perm = payload["permutation"]
        st.caption(
            f"Original order most likely for {perm['top1_fraction']:.1%} of questions "
            f"(chance {1 / perm['n_orders']:.1%}, binomial p = {perm['p_value_top1']:.2g})."
        )

    st.subheader("Questions")
    st.dataframe(report.question_rows(), hide_index=True, width="stretch", key="mcq_questions")

    st.subheader("Per-question view")
    ranked = sorted(report.original.results, key=lambda r: -r.score(kind))
    labels = {f"#{r.question.index} · score {r.score(kind)} · {r.question.question[:80]}": r for r in ranked}
    with controls("mcq_question"):
        picked = st.selectbox("Question", list(labels), key="mcq_pick")
        which = st.radio("Options", ["original order", "shuffled"], horizontal=True, key="mcq_which")
    result = labels[picked]
    if which == "shuffled":
        result = next(r for r in report.shuffled.results if r.question.index == result.question.index)
    with st.expander("Full question", expanded=False):
        st.text(report.original.config.layout.render(result.question)[0])
    st.html(question_html(result))


def results_more(stored: StoredResult) -> None:
    """The Results page's folded tables and further charts of a stored run of this test."""
    report = stored.result
    with more_details("mcq"):
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
