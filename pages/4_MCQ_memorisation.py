"""MCQ memorisation: does the model finish a benchmark's options word for word?"""

from __future__ import annotations

import streamlit as st

from core.config import SHARED_DATA_DIR
from core.data.questions import MCQColumns, PromptLayout, load_mcq, parse_option_columns
from core.data.tables import display_name
from core.errors import LeakLensError
from core.mcq.completion import MCQConfig
from core.mcq.match import SIMILARITY_METRICS
from core.mcq.stored import KIND, run_stored_benchmark
from core.store.results import ResultStore
from ui.common import current_model, current_start_token, streamlit_progress
from ui.dataset_picker import dataset_picker, demo_examples, file_examples, load_choice
from ui.freshness import setting, show_result
from ui.layout import finish_run, result_first_page, scroll_after_run, scroll_to_result_area
from ui.mcq import MCQRun, show_run
from ui.presentation import how_to_make, show_linked_result
from ui.run_control import cancelled_notice, watched_run

REPORT_KEY = "mcq_report"
SAMPLES = SHARED_DATA_DIR
EXAMPLES = demo_examples("mcq") + file_examples(
    {"Chinese exam sample (single + multi-choice)": SAMPLES / "chinese_mcq_sample.jsonl"}
)
TOUR_EXAMPLE = "demo:mcq"  # the README tour's benchmark: answers in seconds; the 300 MMLU questions (3 min) settle it

INTRO = (
    "Each option of each question is cut in half; the model sees the question, the earlier options and the first "
    "half, and continues greedily. A model that memorised the benchmark finishes the options verbatim. "
    "Score per question = options reproduced (0–4). Shuffling the options and measuring again shows how much a "
    "shuffled release mitigates; the order test ranks the published option order among all 24. "
    "Runs are stored: an interrupted run resumes, an identical one is read back without the model, and every "
    "run appears on the Results page."
)
PRESENT_INTRO = (
    "**Has the model memorised this multiple-choice benchmark?** The model is shown the first half of each "
    "answer option and asked to go on. A model that memorised the benchmark finishes many options word for word "
    "in their published order, and far fewer once the options are shuffled."
)
frame = result_first_page(
    "MCQ memorisation", INTRO, has_result=REPORT_KEY in st.session_state, present_intro=PRESENT_INTRO
)
linked = show_linked_result(frame, (KIND,), how_to_make=how_to_make("run the test"))

with frame.setup:
    choice = dataset_picker(
        "Benchmark",
        EXAMPLES,
        key="mcq",
        path_placeholder="/data/exam.jsonl",
        hub_placeholder="cais/mmlu",
        split_placeholder="test",
        preferred=TOUR_EXAMPLE,
    )
    # No form: a form would run on Enter in any field, and would show edited values the results do not reflect.
    with st.container(border=True):
        left, middle, right = st.columns(3)
        limit = left.number_input(
            "Sample size (questions)",
            1,
            5000,
            300,
            key="mcq_limit",
            help="The first questions of the benchmark. A few hundred settle the test; a few dozen rarely do.",
        )
        cut = middle.selectbox(
            "Cut",
            ["chars", "words"],
            key="mcq_cut",
            format_func=lambda c: "half the characters" if c == "chars" else "half the words",
        )
        seed = right.number_input("Shuffle seed", 0, 2**31 - 1, 0, key="mcq_seed")
        metric = left.selectbox("Similarity", SIMILARITY_METRICS, key="mcq_metric")
        threshold = middle.slider("Similarity threshold", 0.05, 1.0, 0.75, 0.05, key="mcq_threshold")
        permutation = st.checkbox("Option-order test (24 orders per question)", key="mcq_perm")
        with st.expander("Columns and prompt layout"):
            c1, c2, c3, c4 = st.columns(4)
            question_col = c1.text_input("Question column", "question", key="mcq_qcol")
            option_cols = c2.text_input("Option columns", "A,B,C,D", key="mcq_ocols")
            answer_col = c3.text_input("Answer column", "answer", key="mcq_acol")
            option_template = c4.text_input("Option layout", "{letter}. {text}", key="mcq_otemplate")
    model = current_model()
    st.caption(f"Model: **{model.spec}** (chosen in the sidebar, shared by every page)")
    inputs = [
        setting("model", model.spec),
        setting("start token", current_start_token() or "automatic"),
        setting("benchmark", choice),
        setting("sample size", int(limit)),
        setting("cut", cut),
        setting("shuffle seed", int(seed)),
        setting("similarity", metric),
        setting("similarity threshold", threshold),
        setting("option-order test", permutation),
        setting("question column", question_col),
        setting("option columns", option_cols),
        setting("answer column", answer_col),
        setting("option layout", option_template),
    ]
    submitted = st.button("Run", type="primary", key="mcq_run")
with frame.result:
    if submitted and choice is None:
        st.warning("Choose a benchmark in Setup first.")
    elif submitted and choice is not None:
        scroll_to_result_area()
        try:
            columns = MCQColumns(
                question=question_col.strip(),
                answer=answer_col.strip() or None,
                options=parse_option_columns(option_cols),
            )
            config = MCQConfig(
                layout=PromptLayout(option_template=option_template), cut=cut, metric=metric, threshold=float(threshold)
            )
            dataset = load_choice(load_mcq, choice, columns=columns, limit=int(limit))
            with watched_run("mcq", KIND, "questions"):
                report, stored_run, n_computed = run_stored_benchmark(
                    dataset.questions,
                    config,
                    store=ResultStore(),
                    model=model,
                    benchmark=display_name(dataset.source),
                    shuffle_seed=int(seed),
                    permutation=permutation,
                    progress=streamlit_progress(f"Probing original and shuffled options with {model.spec}"),
                )
            said = [dataset.skipped_summary()] if dataset.skipped else []
            finish_run(
                REPORT_KEY,
                MCQRun(
                    report,
                    model.spec,
                    display_name(dataset.source),
                    " ".join([*said, *dataset.notes]),
                    n_computed,
                    stored_run.run_id,
                ),
                inputs,
            )
        except LeakLensError as exc:
            st.error(str(exc))
    cancelled_notice("mcq")
    if show_result(REPORT_KEY, inputs, show_run, action="Run"):
        scroll_after_run()
    elif not (linked or frame.present) and choice is None:
        st.info(
            "Choose a benchmark in Setup to start: a ready example, an uploaded file, a local path or a hub dataset id."
        )
