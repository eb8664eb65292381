"""Streamlit pieces of the Dataset inference page: the cached loader of each set and the result, verdict first,
then the downloads and (in ``details``) the numbers and charts behind it.

The test and its verdict come from ``core.dataset_inference``, the set names from ``core.dataset_inference.labels``,
the charts from ``core.viz.dataset_inference_plots`` and the downloads from ``core.viz.reports.dataset_inference``.
"""

from __future__ import annotations

import json
from dataclasses import replace

import streamlit as st

from core.data.text_sets import TextSet, load_text_set, parse_where
from core.dataset_inference.labels import heading, set_label
from core.dataset_inference.run import DatasetInference
from core.dataset_inference.statistic import texts_for_power
from core.results.stored import StoredResult
from core.viz.dataset_inference_plots import detector_weights, held_out_scores, split_p_values
from core.viz.reports.dataset_inference import detectors_csv, inference_report, result_table_csv, texts_csv
from ui.dataset_picker import DatasetChoice, load_choice
from ui.finding import finding_banner
from ui.layout import controls, details
from ui.results import more_details
from ui.share import share_link


@st.cache_data(show_spinner="Reading the texts…", max_entries=16)
def load_texts(choice: DatasetChoice, where: str, text_col: str | None, limit: int | None) -> TextSet:
    """The picked set's texts (the rows matching ``where``, ``COLUMN=VALUE`` as typed), named as the verdict
    calls it (``core.dataset_inference.labels.set_label``); read once per choice and settings."""
    text_set = load_choice(load_text_set, choice, text_col=text_col, where=parse_where(where), limit=limit)
    return replace(text_set, name=set_label(choice.source, where, text_set.name, upload=choice.is_upload))


def show_inference(inference: DatasetInference) -> None:
    """The verdict and the held-out scores, the downloads, then the numbers and charts behind the verdict."""
    result = inference.result
    st.subheader(heading(inference))
    finding_banner(inference.finding)
    st.plotly_chart(held_out_scores(inference), width="stretch", key="di_scores")
    with controls("di_downloads"):
        cols = st.columns(4)
        cols[0].download_button(
            "Report (HTML)", inference_report(inference), "leaklens_dataset_inference.html", "text/html", key="di_html"
        )
        cols[1].download_button(
            "Test result (CSV)", result_table_csv(inference), "dataset_inference_result.csv", "text/csv", key="di_csv"
        )
        cols[2].download_button(
            "Each detector's AUROC (CSV)",
            detectors_csv(inference),
            "dataset_inference_detectors.csv",
            "text/csv",
            key="di_detectors_csv",
        )
        cols[3].download_button(
            "Per-text scores (CSV)", texts_csv(inference), "dataset_inference_texts.csv", "text/csv", key="di_texts_csv"
        )
        st.download_button(
            "Result (JSON)",
            json.dumps(inference.to_dict(), indent=2, default=str),
            "dataset_inference.json",
            "application/json",
            key="di_json",
        )
    if inference.run_id:
        share_link(inference.run_id, "di")
    with details("di_numbers"):
        blind = inference.scores.blind_baseline
        cols = st.columns(4)
        cols[0].metric(
            "p-value",
            f"{result.p_value:.2g}",
            help="Twice the median p-value of the random splits: valid however dependent the splits are.",
        )
        cols[1].metric(
            "Texts", f"{result.n_suspect} + {result.n_validation}", help="Suspect + validation texts scored."
        )
        cols[2].metric(
            "Effect (Cohen's d)",
            f"{result.effect_size:+.2f}",
            help="How far apart the held-out combined scores of the two sets are, in standard deviations.",
        )
        cols[3].metric(
            "Wording alone (blind AUROC)",
            "n/a" if blind is None else f"{blind.auroc:.2f}",
            help="A bag-of-words classifier that never sees the model; near 0.5 means the sets read alike.",
        )
        needed = texts_for_power(result.effect_size)
        st.caption(
            f"An effect of this size needs about {needed} texts per set for an 80% chance of p < 0.05."
            if needed
            else "The scores point away from the suspect set (its texts look less familiar to the model), so more "
            "texts could settle on no sign, not on evidence that the model trained on it."
        )
        st.plotly_chart(split_p_values(inference), width="stretch", key="di_splits_chart")
        st.plotly_chart(detector_weights(inference), width="stretch", key="di_weights")
        with st.expander("Each detector alone (AUROC, suspect vs validation)"):
            st.dataframe(
                inference.scores.table_rows(),
                hide_index=True,
                width="stretch",
                column_order=["label", "auroc", "ci_low", "ci_high", "n"],
            )


def results_more(stored: StoredResult) -> None:
    """The Results page's folded tables and further charts of a stored run of this test."""
    inference = stored.result
    with more_details("inference"):
        result = inference.result
        st.caption(
            f"Dataset inference · {result.n_suspect} suspect and {result.n_validation} validation texts · "
            f"{len(result.split_p_values)} random splits · p = {result.p_value:.2g}"
        )
        st.plotly_chart(detector_weights(inference), width="stretch", key="results_inference_weights")
        st.plotly_chart(split_p_values(inference), width="stretch", key="results_inference_splits")
