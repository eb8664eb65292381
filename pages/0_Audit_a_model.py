"""Audit a model: has it seen this benchmark? Every test that fits, run in one go, read as one verdict."""

from __future__ import annotations

import streamlit as st

from core.audit.estimates import plan_with_estimates
from core.audit.plan import plan_audit
from core.audit.run import KIND, run_audit
from core.benchmark_order.run import KIND as ORDER_KIND
from core.data.tables import Table
from core.dataset_inference.run import KIND as INFERENCE_KIND
from core.errors import LeakLensError
from core.loss_delta.comparison import COMPARISON_KIND
from core.loss_delta.stored import KIND as DELTA_KIND
from core.mcq.stored import KIND as MCQ_KIND
from core.membership.benchmark import KIND as MEMBERSHIP_KIND
from core.passage.calibration import FRESH_KIND
from core.store.results import ResultStore
from ui.audit import audit_progress, evidence_inputs, reopen, show_audit, show_plan
from ui.benchmark_order import load_benchmark
from ui.common import current_model, current_start_token
from ui.dataset_picker import ReadyExample, dataset_picker, demo_examples, unique_examples
from ui.freshness import setting, show_result
from ui.layout import finish_run, result_first_page, scroll_after_run, scroll_to_result_area
from ui.presentation import how_to_make, show_linked_result
from ui.run_control import cancelled_notice, watched_run

RESULT_KEY = "audit"
# The stored kinds an audit writes into (a cancel names how far its steps got).
PART_KINDS = (ORDER_KIND, MCQ_KIND, FRESH_KIND, DELTA_KIND, COMPARISON_KIND, MEMBERSHIP_KIND, INFERENCE_KIND, KIND)
EXAMPLES: list[ReadyExample] = unique_examples(demo_examples("mcq"), demo_examples("membership"))
INTRO = (
    "Has this model seen this benchmark? Every test that fits the benchmark runs on the model: the benchmark-order "
    "test, multiple-choice memorisation and its option order, extraction on a sample of items, and (with the "
    "evidence you add) loss delta, dataset inference and overlap. Each asks the question its own way; the verdict "
    "counts a test only when its evidence holds up after allowing for running several tests. Each test is stored "
    "as its own page would store it: a cancelled audit resumes, and the audit appears on the Results page."
)
PRESENT_INTRO = (
    "**Has this model seen this benchmark?** Several independent tests look for the traces training leaves; the "
    "verdict counts only the evidence that holds up when they are taken together."
)

frame = result_first_page(
    "Audit a model", INTRO, has_result=RESULT_KEY in st.session_state, present_intro=PRESENT_INTRO
)
linked = show_linked_result(frame, (KIND,), how_to_make=how_to_make("run an audit"))

with frame.setup:
    choice = dataset_picker(
        "Benchmark",
        EXAMPLES,
        key="audit",
        path_placeholder="/data/benchmark.jsonl",
        hub_placeholder="cais/mmlu",
        split_placeholder="test",
    )
    sources = evidence_inputs("audit")
    model = current_model()
    st.caption(f"Model: **{model.spec}** (chosen in the sidebar, shared by every page)")
    table: Table | None = None
    plan = None
    try:
        if choice is not None and not choice.is_hub:
            table = load_benchmark(choice, None)
            plan = plan_with_estimates(plan_audit(table, sources), model, table)
            show_plan(plan)
        elif choice is not None:
            st.caption("A hub dataset is read when the audit starts; the plan is shown then.")
    except LeakLensError as exc:
        st.error(str(exc))
    inputs = [
        setting("benchmark", choice),
        setting("reference set", sources.reference or "none"),
        setting("held-out texts", sources.validation or "none"),
        setting("index", sources.index or "none"),
        setting("base model", sources.base_model or "none"),
        setting("model", model.spec),
        setting("start token", current_start_token() or "automatic"),
    ]
    ready = choice is not None and (choice.is_hub or (plan is not None and bool(plan.to_run)))
    run_clicked = st.button("Run audit", type="primary", disabled=not ready, key="audit_run")

with frame.result:
    if run_clicked and ready and choice is not None:
        scroll_to_result_area()
        try:
            if table is None:
                table = load_benchmark(choice, None)
            plan = plan or plan_with_estimates(plan_audit(table, sources), model, table)
            slot = st.empty()
            with watched_run("audit", PART_KINDS, "steps"):
                audit = run_audit(
                    table, model, sources=sources, store=ResultStore(), plan=plan, progress=audit_progress(slot, plan)
                )
            shown = reopen(audit.run_id)
            if shown is not None:
                finish_run(RESULT_KEY, shown, inputs)
        except LeakLensError as exc:
            st.error(str(exc))
    cancelled_notice("audit")
    if show_result(RESULT_KEY, inputs, show_audit, action="Run audit"):
        scroll_after_run()
    elif not (linked or frame.present) and not ready:
        st.info("Choose a benchmark in Setup to start: a ready example, an uploaded file, a local path or a hub id.")
