"""Inspect a passage: does the model recognise it? Per-token curve, heatmap and every detector's score."""

from __future__ import annotations

import streamlit as st

from ui.common import current_model_spec, model_picker, page_setup
from ui.freshness import keep_result, show_result
from ui.inspect import (
    RESULT,
    analyse,
    calibration_option,
    current_inputs,
    max_tokens_option,
    passage_inputs,
    render_result,
)

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
inputs = current_inputs(passages, max_tokens)
if st.button("Analyse", type="primary", key="inspect_analyse", icon=":material/play_arrow:"):
    spec = current_model_spec()
    # Fast first view (main pass only), then the k-gram pass; the rerun redraws with everything.
    first = analyse(spec, passages, max_tokens, complete=False)
    keep_result(RESULT, first, inputs)
    if first is not None and not first.complete:
        show_result(RESULT, inputs, render_result, action="Analyse")
        keep_result(RESULT, analyse(spec, passages, max_tokens, complete=True), inputs)
        st.rerun()

show_result(RESULT, inputs, render_result, action="Analyse")
