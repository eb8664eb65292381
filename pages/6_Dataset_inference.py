"""Dataset inference: did the model train on this set of texts? A p-value from many weak per-text signals."""

from __future__ import annotations

import streamlit as st

from core.data.text_sets import TextSet
from core.dataset_inference.run import QUICK_METHOD_KEYS, estimated_seconds, run_dataset_inference
from core.dataset_inference.statistic import DEFAULT_SPLITS
from core.engine.progress import format_duration
from core.errors import LeakLensError
from core.membership.benchmark import KIND
from core.methods import default_methods, parse_methods
from core.store.results import ResultStore
from core.store.runloop import progress_batch_size
from ui.common import current_model, current_start_token, streamlit_progress
from ui.dataset_inference import load_texts, show_inference
from ui.dataset_picker import dataset_picker, demo_examples
from ui.freshness import setting, show_result
from ui.layout import finish_run, result_first_page, scroll_after_run, scroll_to_result_area
from ui.presentation import how_to_make, show_linked_result
from ui.run_control import cancelled_notice, watched_run

RESULT_KEY = "dataset_inference"
EXAMPLES = demo_examples("membership")
FULL_KEYS = [m.key for m in default_methods()]

INTRO = (
    "Was this *set* of texts used to train the model? Give the texts you suspect were used and validation texts "
    "from the same distribution that you know were not (held-back chapters, a private split). Every text is "
    "scored by each detector; a combination learnt on half of each set is tested on the other half, over "
    "several random splits, giving one p-value. A model-free blind baseline checks that the two sets do not "
    "differ in wording, which would make the p-value meaningless. Scores are stored and reused."
)
PRESENT_INTRO = (
    "**Did the model train on this set of texts?** We compare texts suspected to be in its training data with "
    "similar texts it cannot have seen: if the model finds the suspect texts clearly more familiar, it most "
    "likely trained on them."
)
frame = result_first_page(
    "Dataset inference", INTRO, has_result=RESULT_KEY in st.session_state, present_intro=PRESENT_INTRO
)
linked = show_linked_result(frame, (KIND,), how_to_make=how_to_make("run the test"))


def _use_full_set() -> None:
    st.session_state["di_methods"] = list(FULL_KEYS)


with frame.setup:
    left, right = st.columns(2)
    with left:
        suspect_choice = dataset_picker(
            "Suspect set",
            EXAMPLES,
            key="di_suspect",
            path_placeholder="/data/my_book.jsonl",
            hub_placeholder="org/dataset",
        )
        suspect_where = st.text_input(
            "Only suspect rows where (COLUMN=VALUE)",
            "label=1",
            key="di_suspect_where",
            help="Keep the rows whose column holds this value; empty keeps every row. One "
            "labelled file serves as both sets this way.",
        ).strip()
    with right:
        validation_choice = dataset_picker(
            "Validation set",
            EXAMPLES,
            key="di_validation",
            path_placeholder="/data/held_back.jsonl",
            hub_placeholder="org/dataset",
        )
        validation_where = st.text_input(
            "Only validation rows where (COLUMN=VALUE)", "label=0", key="di_validation_where"
        ).strip()
    model = current_model()
    st.caption(f"Model: **{model.spec}** (chosen in the sidebar, shared by every page)")
    labels = {m.key: m.label for m in default_methods()}
    with st.expander("Texts, splits and detectors"):
        cols = st.columns(4)
        text_col = cols[0].text_input("Text column", placeholder="auto-detect", key="di_text_col").strip() or None
        limit = int(cols[1].number_input("Texts per set (0 = all)", min_value=0, value=100, step=50, key="di_limit"))
        n_splits = int(
            cols[2].number_input("Random splits", min_value=1, max_value=100, value=DEFAULT_SPLITS, key="di_splits")
        )
        seed = int(cols[3].number_input("Split seed", min_value=0, value=0, key="di_seed"))
        method_keys = st.multiselect(
            "Detectors combined",
            FULL_KEYS,
            default=list(QUICK_METHOD_KEYS),
            format_func=lambda k: labels.get(k, k),
            key="di_methods",
            help="The default four read one model pass per text. The probability slopes of the full set re-score "
            "every token in short windows (k-gram normalisation): several times the time.",
        )

    # Local files and the demo are read now (cheap, cached): the time estimate counts their texts.
    suspect: TextSet | None = None
    validation: TextSet | None = None
    try:
        if suspect_choice is not None and not suspect_choice.is_hub:
            suspect = load_texts(suspect_choice, suspect_where, text_col, limit or None)
        if validation_choice is not None and not validation_choice.is_hub:
            validation = load_texts(validation_choice, validation_where, text_col, limit or None)
    except LeakLensError as exc:
        st.error(str(exc))
    if suspect is not None and validation is not None:
        n_texts = len(suspect) + len(validation)
        chosen = parse_methods(method_keys) if method_keys else []
        quick = format_duration(estimated_seconds(n_texts, chosen)) if chosen else None
        full = format_duration(estimated_seconds(n_texts, None))
        st.caption(
            f"{len(suspect)} suspect + {len(validation)} validation texts. "
            + (f"Expected time with these {len(chosen)} detectors: {quick}; " if quick else "")
            + f"with all {len(FULL_KEYS)} detectors: {full} (the bundled SmolLM2-135M on a 2-core "
            "CPU; a larger model or longer texts take longer, a GPU far less)."
        )
        if set(method_keys) != set(FULL_KEYS):
            st.button(f"Use all {len(FULL_KEYS)} detectors ({full})", on_click=_use_full_set, key="di_full_set")

    inputs = [
        setting("suspect set", suspect_choice),
        setting("suspect rows", suspect_where or "all"),
        setting("validation set", validation_choice),
        setting("validation rows", validation_where or "all"),
        setting("text column", text_col or "auto"),
        setting("texts per set", limit or "all"),
        setting("splits", n_splits),
        setting("split seed", seed),
        setting("detectors", tuple(method_keys)),
        setting("model", model.spec),
        setting("start token", current_start_token() or "automatic"),
    ]
    ready = suspect_choice is not None and validation_choice is not None and bool(method_keys)
    run_clicked = st.button("Run dataset inference", type="primary", disabled=not ready, key="di_run")

with frame.result:
    if run_clicked and ready:
        scroll_to_result_area()
        try:
            if suspect is None:
                suspect = load_texts(suspect_choice, suspect_where, text_col, limit or None)
            if validation is None:
                validation = load_texts(validation_choice, validation_where, text_col, limit or None)
            n_texts = len(suspect) + len(validation)
            with watched_run("di", KIND, "texts", total=n_texts):
                progress = streamlit_progress(f"Scoring {len(suspect)} + {len(validation)} texts with {model.spec}")
                inference = run_dataset_inference(
                    suspect,
                    validation,
                    model,
                    parse_methods(method_keys),
                    n_splits=n_splits,
                    seed=seed,
                    store=ResultStore(),
                    progress=progress,
                    batch_size=progress_batch_size(n_texts),
                )
            finish_run(RESULT_KEY, inference, inputs)
        except LeakLensError as exc:
            st.error(str(exc))
    cancelled_notice("di")
    shown = show_result(RESULT_KEY, inputs, show_inference, action="Run dataset inference")
    if shown:
        scroll_after_run()
    elif not (linked or frame.present) and not ready:
        st.info(
            "Choose a suspect set and a validation set in Setup to start: the ready example compares famous "
            "passages with freshly written ones."
        )
