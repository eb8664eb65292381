"""Loss-delta leakage test: a benchmark's solutions vs a freshly written reference set, for the sidebar's model."""

from __future__ import annotations

import streamlit as st

from core.data.problems import BUILTIN, HUMANEVAL, SKY_SHADOW, load_problem_set
from core.errors import LeakLensError
from core.loss_delta.comparison import COMPARISON_KIND
from core.loss_delta.delta import DELTA2_THRESHOLD, ModelRequest, distinct_specs
from core.loss_delta.describe import delta2_rule
from core.loss_delta.run import run_leakage_test
from core.loss_delta.stored import KIND as DELTA_KIND
from core.store.results import ResultStore
from ui.common import current_model, current_start_token, streamlit_progress
from ui.dataset_picker import ReadyExample, dataset_picker, load_choice
from ui.freshness import setting, show_result
from ui.layout import finish_run, result_first_page, scroll_after_run, scroll_to_result_area
from ui.loss_delta import show_report
from ui.presentation import how_to_make, show_linked_result
from ui.run_control import cancelled_notice, watched_run

REPORT_KEY = "loss_delta_report"
TEST_EXAMPLES = [
    ReadyExample("HumanEval (offline, 164 problems)", HUMANEVAL),
    ReadyExample("LeakLens built-in set", BUILTIN),
]
REF_EXAMPLES = [
    ReadyExample("LeakLens built-in set (52 fresh problems)", BUILTIN),
    ReadyExample("HumanEval shadow set (hub)", SKY_SHADOW),
    ReadyExample("HumanEval (offline)", HUMANEVAL),
]

INTRO = (
    "A model that trained on a benchmark finds its solutions easier than equally hard problems written later. "
    "Δ = L_test − L_ref compares the mean loss on solution tokens (given the prompt) of the benchmark and of a "
    f"fresh reference set; Δ² = Δ_model − Δ_base isolates what fine-tuning added ({delta2_rule()}). "
    "Losses are stored: an interrupted run resumes, and every run appears on the Results page."
)
PRESENT_INTRO = (
    "**Does the model find this benchmark easier than comparable fresh problems?** The model reads each "
    "benchmark solution and each solution of a set written later; a benchmark it finds clearly easier (its "
    "solutions surprise it less) may have been in its training data, or text very like it."
)
frame = result_first_page("Loss delta", INTRO, has_result=REPORT_KEY in st.session_state, present_intro=PRESENT_INTRO)
linked = show_linked_result(frame, (COMPARISON_KIND,), how_to_make=how_to_make("run the test"))

with frame.setup:
    left, right = st.columns(2)
    with left:
        test_choice = dataset_picker(
            "Test set (benchmark)",
            TEST_EXAMPLES,
            key="ld_test",
            path_placeholder="/data/my_problems.jsonl",
            hub_placeholder="openai/openai_humaneval",
        )
    with right:
        ref_choice = dataset_picker(
            "Reference set",
            REF_EXAMPLES,
            key="ld_ref",
            path_placeholder="/data/my_problems.jsonl",
            hub_placeholder=SKY_SHADOW,
        )
    with st.expander("Columns, size and pairing"):
        cols = st.columns(3)
        id_col = cols[0].text_input("Task id column", placeholder="auto: task_id, id", key="ld_id_col").strip() or None
        prompt_col = (
            cols[1].text_input("Prompt column", placeholder="auto: prompt", key="ld_prompt_col").strip() or None
        )
        solution_col = (
            cols[2]
            .text_input("Solution column", placeholder="auto: canonical_solution, solution", key="ld_solution_col")
            .strip()
            or None
        )
        cols = st.columns(3)
        limit = int(cols[0].number_input("Problems per set (0 = all)", min_value=0, value=0, step=10, key="ld_limit"))
        pairing = cols[1].selectbox(
            "Pairing",
            ["auto", "paired", "unpaired"],
            key="ld_pairing",
            help="auto pairs problems by task id when both sets share ids (Wilcoxon "
            "signed-rank); otherwise the sets are compared as two samples "
            "(Mann-Whitney U).",
        )
        threshold = float(
            cols[2].number_input("Δ² threshold", value=DELTA2_THRESHOLD, step=0.01, format="%.3f", key="ld_threshold")
        )
    model = current_model()
    st.caption(f"Model: **{model.spec}** (chosen in the sidebar, shared by every page)")
    base = (
        st.text_input(
            "Base model (optional, for Δ²)",
            placeholder="none",
            key="ld_base_0",
            help="The model before fine-tuning: a bundled name, local directory or hub id. "
            "Δ² = Δ_model − Δ_base isolates what fine-tuning added.",
        ).strip()
        or None
    )

    inputs = [
        setting("test set", test_choice),
        setting("reference set", ref_choice),
        setting("task id column", id_col or "auto"),
        setting("prompt column", prompt_col or "auto"),
        setting("solution column", solution_col or "auto"),
        setting("problems per set", limit or "all"),
        setting("pairing", pairing),
        setting("model", model.spec),
        setting("base model", base),
        setting("start token", current_start_token() or "automatic"),
    ]
    run_clicked = st.button(
        "Run loss-delta test", type="primary", disabled=test_choice is None or ref_choice is None, key="ld_run"
    )
with frame.result:
    if run_clicked and test_choice is not None and ref_choice is not None:
        scroll_to_result_area()
        try:
            columns = {"id_column": id_col, "prompt_column": prompt_col, "solution_column": solution_col}
            test = load_choice(load_problem_set, test_choice, limit=limit or None, **columns)
            ref = load_choice(load_problem_set, ref_choice, limit=limit or None, **columns)
            requests = [ModelRequest(model.spec, base)]
            with watched_run(
                "ld", DELTA_KIND, "solutions", total=(len(test) + len(ref)) * len(distinct_specs(requests))
            ):
                progress = streamlit_progress(f"Scoring {len(test)} + {len(ref)} solutions with {model.spec}")
                report = run_leakage_test(
                    test,
                    ref,
                    requests,
                    model=model,
                    pairing=pairing,
                    store=ResultStore(),
                    progress=progress,
                )
            finish_run(REPORT_KEY, report, inputs)
        except LeakLensError as exc:
            st.error(str(exc))
    cancelled_notice("ld")
    shown = show_result(REPORT_KEY, inputs, lambda report: show_report(report, threshold), action="Run loss-delta test")
    if shown:
        scroll_after_run()
    elif not (linked or frame.present) and (test_choice is None or ref_choice is None):
        st.info("Choose a test set and a reference set in Setup to start.")
