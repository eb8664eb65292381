"""Streamlit pieces of the Membership benchmark page: the method picker, the cached dataset loader and the
stored runs' results (the verdict and the AUROC bars first, then the table, the ROC curves and the scores).

Scoring and the verdict come from ``core.membership``, the charts from ``core.viz.membership_plots``; this
module only arranges them.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from core.data.demo import dataset_label
from core.data.labelled import LabelledDataset, load_labelled_dataset
from core.errors import LeakLensError
from core.membership.benchmark import BenchmarkResult, result_from_store
from core.membership.finding import membership_finding, wording_rivals_detectors
from core.membership.method_choice import method_choices
from core.methods import default_methods, parse_methods
from core.methods.base import Method
from core.methods.reference import DEFAULT_REFERENCE
from core.results.stored import StoredResult
from core.store.results import ResultStore, RunInfo
from core.viz.membership_plots import detector_summary, member_score_histogram, roc_overlay, top_methods
from ui.common import metric_columns
from ui.dataset_picker import DatasetChoice, load_choice
from ui.finding import finding_banner
from ui.layout import controls, details
from ui.results import more_details, run_exports
from ui.share import share_link


@st.cache_data(show_spinner="Reading the dataset…", max_entries=16)
def load_labelled(
    choice: DatasetChoice, text_col: str | None, label_col: str | None, limit: int | None, seed: int
) -> LabelledDataset:
    """The picked dataset as labelled membership data (read once per choice and settings)."""
    return load_choice(load_labelled_dataset, choice, text_col=text_col, label_col=label_col, limit=limit, seed=seed)


def method_picker() -> tuple[list[Method], str | None]:
    """The chosen methods and, when the reference-model method is among them, the reference model."""
    labels = method_choices()
    chosen = st.multiselect(
        "Methods",
        list(labels),
        default=[m.key for m in default_methods()],
        format_func=lambda k: labels[k],
        help="The standard set needs one forward pass per text (plus k-gram windows for the k-gram slopes).",
        key="mb_methods",
    )
    reference = None
    if "reference" in chosen:
        reference = st.text_input(
            "Reference model",
            value=DEFAULT_REFERENCE,
            help="Bundled name, local directory or hub id; must differ from the target model.",
            key="mb_reference",
        )
        chosen = [c for c in chosen if c != "reference"]
    return parse_methods(chosen) if chosen else [], (reference or "").strip() or None


def show_benchmark(store: ResultStore, run: RunInfo, result: BenchmarkResult, key_prefix: str) -> None:
    """One stored run: the verdict, the detectors' chart and the downloads, then the table, the blind baseline, ROC
    curves and scores."""
    origin = "read from the store" if result.from_store else f"{result.n_computed} texts scored"
    st.subheader(f"{dataset_label(result.dataset)} · {result.model}")
    finding = membership_finding(result)
    finding_banner(finding)
    st.plotly_chart(detector_summary(result), width="stretch", key=f"{key_prefix}_bars")
    run_exports(store, StoredResult(run, result, finding), key=key_prefix, report_label="Report (HTML)")
    share_link(run.run_id, key_prefix)
    with details(f"{key_prefix}_table"):
        st.caption(f"{result.n} texts ({sum(result.labels)} members) · {origin} · listed on the Results page")
        rows = result.table_rows()
        st.dataframe(
            [
                {
                    "method": r["label"],
                    "key": r["method"],
                    "AUROC": r["auroc"],
                    "CI low": r["ci_low"],
                    "CI high": r["ci_high"],
                    "TPR@1%FPR": r["tpr_at_1_fpr"],
                    "TPR@5%FPR": r["tpr_at_5_fpr"],
                }
                for r in rows
            ],
            hide_index=True,
            width="stretch",
            column_config=metric_columns(("AUROC", "CI low", "CI high", "TPR@1%FPR", "TPR@5%FPR")),
        )
        if result.blind_baseline is not None:
            best = max((m.auroc for m in result.metrics.values() if m is not None), default=0.0)
            message = f"Blind baseline AUROC {result.blind_baseline.auroc:.3f} (no model); best detector {best:.3f}."
            if wording_rivals_detectors(result):
                st.warning(
                    message + " The wording alone, above chance, separates these labels as well as any "
                    "detector: read the detectors' AUROCs with care."
                )
            else:
                st.info(message)
        for note in result.notes:
            st.caption(f"Note: {note}")
        available = [k for k in result.method_keys if result.metrics.get(k) is not None]
        if not available:
            return
        labels = result.method_labels
        left, right = st.columns(2)
        with left:
            with controls(f"{key_prefix}_roc"):
                shown = st.multiselect(
                    "ROC curves",
                    available,
                    default=top_methods(result, 5),
                    format_func=lambda k: labels.get(k, k),
                    key=f"{key_prefix}_roc",
                )
            st.plotly_chart(roc_overlay(result, shown), width="stretch", key=f"{key_prefix}_roc_chart")
        with right:
            with controls(f"{key_prefix}_dist"):
                method = st.selectbox(
                    "Score distribution", available, format_func=lambda k: labels.get(k, k), key=f"{key_prefix}_dist"
                )
            st.plotly_chart(member_score_histogram(result, method), width="stretch", key=f"{key_prefix}_dist_chart")


def show_runs(run_ids: list[tuple[str, int]]) -> None:
    """The finished runs among ``(run id, texts this session scored)``, each read back from the store."""
    store = ResultStore()
    for index, (run_id, n_computed) in enumerate(run_ids):
        run = store.get_run(run_id)
        if run is None or not run.finished:
            continue
        try:
            result = replace(result_from_store(store, run), n_computed=n_computed)
            show_benchmark(store, run, result, key_prefix=f"run{index}")
        except LeakLensError as exc:
            st.error(str(exc))


def results_more(stored: StoredResult) -> None:
    """The Results page's folded tables and further charts of a stored run of this test."""
    result = stored.result
    with more_details("membership"):
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
