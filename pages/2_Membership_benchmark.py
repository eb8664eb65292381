"""Membership benchmark: score a labelled dataset with many detectors and compare them by AUROC."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from core.data.demo import dataset_label
from core.data.labelled import KNOWN_DATASETS, LabelledDataset, labelled_from_table, load_labelled_dataset
from core.data.tables import load_uploaded
from core.errors import LeakLensError
from core.membership.benchmark import (
    DEFAULT_BATCH_SIZE,
    KIND,
    BenchmarkResult,
    result_from_store,
    run_membership_benchmark,
)
from core.membership.finding import membership_finding
from core.methods import default_methods, parse_methods
from core.methods.auxiliary import auxiliary_cost
from core.methods.reference import DEFAULT_REFERENCE
from core.store.results import ResultStore
from core.viz.membership_plots import auroc_bars, member_score_histogram, roc_overlay, top_methods
from ui.common import current_model_spec, current_start_token, get_model, metric_columns, streamlit_progress
from ui.dataset_picker import DatasetChoice, dataset_picker, demo_examples, known_examples, unique_examples
from ui.finding import finding_banner
from ui.freshness import setting, show_result
from ui.layout import controls, details, finish_run, result_first_page, scroll_after_run, scroll_to_result_area
from ui.run_control import cancelled_notice, watched_run

RESULTS_KEY = "membership_benchmark_runs"
# Methods beyond the standard set: (name, what it needs); the pass count comes from ``auxiliary_cost``.
EXTRA_METHODS = {
    "recall": ("ReCaLL", "non-member prefix"),
    "neighbourhood": ("Neighbourhood comparison", "reworded neighbours"),
    "reference": ("Reference model", "needs a second model"),
}
EXAMPLES = unique_examples(demo_examples("membership"), known_examples(KNOWN_DATASETS))
# The bar moves at least this many times per run (the store writes, and Cancel stops, per batch).
PROGRESS_STEPS = 50


def page_batch_size(n: int) -> int:
    """Texts per stored batch on this page: 1 (per text) up to 50 texts, growing to the run loop's default.

    Scores do not depend on the batch size; a small batch makes the bar move and Cancel answer quickly.
    """
    return max(1, min(DEFAULT_BATCH_SIZE, n // PROGRESS_STEPS))


INTRO = ("Score a labelled dataset (1 = member, seen in training; 0 = non-member) with every detector and compare "
         "them by how well they tell members from non-members (AUROC, with a 95% interval). The blind baseline, a "
         "bag-of-words classifier that never sees the model, shows how separable the labels are from wording alone. "
         "Runs are stored: an interrupted run resumes, a finished one is shown without recomputing, and every run "
         "appears on the Results page.")
PRESENT_INTRO = ("**Did the model see these texts in training?** Each detector scores every text; if the model "
                 "saw the member texts, the detectors tell them apart from the non-members better than chance — "
                 "and better than a model-free classifier that only reads the wording.")
frame = result_first_page("Membership benchmark", INTRO, has_result=RESULTS_KEY in st.session_state,
                          present_intro=PRESENT_INTRO)


@st.cache_data(show_spinner="Reading the dataset…", max_entries=16)
def _load_cached(source: str, split: str | None, config: str | None, text_col: str | None, label_col: str | None,
                 limit: int | None, seed: int) -> LabelledDataset:
    return load_labelled_dataset(source, split=split, config=config, text_col=text_col, label_col=label_col,
                                 limit=limit, seed=seed)


def _load(choice: DatasetChoice, text_col: str | None, label_col: str | None, limit: int | None,
          seed: int) -> LabelledDataset:
    if choice.is_upload:
        table = load_uploaded(choice.data, choice.source)
        return labelled_from_table(table, text_col=text_col, label_col=label_col, limit=limit, seed=seed)
    return _load_cached(choice.source, choice.split, choice.config, text_col, label_col, limit, seed)


def _with_cost(key: str, name: str, needs: str) -> str:
    """e.g. 'ReCaLL (non-member prefix; +1 pass per text)': the extra passes as the run counts them."""
    passes = auxiliary_cost(parse_methods([key]))
    return f"{name} ({needs}; +{passes} pass{'es' if passes != 1 else ''} per text)"


def _method_picker() -> tuple[list, str | None]:
    defaults = default_methods()
    labels = {m.key: m.label for m in defaults} | {k: _with_cost(k, *v) for k, v in EXTRA_METHODS.items()}
    chosen = st.multiselect(
        "Methods", list(labels), default=[m.key for m in defaults], format_func=lambda k: labels[k],
        help="The standard set needs one forward pass per text (plus k-gram windows for the k-gram slopes).",
        key="mb_methods",
    )
    reference = None
    if "reference" in chosen:
        reference = st.text_input("Reference model", value=DEFAULT_REFERENCE,
                                  help="Bundled name, local directory or hub id; must differ from the target model.",
                                  key="mb_reference")
        chosen = [c for c in chosen if c != "reference"]
    return parse_methods(chosen) if chosen else [], (reference or "").strip() or None


def _show_result(result: BenchmarkResult, key_prefix: str) -> None:
    origin = "read from the store" if result.from_store else f"{result.n_computed} texts scored"
    st.subheader(f"{dataset_label(result.dataset)} · {result.model}")
    finding_banner(membership_finding(result))
    st.plotly_chart(auroc_bars(result), width="stretch", key=f"{key_prefix}_bars")
    with details(f"{key_prefix}_table"):
        st.caption(f"{result.n} texts ({sum(result.labels)} members) · {origin} · listed on the Results page")
        rows = result.table_rows()
        st.dataframe(
            [{"method": r["label"], "key": r["method"], "AUROC": r["auroc"], "CI low": r["ci_low"],
              "CI high": r["ci_high"], "TPR@1%FPR": r["tpr_at_1_fpr"], "TPR@5%FPR": r["tpr_at_5_fpr"]} for r in rows],
            hide_index=True, width="stretch",
            column_config=metric_columns(("AUROC", "CI low", "CI high", "TPR@1%FPR", "TPR@5%FPR")),
        )
        if result.blind_baseline is not None:
            best = max((m.auroc for m in result.metrics.values() if m is not None), default=0.0)
            message = (f"Blind baseline AUROC {result.blind_baseline.auroc:.3f} (no model); best detector {best:.3f}.")
            if result.blind_baseline.auroc >= best:
                st.warning(message + " The wording alone separates these labels as well as any detector: read "
                                     "the detectors' AUROCs with care.")
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
                shown = st.multiselect("ROC curves", available, default=top_methods(result, 5),
                                       format_func=lambda k: labels.get(k, k), key=f"{key_prefix}_roc")
            st.plotly_chart(roc_overlay(result, shown), width="stretch", key=f"{key_prefix}_roc_chart")
        with right:
            with controls(f"{key_prefix}_dist"):
                method = st.selectbox("Score distribution", available, format_func=lambda k: labels.get(k, k),
                                      key=f"{key_prefix}_dist")
            st.plotly_chart(member_score_histogram(result, method), width="stretch", key=f"{key_prefix}_dist_chart")


with frame.setup:
    choice = dataset_picker("Dataset", EXAMPLES, key="mb", path_placeholder="/data/my_benchmark.parquet",
                            hub_placeholder="swj0419/WikiMIA", split_placeholder="WikiMIA_length128")
    with st.expander("Columns and sample"):
        cols = st.columns(4)
        text_col = cols[0].text_input("Text column", placeholder="auto-detect", key="mb_text_col").strip() or None
        label_col = cols[1].text_input("Label column (0/1)", placeholder="auto-detect",
                                       key="mb_label_col").strip() or None
        limit = int(cols[2].number_input("Sample size (0 = all rows)", min_value=0, value=100, step=50,
                                         key="mb_limit"))
        seed = int(cols[3].number_input("Sample seed", min_value=0, value=0, key="mb_seed"))
    model = current_model_spec()
    st.caption(f"Model: **{model}** (chosen in the sidebar, shared by every page)")
    try:
        methods, reference = _method_picker()
    except LeakLensError as exc:
        st.error(str(exc))
        st.stop()

    dataset: LabelledDataset | None = None
    if choice is not None and not choice.is_hub:  # hub data is fetched only when the run starts
        try:
            dataset = _load(choice, text_col, label_col, limit or None, seed)
        except LeakLensError as exc:
            st.error(str(exc))
    if dataset is not None:
        st.caption(f"{dataset.describe()} · text column `{dataset.text_col}`, label column `{dataset.label_col}`")
        if dataset.skipped:
            st.caption(dataset.skipped_summary())

    inputs = [setting("dataset", choice), setting("text column", text_col or "auto"),
              setting("label column", label_col or "auto"), setting("sample size", limit or "all rows"),
              setting("sample seed", seed), setting("model", model),
              setting("methods", tuple(m.key for m in methods)), setting("reference model", reference),
              setting("start token", current_start_token() or "automatic")]
    run_clicked = st.button("Run benchmark", type="primary", disabled=choice is None or not methods,
                            key="mb_run")
with frame.result:
    if run_clicked and choice is not None:
        scroll_to_result_area()
        try:
            if dataset is None:
                dataset = _load(choice, text_col, label_col, limit or None, seed)
            store = ResultStore()
            with watched_run("mb", KIND, "texts"):
                progress = streamlit_progress(f"Scoring {dataset.n} texts with {model}")
                result = run_membership_benchmark(dataset, model, methods, store=store, reference_model=reference,
                                                  batch_size=page_batch_size(dataset.n), progress=progress,
                                                  load_model=get_model, start_token=current_start_token())
            finish_run(RESULTS_KEY, [(result.run_id, result.n_computed)], inputs)
        except LeakLensError as exc:
            st.error(str(exc))
    cancelled_notice("mb")


def _show_runs(run_ids: list[tuple[str, int]]) -> None:
    store = ResultStore()
    for index, (run_id, n_computed) in enumerate(run_ids):
        run = store.get_run(run_id)
        if run is None or not run.finished:
            continue
        try:
            result = replace(result_from_store(store, run), n_computed=n_computed)
            _show_result(result, key_prefix=f"run{index}")
        except LeakLensError as exc:
            st.error(str(exc))


with frame.result:
    shown = show_result(RESULTS_KEY, inputs, _show_runs, action="Run benchmark")
    if shown:
        scroll_after_run()
    elif choice is None:
        st.info("Choose a dataset in Setup to start: a ready example, an uploaded file, a local path or a hub "
                "dataset id.")
