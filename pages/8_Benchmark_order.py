"""Benchmark order test: does the model prefer a benchmark's published order of examples to shuffles of it?"""

from __future__ import annotations

import streamlit as st

from core.benchmark_order.examples import BenchmarkExamples, render_examples
from core.benchmark_order.run import KIND, check_shardable, run_order_test
from core.benchmark_order.settings import OrderSettings
from core.data.tables import Table
from core.errors import LeakLensError
from core.store.results import ResultStore
from core.store.runloop import progress_batch_size
from ui.benchmark_order import (
    OrderRun,
    example_preview,
    load_benchmark,
    shard_fields,
    show_order_test,
    template_field,
)
from ui.common import current_model, current_start_token, streamlit_progress
from ui.dataset_picker import dataset_picker, demo_examples, unique_examples
from ui.freshness import setting, show_result
from ui.layout import finish_run, result_first_page, scroll_after_run, scroll_to_result_area
from ui.presentation import how_to_make, show_linked_result
from ui.run_control import cancelled_notice, watched_run

RESULT_KEY = "order_test"
EXAMPLES = unique_examples(demo_examples("mcq"), demo_examples("membership"), demo_examples("overlap-test"))

INTRO = (
    "Did the model read this benchmark file? The examples are taken in the file's own order and split into shards "
    "of consecutive examples; in each shard the model's likelihood of the published order is compared with "
    "shuffled orders of the same examples (Oren et al., ICLR 2024). A model that never saw the file has no reason "
    "to prefer its order; one that trained on it does. A one-sided t-test over the shards gives the p-value. Shards "
    "are stored as they are scored: a cancelled run resumes, and every run appears on the Results page."
)
PRESENT_INTRO = (
    "**Has the model read this benchmark file?** We ask the model how likely it finds the benchmark's questions in "
    "the order the file lists them, and in shuffled orders. Only a model that read the file has a reason to prefer "
    "the file's own order."
)
frame = result_first_page(
    "Benchmark order test", INTRO, has_result=RESULT_KEY in st.session_state, present_intro=PRESENT_INTRO
)
linked = show_linked_result(frame, (KIND,), how_to_make=how_to_make("run the test"))

with frame.setup:
    choice = dataset_picker(
        "Benchmark",
        EXAMPLES,
        key="bo",
        path_placeholder="/data/benchmark.jsonl",
        hub_placeholder="cais/mmlu",
        split_placeholder="test",
    )
    with st.expander("Examples used and shuffle seed"):
        cols = st.columns(2)
        limit = int(cols[0].number_input("First examples used (0 = all)", min_value=0, value=0, key="bo_limit"))
        seed = int(cols[1].number_input("Shuffle seed", min_value=0, value=0, key="bo_seed"))
    # A demo, a local file or an upload is read now (cached): the template and the shards follow its columns and
    # size. A hub dataset is fetched only when the run starts.
    table: Table | None = None
    examples: BenchmarkExamples | None = None
    try:
        if choice is not None and not choice.is_hub:
            table = load_benchmark(choice, limit or None)
    except LeakLensError as exc:
        st.error(str(exc))
    template = template_field(table)
    try:
        if table is not None:
            examples = render_examples(table, template)
            example_preview(examples)
    except LeakLensError as exc:
        st.error(str(exc))
    shards, permutations = shard_fields(None if examples is None else len(examples))
    model = current_model()
    st.caption(f"Model: **{model.spec}** (chosen in the sidebar, shared by every page)")
    inputs = [
        setting("benchmark", choice),
        setting("examples used", limit or "all"),
        setting("text template", template or "every column"),
        setting("shards", shards),
        setting("shuffles per shard", permutations),
        setting("shuffle seed", seed),
        setting("model", model.spec),
        setting("start token", current_start_token() or "automatic"),
    ]
    ready = choice is not None and (choice.is_hub or examples is not None)
    run_clicked = st.button("Run order test", type="primary", disabled=not ready, key="bo_run")

with frame.result:
    if run_clicked and ready and choice is not None:
        scroll_to_result_area()
        try:
            if examples is None:
                examples = render_examples(load_benchmark(choice, limit or None), template)
            settings = OrderSettings(shards=shards, permutations=permutations, seed=seed)
            check_shardable(len(examples), settings)
            with watched_run("bo", KIND, "shards", total=shards):
                test = run_order_test(
                    examples,
                    settings,
                    model=model,
                    store=ResultStore(),
                    batch_size=progress_batch_size(shards),
                    progress=streamlit_progress(
                        f"Scoring {shards} shards of {len(examples)} examples, published order and shuffled, "
                        f"with {model.spec}"
                    ),
                )
            finish_run(RESULT_KEY, OrderRun(test, examples.skipped_summary() if examples.skipped else ""), inputs)
        except LeakLensError as exc:
            st.error(str(exc))
    cancelled_notice("bo")
    if show_result(RESULT_KEY, inputs, show_order_test, action="Run order test"):
        scroll_after_run()
    elif not (linked or frame.present) and not ready:
        st.info(
            "Choose a benchmark in Setup to start: a ready example, an uploaded file, a local path or a hub dataset id."
        )
