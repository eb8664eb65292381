"""Dataset inference: did the model train on this set of texts? A p-value from many weak per-text signals."""

from __future__ import annotations

import json

import streamlit as st

from core.data.labelled import SHARED_DATA_DIR
from core.data.tables import load_uploaded
from core.data.text_sets import TextSet, load_text_set, parse_where, text_set_from_table
from core.errors import LeakLensError
from core.inference.run import DatasetInference, run_dataset_inference
from core.inference.statistic import DEFAULT_SPLITS, texts_needed
from core.membership.benchmark import KIND
from core.methods import default_methods, parse_methods
from core.store.results import ResultStore
from core.viz.inference_plots import detector_weights, held_out_scores, split_p_values
from core.viz.report import inference_report
from ui.common import current_model_spec, current_start_token, get_model, model_picker, page_setup, streamlit_progress
from ui.dataset_picker import DatasetChoice, ReadyExample, dataset_picker, demo_examples
from ui.finding import finding_banner
from ui.freshness import keep_result, setting, show_result
from ui.run_control import cancelled_notice, scroll_to_finding, watched_run

RESULT_KEY = "dataset_inference"
WIKIMIA = SHARED_DATA_DIR / "wikimia_length128.parquet"
EXAMPLES = ([ReadyExample("WikiMIA sample (a date split: members are older Wikipedia events)", str(WIKIMIA))]
            if WIKIMIA.exists() else []) + demo_examples("membership")

page_setup("Dataset inference")
model_picker()
st.title("Dataset inference")
st.caption(
    "Was this *set* of texts used to train the model? Give the texts you suspect were used and validation texts "
    "from the same distribution that you know were not (held-back chapters, a private split). Every text is "
    "scored by every detector; a combination learnt on half of each set is tested on the other half, over "
    "several random splits, giving one p-value. A model-free blind baseline checks that the two sets do not "
    "differ in wording, which would make the p-value meaningless. Scores are stored and reused."
)


def _load(choice: DatasetChoice, where: str, text_col: str | None, limit: int | None) -> TextSet:
    if choice.is_upload:
        return text_set_from_table(load_uploaded(choice.data, choice.source), text_col=text_col,
                                   where=parse_where(where), limit=limit)
    return load_text_set(choice.source, text_col=text_col, where=parse_where(where), split=choice.split,
                         config=choice.config, limit=limit)


left, right = st.columns(2)
with left:
    suspect_choice = dataset_picker("Suspect set", EXAMPLES, key="di_suspect", path_placeholder="/data/my_book.jsonl",
                                    hub_placeholder="org/dataset")
    suspect_where = st.text_input("Only suspect rows where (COLUMN=VALUE)", "label=1", key="di_suspect_where",
                                  help="Keep the rows whose column holds this value; empty keeps every row. One "
                                       "labelled file serves as both sets this way.").strip()
with right:
    validation_choice = dataset_picker("Validation set", EXAMPLES, key="di_validation",
                                       path_placeholder="/data/held_back.jsonl", hub_placeholder="org/dataset")
    validation_where = st.text_input("Only validation rows where (COLUMN=VALUE)", "label=0",
                                     key="di_validation_where").strip()
with st.expander("Texts, splits and detectors"):
    cols = st.columns(4)
    text_col = cols[0].text_input("Text column", placeholder="auto-detect", key="di_text_col").strip() or None
    limit = int(cols[1].number_input("Texts per set (0 = all)", min_value=0, value=100, step=50, key="di_limit"))
    n_splits = int(cols[2].number_input("Random splits", min_value=1, max_value=100, value=DEFAULT_SPLITS,
                                        key="di_splits"))
    seed = int(cols[3].number_input("Split seed", min_value=0, value=0, key="di_seed"))
    defaults = [m.key for m in default_methods()]
    method_keys = st.multiselect("Detectors combined", defaults, default=defaults, key="di_methods")

inputs = [setting("suspect set", suspect_choice), setting("suspect rows", suspect_where or "all"),
          setting("validation set", validation_choice), setting("validation rows", validation_where or "all"),
          setting("text column", text_col or "auto"), setting("texts per set", limit or "all"),
          setting("splits", n_splits), setting("split seed", seed), setting("detectors", tuple(method_keys)),
          setting("model", current_model_spec()), setting("start token", current_start_token() or "automatic")]
ready = suspect_choice is not None and validation_choice is not None and bool(method_keys)
run_clicked = st.button("Run dataset inference", type="primary", disabled=not ready, key="di_run")
if run_clicked and ready:
    try:
        suspect = _load(suspect_choice, suspect_where, text_col, limit or None)
        validation = _load(validation_choice, validation_where, text_col, limit or None)
        spec = current_model_spec()
        with watched_run("di", KIND, "texts", total=len(suspect) + len(validation)):
            progress = streamlit_progress(f"Scoring {len(suspect)} + {len(validation)} texts with {spec}")
            inference = run_dataset_inference(suspect, validation, spec, parse_methods(method_keys),
                                              n_splits=n_splits, seed=seed, store=ResultStore(), progress=progress,
                                              load_model=get_model, start_token=current_start_token())
        keep_result(RESULT_KEY, inference, inputs)
    except LeakLensError as exc:
        st.error(str(exc))
cancelled_notice("di")


def _show(inference: DatasetInference) -> None:
    finding_banner(inference.finding)
    result = inference.result
    st.plotly_chart(held_out_scores(inference), width="stretch", key="di_scores")
    blind = inference.scores.blind_baseline
    cols = st.columns(4)
    cols[0].metric("p-value", f"{result.p_value:.2g}",
                   help="Twice the median p-value of the random splits: valid however dependent the splits are.")
    cols[1].metric("Texts", f"{result.n_suspect} + {result.n_validation}", help="Suspect + validation texts scored.")
    cols[2].metric("Effect (Cohen's d)", f"{result.effect_size:+.2f}",
                   help="How far apart the held-out combined scores of the two sets are, in standard deviations.")
    cols[3].metric("Wording alone (blind AUROC)", "n/a" if blind is None else f"{blind.auroc:.2f}",
                   help="A bag-of-words classifier that never sees the model; near 0.5 means the sets read alike.")
    needed = texts_needed(result.effect_size)
    st.caption("An effect of this size needs about "
               f"{needed} texts per set for an 80% chance of p < 0.05." if needed else
               "No effect in the suspect set's direction: more texts would not show one.")
    st.plotly_chart(split_p_values(inference), width="stretch", key="di_splits_chart")
    st.plotly_chart(detector_weights(inference), width="stretch", key="di_weights")
    with st.expander("Each detector alone (AUROC, suspect vs validation)"):
        st.dataframe(inference.scores.table_rows(), hide_index=True, width="stretch",
                     column_order=["label", "auroc", "ci_low", "ci_high", "n"])
    cols = st.columns(2)
    cols[0].download_button("Report (self-contained HTML)", inference_report(inference),
                            "leaklens_dataset_inference.html", "text/html", key="di_html")
    cols[1].download_button("Result (JSON)", json.dumps(inference.to_dict(), indent=2, default=str),
                            "dataset_inference.json", "application/json", key="di_json")


shown = show_result(RESULT_KEY, inputs, _show, action="Run dataset inference")
if shown and run_clicked:
    scroll_to_finding()
if not shown and not ready:
    st.info("Choose a suspect set and a validation set to start.")
