"""Streamlit pieces of the Loss delta page: a loss-delta report, verdict first (with a base model, how fine-tuning
moved each set's loss just under it), then the downloads, the tables, the Δ² chart with the study's threshold
and the reference-set check.

The statistics and the verdict come from ``core.loss_delta``, its sentences from ``core.loss_delta.describe``, the
charts from ``core.viz.loss_delta_plots`` and the downloads from ``core.viz.reports.loss_delta``.
"""

from __future__ import annotations

import html

import streamlit as st

from core.loss_delta.delta import LeakageReport
from core.loss_delta.describe import (
    below_threshold,
    below_threshold_note,
    data_label,
    models_tested,
    reference_check_rule,
)
from core.loss_delta.finding import leakage_finding
from core.results.stored import StoredResult
from core.viz.loss_delta_plots import delta2_bars, delta_bars, loss_change_html, problem_scatter
from core.viz.reports.loss_delta import leakage_report, problems_csv, summary_csv
from ui.common import metric_columns
from ui.finding import finding_banner
from ui.layout import controls, details
from ui.results import more_details
from ui.share import share_link


def show_report(report: LeakageReport, threshold: float) -> None:
    """The verdict and the loss bars, then the downloads and (in ``details``) everything behind them;
    ``threshold`` is the Δ² threshold the reader chose (a display setting: the report stays current)."""
    finding = leakage_finding(report)
    st.subheader(f"{data_label(report)} · {models_tested(report)}")
    finding_banner(finding)
    changes = loss_change_html(report)
    if changes:
        st.html(changes)
    st.plotly_chart(delta_bars(report), width="stretch", key="ld_bars")
    with controls("ld_exports"):
        cols = st.columns(3)
        cols[0].download_button(
            "Report (HTML)",
            lambda: leakage_report(report),
            "loss_delta_report.html",
            "text/html",
            key="ld_report",
            on_click="ignore",
            icon=":material/description:",
            help="One self-contained file: the verdict, the charts and the numbers.",
        )
        cols[1].download_button(
            "Loss delta per model (CSV)",
            summary_csv(report, finding),
            "loss_delta.csv",
            "text/csv",
            key="ld_csv_delta",
            on_click="ignore",
            icon=":material/download:",
        )
        cols[2].download_button(
            "Per-problem losses (CSV)",
            problems_csv(report, finding),
            "loss_delta_problems.csv",
            "text/csv",
            key="ld_csv_problems",
            on_click="ignore",
            icon=":material/download:",
        )
    if report.run_id:
        share_link(report.run_id, "ld")
    with details("ld"):
        _show_details(report, threshold)


def _show_details(report: LeakageReport, threshold: float) -> None:
    first = report.models[0].stats
    pairing = "paired by task id" if report.paired else "unpaired (different task ids)"
    st.caption(
        f"{html.escape(report.test_name)}: {first.n_test} problems · {html.escape(report.ref_name)}: "
        f"{first.n_ref} problems · {pairing} · significance test: {report.test_used}"
    )
    if report.unmatched_test or report.unmatched_ref:
        st.caption(
            f"Left out for lack of a partner: {len(report.unmatched_test)} test and "
            f"{len(report.unmatched_ref)} reference problems."
        )
    st.dataframe(
        [
            {
                "Model": m.model,
                "L_test": m.stats.l_test,
                "L_ref": m.stats.l_ref,
                "Δ": m.stats.delta,
                "Δ CI low": m.stats.ci[0],
                "Δ CI high": m.stats.ci[1],
                "p": m.stats.p_value,
            }
            for m in report.models
        ],
        hide_index=True,
        width="stretch",
        column_config=metric_columns(("L_test", "L_ref", "Δ", "Δ CI low", "Δ CI high", "p"), "%.4f"),
    )
    if report.delta2_table():
        st.dataframe(
            report.delta2_table(),
            hide_index=True,
            width="stretch",
            column_config=metric_columns(("L_test", "L_ref", "Δ_SFT", "Δ_base", "Δ²"), "%.4f"),
        )
        st.plotly_chart(delta2_bars(report, threshold), width="stretch", key="ld_delta2")
        below = below_threshold(report, threshold)
        if below:
            st.caption(below_threshold_note(below, threshold))
    scored = [ml.model for ml in report.losses]
    if len(scored) > 1:
        with controls("ld_scatter"):
            model = st.selectbox("Per-problem losses of", scored, key="ld_scatter_model")
    else:
        model = scored[0]
    st.plotly_chart(problem_scatter(report, model), width="stretch", key="ld_scatter")
    st.subheader("Reference-set check")
    if report.flagged:
        st.caption(
            f"Reference problems that may be unfit as a reference (not evidence of leakage): {reference_check_rule()}."
        )
        st.dataframe(
            [{"task_id": f.task_id, "reasons": "; ".join(f.reasons)} for f in report.flagged],
            hide_index=True,
            width="stretch",
        )
    else:
        st.caption("No reference problem flagged.")


def results_more(stored: StoredResult) -> None:
    """The Results page's folded tables and further charts of a stored run of this test."""
    leakage = stored.result
    with more_details("delta"):
        first = leakage.models[0].stats
        st.caption(
            f"Loss-delta test · {first.n_test} benchmark and {first.n_ref} reference problems · "
            f"{'paired by task id' if leakage.paired else 'unpaired'} · significance test: {leakage.test_used}"
        )
        if leakage.delta2_table():
            st.html(loss_change_html(leakage))
            st.plotly_chart(delta2_bars(leakage), width="stretch", key="results_delta2_bars")
        st.dataframe(leakage.delta_table(), hide_index=True, width="stretch", key="results_delta_models")
