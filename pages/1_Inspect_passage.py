"""Inspect a passage: does the model recognise it? Per-token curve, heatmap and every detector's score."""

from __future__ import annotations

import streamlit as st

from ui.common import current_model_spec, model_picker, page_setup
from ui.inspect import RESULT, analyse, calibration_option, max_tokens_option, passage_inputs, render_result

page_setup("Inspect a passage")
model_picker()
st.title("Inspect a passage")
st.markdown(
    "Paste a passage and see how predictable the model finds it, token by token. Text a model was trained on "
    "tends to be **more predictable** (higher token probabilities, lower perplexity) than text it never saw."
)

passages = passage_inputs()
max_tokens = max_tokens_option()
calibration_option(current_model_spec())
if st.button("Analyse", type="primary", key="inspect_analyse", icon=":material/play_arrow:"):
    spec = current_model_spec()
    # Fast first view (main pass only), then the k-gram pass; the rerun redraws with everything.
    first = analyse(spec, passages, max_tokens, complete=False)
    st.session_state[RESULT] = first
    if first is not None and not first.complete:
        render_result(first)
        st.session_state[RESULT] = analyse(spec, passages, max_tokens, complete=True)
        st.rerun()

result = st.session_state.get(RESULT)
if result is not None:
    if result.model != current_model_spec():
        st.info(f"These results are for `{result.model}`. Press **Analyse** to score with `{current_model_spec()}`.")
    render_result(result)
