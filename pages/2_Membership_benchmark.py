"""Membership benchmark: score a labelled dataset with many detectors and compare them by AUROC."""

from __future__ import annotations

import streamlit as st

from core.data.labelled import KNOWN_DATASETS, LabelledDataset
from core.errors import LeakLensError
from core.membership.benchmark import KIND, run_membership_benchmark
from core.store.results import ResultStore
from core.store.runloop import progress_batch_size
from ui.common import current_model, current_start_token, streamlit_progress
from ui.dataset_picker import dataset_picker, demo_examples, known_examples, unique_examples
from ui.freshness import setting, show_result
from ui.layout import finish_run, result_first_page, scroll_after_run, scroll_to_result_area
from ui.membership import load_labelled, method_picker, show_runs
from ui.presentation import how_to_make, show_linked_result
from ui.run_control import cancelled_notice, watched_run

RESULTS_KEY = "membership_benchmark_runs"
EXAMPLES = unique_examples(demo_examples("membership"), known_examples(KNOWN_DATASETS))

INTRO = (
    "Score a labelled dataset (1 = member, seen in training; 0 = non-member) with every detector and compare "
    "them by how well they tell members from non-members (AUROC, with a 95% interval). The blind baseline, a "
    "bag-of-words classifier that never sees the model, shows how separable the labels are from wording alone. "
    "Runs are stored: an interrupted run resumes, a finished one is shown without recomputing, and every run "
    "appears on the Results page."
)
PRESENT_INTRO = (
    "**Did the model see these texts in training?** One set of texts may have been in its training data, the "
    "other cannot have been. Each detector asks the model how familiar every text is; if the model saw the first "
    "set, the detectors tell the two apart better than guessing, and better than the wording alone can."
)
frame = result_first_page(
    "Membership benchmark", INTRO, has_result=RESULTS_KEY in st.session_state, present_intro=PRESENT_INTRO
)
linked = show_linked_result(frame, (KIND,), how_to_make=how_to_make("run the benchmark"))

with frame.setup:
    choice = dataset_picker(
        "Dataset",
        EXAMPLES,
        key="mb",
        path_placeholder="/data/my_benchmark.parquet",
        hub_placeholder="swj0419/WikiMIA",
        split_placeholder="WikiMIA_length128",
    )
    with st.expander("Columns and sample"):
        cols = st.columns(4)
        text_col = cols[0].text_input("Text column", placeholder="auto-detect", key="mb_text_col").strip() or None
        label_col = (
            cols[1].text_input("Label column (0/1)", placeholder="auto-detect", key="mb_label_col").strip() or None
        )
        limit = int(cols[2].number_input("Sample size (0 = all rows)", min_value=0, value=100, step=50, key="mb_limit"))
        seed = int(cols[3].number_input("Sample seed", min_value=0, value=0, key="mb_seed"))
    model = current_model()
    st.caption(f"Model: **{model.spec}** (chosen in the sidebar, shared by every page)")
    try:
        methods, reference = method_picker()
    except LeakLensError as exc:
        st.error(str(exc))
        st.stop()

    dataset: LabelledDataset | None = None
    if choice is not None and not choice.is_hub:  # hub data is fetched only when the run starts
        try:
            dataset = load_labelled(choice, text_col, label_col, limit or None, seed)
        except LeakLensError as exc:
            st.error(str(exc))
    if dataset is not None:
        st.caption(f"{dataset.describe()} · text column `{dataset.text_col}`, label column `{dataset.label_col}`")
        if dataset.skipped:
            st.caption(dataset.skipped_summary())

    inputs = [
        setting("dataset", choice),
        setting("text column", text_col or "auto"),
        setting("label column", label_col or "auto"),
        setting("sample size", limit or "all rows"),
        setting("sample seed", seed),
        setting("model", model.spec),
        setting("methods", tuple(m.key for m in methods)),
        setting("reference model", reference),
        setting("start token", current_start_token() or "automatic"),
    ]
    run_clicked = st.button("Run benchmark", type="primary", disabled=choice is None or not methods, key="mb_run")
with frame.result:
    if run_clicked and choice is not None:
        scroll_to_result_area()
        try:
            if dataset is None:
                dataset = load_labelled(choice, text_col, label_col, limit or None, seed)
            store = ResultStore()
            with watched_run("mb", KIND, "texts"):
                progress = streamlit_progress(f"Scoring {dataset.n} texts with {model.spec}")
                result = run_membership_benchmark(
                    dataset,
                    model,
                    methods,
                    store=store,
                    reference_model=reference,
                    batch_size=progress_batch_size(dataset.n),
                    progress=progress,
                )
            finish_run(RESULTS_KEY, [(result.run_id, result.n_computed)], inputs)
        except LeakLensError as exc:
            st.error(str(exc))
    cancelled_notice("mb")
    shown = show_result(RESULTS_KEY, inputs, show_runs, action="Run benchmark")
    if shown:
        scroll_after_run()
    elif not (linked or frame.present) and choice is None:
        st.info(
            "Choose a dataset in Setup to start: a ready example, an uploaded file, a local path or a hub dataset id."
        )
