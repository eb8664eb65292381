"""Dataset inference: did the model train on this set of texts? A p-value from many weak per-text signals."""

from __future__ import annotations

import json
from dataclasses import replace

import streamlit as st

from core.data.demo import dataset_label, is_demo_source
from core.data.tables import load_uploaded
from core.data.text_sets import TextSet, load_text_set, parse_where, text_set_from_table
from core.engine.progress import format_duration
from core.errors import LeakLensError
from core.inference.finding import effect_interval
from core.inference.run import (
    QUICK_METHOD_KEYS,
    DatasetInference,
    estimated_seconds,
    progress_batch_size,
    run_dataset_inference,
)
from core.inference.statistic import DEFAULT_SPLITS, texts_for_power
from core.membership.benchmark import KIND
from core.methods import default_methods, parse_methods
from core.store.results import ResultStore
from core.viz.csv_export import result_csv
from core.viz.inference_plots import detector_weights, held_out_scores, split_p_values
from core.viz.report import inference_report
from ui.common import current_model_spec, current_start_token, get_model, streamlit_progress
from ui.dataset_picker import DatasetChoice, dataset_picker, demo_examples
from ui.finding import finding_banner
from ui.freshness import setting, show_result
from ui.layout import controls, details, finish_run, result_first_page, scroll_after_run, scroll_to_result_area
from ui.run_control import cancelled_notice, watched_run

RESULT_KEY = "dataset_inference"
EXAMPLES = demo_examples("membership")
# What the shipped demo's two halves are called on screen and in the verdict (a comment: a bare string in a page
# script is drawn on the page).
DEMO_SETS = {
    ("demo:famous-vs-fresh", "label=1"): "the famous passages (demo)",
    ("demo:famous-vs-fresh", "label=0"): "the freshly written passages (demo)",
}
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
frame = result_first_page("Dataset inference", INTRO, has_result=RESULT_KEY in st.session_state,
                          present_intro=PRESENT_INTRO)


@st.cache_data(show_spinner="Reading the texts…", max_entries=16)
def _load_cached(source: str, split: str | None, config: str | None, where: str, text_col: str | None,
                 limit: int | None) -> TextSet:
    return load_text_set(source, text_col=text_col, where=parse_where(where), split=split, config=config,
                         limit=limit)


def _load(choice: DatasetChoice, where: str, text_col: str | None, limit: int | None) -> TextSet:
    if choice.is_upload:
        text_set = text_set_from_table(load_uploaded(choice.data, choice.source), text_col=text_col,
                                       where=parse_where(where), limit=limit)
    else:
        text_set = _load_cached(choice.source, choice.split, choice.config, where, text_col, limit)
    return replace(text_set, name=_set_label(choice, where, text_set.name))


def _set_label(choice: DatasetChoice, where: str, name: str) -> str:
    """What the verdict calls a set: the demo's halves by what they are, another demo by its title, else the
    loader's name (file name or hub id, with the row filter)."""
    wanted = "".join(where.split())
    known = DEMO_SETS.get((choice.source, wanted))
    if known:
        return known
    if not choice.is_upload and is_demo_source(choice.source):
        return dataset_label(choice.source) + (f" ({wanted})" if wanted else "")
    return name


def _use_full_set() -> None:
    st.session_state["di_methods"] = list(FULL_KEYS)


with frame.setup:
    left, right = st.columns(2)
    with left:
        suspect_choice = dataset_picker("Suspect set", EXAMPLES, key="di_suspect",
                                        path_placeholder="/data/my_book.jsonl", hub_placeholder="org/dataset")
        suspect_where = st.text_input("Only suspect rows where (COLUMN=VALUE)", "label=1", key="di_suspect_where",
                                      help="Keep the rows whose column holds this value; empty keeps every row. One "
                                           "labelled file serves as both sets this way.").strip()
    with right:
        validation_choice = dataset_picker("Validation set", EXAMPLES, key="di_validation",
                                           path_placeholder="/data/held_back.jsonl", hub_placeholder="org/dataset")
        validation_where = st.text_input("Only validation rows where (COLUMN=VALUE)", "label=0",
                                         key="di_validation_where").strip()
    model = current_model_spec()
    st.caption(f"Model: **{model}** (chosen in the sidebar, shared by every page)")
    labels = {m.key: m.label for m in default_methods()}
    with st.expander("Texts, splits and detectors"):
        cols = st.columns(4)
        text_col = cols[0].text_input("Text column", placeholder="auto-detect", key="di_text_col").strip() or None
        limit = int(cols[1].number_input("Texts per set (0 = all)", min_value=0, value=100, step=50,
                                         key="di_limit"))
        n_splits = int(cols[2].number_input("Random splits", min_value=1, max_value=100, value=DEFAULT_SPLITS,
                                            key="di_splits"))
        seed = int(cols[3].number_input("Split seed", min_value=0, value=0, key="di_seed"))
        method_keys = st.multiselect(
            "Detectors combined", FULL_KEYS, default=list(QUICK_METHOD_KEYS), format_func=lambda k: labels.get(k, k),
            key="di_methods",
            help="The default four read one model pass per text. The probability slopes of the full set re-score "
                 "every token in short windows (k-gram normalisation): several times the time.")

    # Local files and the demo are read now (cheap, cached): the time estimate counts their texts.
    suspect: TextSet | None = None
    validation: TextSet | None = None
    try:
        if suspect_choice is not None and not suspect_choice.is_hub:
            suspect = _load(suspect_choice, suspect_where, text_col, limit or None)
        if validation_choice is not None and not validation_choice.is_hub:
            validation = _load(validation_choice, validation_where, text_col, limit or None)
    except LeakLensError as exc:
        st.error(str(exc))
    if suspect is not None and validation is not None:
        n_texts = len(suspect) + len(validation)
        chosen = parse_methods(method_keys) if method_keys else []
        quick = format_duration(estimated_seconds(n_texts, chosen)) if chosen else None
        full = format_duration(estimated_seconds(n_texts, None))
        st.caption(f"{len(suspect)} suspect + {len(validation)} validation texts. "
                   + (f"Expected time with these {len(chosen)} detectors: {quick}; " if quick else "")
                   + f"with all {len(FULL_KEYS)} detectors: {full} (the bundled SmolLM2-135M on a 2-core "
                     "CPU; a larger model or longer texts take longer, a GPU far less).")
        if set(method_keys) != set(FULL_KEYS):
            st.button(f"Use all {len(FULL_KEYS)} detectors ({full})", on_click=_use_full_set,
                      key="di_full_set")

    inputs = [setting("suspect set", suspect_choice), setting("suspect rows", suspect_where or "all"),
              setting("validation set", validation_choice), setting("validation rows", validation_where or "all"),
              setting("text column", text_col or "auto"), setting("texts per set", limit or "all"),
              setting("splits", n_splits), setting("split seed", seed), setting("detectors", tuple(method_keys)),
              setting("model", model), setting("start token", current_start_token() or "automatic")]
    ready = suspect_choice is not None and validation_choice is not None and bool(method_keys)
    run_clicked = st.button("Run dataset inference", type="primary", disabled=not ready, key="di_run")

with frame.result:
    if run_clicked and ready:
        scroll_to_result_area()
        try:
            if suspect is None:
                suspect = _load(suspect_choice, suspect_where, text_col, limit or None)
            if validation is None:
                validation = _load(validation_choice, validation_where, text_col, limit or None)
            n_texts = len(suspect) + len(validation)
            with watched_run("di", KIND, "texts", total=n_texts):
                progress = streamlit_progress(f"Scoring {len(suspect)} + {len(validation)} texts with {model}")
                inference = run_dataset_inference(
                    suspect, validation, model, parse_methods(method_keys), n_splits=n_splits, seed=seed,
                    store=ResultStore(), progress=progress, load_model=get_model, start_token=current_start_token(),
                    batch_size=progress_batch_size(n_texts))
            finish_run(RESULT_KEY, inference, inputs)
        except LeakLensError as exc:
            st.error(str(exc))
    cancelled_notice("di")


def _detector_rows(inference: DatasetInference) -> list[dict]:
    weights = dict(inference.result.weights)
    return [{"detector": row["label"], "auroc": row["auroc"], "ci_low": row["ci_low"], "ci_high": row["ci_high"],
             "key": row["method"], "weight": weights.get(row["method"]), "n": row["n"]}
            for row in inference.scores.table_rows()]


def _text_rows(inference: DatasetInference) -> list[dict]:
    keys = inference.scores.method_keys
    return [{"text_id": s.sample_id, "set": inference.suspect if s.label == 1 else inference.validation,
             **{key: s.scores.get(key) for key in keys}} for s in inference.scores.samples]


def _show(inference: DatasetInference) -> None:
    result = inference.result
    heading = f"{inference.suspect} vs {inference.validation} · {inference.model}"
    st.subheader("The" + heading[3:] if heading.startswith("the ") else heading)  # never a file name's case
    finding_banner(inference.finding)
    st.plotly_chart(held_out_scores(inference), width="stretch", key="di_scores")
    data = f"{inference.suspect} vs {inference.validation}"
    with controls("di_downloads"):
        d_lo, d_hi = effect_interval(result)
        blind = inference.scores.blind_baseline
        summary = [{"effect_size": result.effect_size, "effect_ci_low": d_lo, "effect_ci_high": d_hi,
                    "p_value": result.p_value, "blind_auroc": None if blind is None else blind.auroc,
                    "blind_ci_low": None if blind is None else blind.ci[0],
                    "blind_ci_high": None if blind is None else blind.ci[1], "n_suspect": result.n_suspect,
                    "n_validation": result.n_validation, "splits": len(result.split_p_values), "seed": result.seed}]
        context = {"finding": inference.finding, "model": inference.model, "data": data}
        cols = st.columns(4)
        cols[0].download_button("Report (HTML)", inference_report(inference), "leaklens_dataset_inference.html",
                                "text/html", key="di_html")
        cols[1].download_button("Test result (CSV)", result_csv(summary, **context),
                                "dataset_inference_result.csv", "text/csv", key="di_csv")
        cols[2].download_button("Each detector's AUROC (CSV)", result_csv(_detector_rows(inference), **context),
                                "dataset_inference_detectors.csv", "text/csv", key="di_detectors_csv")
        cols[3].download_button("Per-text scores (CSV)", result_csv(_text_rows(inference), **context),
                                "dataset_inference_texts.csv", "text/csv", key="di_texts_csv")
        st.download_button("Result (JSON)", json.dumps(inference.to_dict(), indent=2, default=str),
                           "dataset_inference.json", "application/json", key="di_json")

    with details("di_numbers"):
        blind = inference.scores.blind_baseline
        cols = st.columns(4)
        cols[0].metric("p-value", f"{result.p_value:.2g}",
                       help="Twice the median p-value of the random splits: valid however dependent the splits are.")
        cols[1].metric("Texts", f"{result.n_suspect} + {result.n_validation}",
                       help="Suspect + validation texts scored.")
        cols[2].metric("Effect (Cohen's d)", f"{result.effect_size:+.2f}",
                       help="How far apart the held-out combined scores of the two sets are, in standard deviations.")
        cols[3].metric("Wording alone (blind AUROC)", "n/a" if blind is None else f"{blind.auroc:.2f}",
                       help="A bag-of-words classifier that never sees the model; near 0.5 means the sets read "
                            "alike.")
        needed = texts_for_power(result.effect_size)
        st.caption("An effect of this size needs about "
                   f"{needed} texts per set for an 80% chance of p < 0.05." if needed else
                   "The scores point away from the suspect set (its texts look less familiar to the model), so more "
                   "texts could settle on no sign, not on evidence that the model trained on it.")
        st.plotly_chart(split_p_values(inference), width="stretch", key="di_splits_chart")
        st.plotly_chart(detector_weights(inference), width="stretch", key="di_weights")
        with st.expander("Each detector alone (AUROC, suspect vs validation)"):
            st.dataframe(inference.scores.table_rows(), hide_index=True, width="stretch",
                         column_order=["label", "auroc", "ci_low", "ci_high", "n"])

with frame.result:
    shown = show_result(RESULT_KEY, inputs, _show, action="Run dataset inference")
    if shown:
        scroll_after_run()
    elif not ready:
        st.info("Choose a suspect set and a validation set in Setup to start: the ready example compares famous "
                "passages with freshly written ones.")
