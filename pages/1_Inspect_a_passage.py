"""Inspect a passage: has the model seen it? The verdict against freshly written passages first, then the
per-token curve, heatmap and every detector's score."""

from __future__ import annotations

import streamlit as st

from core.passage.calibration import FRESH_KIND
from core.passage.stored import KIND as PASSAGE_KIND
from ui.common import current_model
from ui.freshness import keep_result, show_result
from ui.inspect import (
    KGRAMS_PENDING,
    KGRAMS_TODO,
    RESULT,
    analyse,
    analyse_and_show,
    calibration_option,
    current_inputs,
    max_tokens_option,
    passage_inputs,
    render_result,
)
from ui.layout import finish_run, result_first_page, scroll_after_run, scroll_to_result_area
from ui.presentation import how_to_make, show_linked_result
from ui.run_control import cancelled_notice, scroll_to_finding, watched_run

INTRO = (
    "Paste a passage and see how predictable the model finds it, token by token. Text a model was trained on "
    "tends to be **more predictable** (higher token probabilities, lower perplexity) than text it never saw. "
    "But some text is predictable by its kind (a recipe, a contract clause), so the verdict asks how much "
    "likelier the model finds the passage in its own words than in close rewordings of it, beside passages "
    "of similar length freshly written for LeakLens, which no model can have trained on."
)
PRESENT_INTRO = (
    "**Has the model seen this passage before?** Models find text they were trained on unusually "
    "predictable in their own words. We compare how much likelier the model finds this passage than close "
    "rewordings of it with the same for passages written fresh for LeakLens, which it cannot have seen."
)

st.session_state.pop(KGRAMS_PENDING, None)  # only the script run that draws the verdict computes the k-grams
frame = result_first_page(
    "Inspect a passage", INTRO, has_result=RESULT in st.session_state, present_intro=PRESENT_INTRO
)
linked = show_linked_result(frame, (PASSAGE_KIND,), how_to_make=how_to_make("analyse a passage"))

with frame.setup:
    passages = passage_inputs()
    max_tokens = max_tokens_option()
    model = current_model()
    calibration_option(model.spec)
    st.caption(f"Model: **{model.spec}** (chosen in the sidebar, shared by every page)")
    inputs = current_inputs(passages, max_tokens)
    analyse_clicked = st.button("Analyse", type="primary", key="inspect_analyse", icon=":material/play_arrow:")

drawn = False
with frame.result:
    if analyse_clicked:
        scroll_to_result_area()
        result = None
        with watched_run("inspect", FRESH_KIND, "fresh passages"):
            # The passage's own result at once, its verdict as soon as the fresh passages of its length are
            # scored, then the k-gram pass in the next script run, with the verdict already on screen.
            result, drawn = analyse_and_show(model, passages, max_tokens, inputs, complete=False)
        if result is not None and not result.complete:
            keep_result(RESULT, result, inputs)
            st.session_state[KGRAMS_TODO] = True
            st.rerun()  # draws the verdict (Setup folded), then adds the k-gram pass
        if result is not None:
            finish_run(RESULT, result, inputs)  # Setup folds; the verdict is drawn at the top and scrolled to
    elif st.session_state.pop(KGRAMS_TODO, False) and RESULT in st.session_state:
        with watched_run("inspect", FRESH_KIND, "fresh passages"):
            kgram_status = st.container()
            st.session_state[KGRAMS_PENDING] = True
            drawn = show_result(RESULT, inputs, render_result, action="Analyse")
            scroll_to_finding()
            result = analyse(model, passages, max_tokens, complete=True, status=kgram_status)
            st.session_state.pop(KGRAMS_PENDING, None)
        if result is not None:
            finish_run(RESULT, result, inputs)
    cancelled_notice("inspect")
    if not drawn:
        shown = show_result(RESULT, inputs, render_result, action="Analyse")
        if shown:
            scroll_after_run()
        elif not (linked or frame.present) and not analyse_clicked:
            st.info("Paste a passage in Setup, or press *Example: Gettysburg Address (famous)*, then **Analyse**.")
