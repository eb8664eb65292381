"""MCQ memorisation: does the model finish a benchmark's options word for word?"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import streamlit as st

from core.data.demo import dataset_label
from core.data.questions import MCQColumns, MCQDataset, PromptLayout, load_mcq, questions_from_table, to_jsonl
from core.data.tables import display_name, load_uploaded
from core.errors import LeakLensError
from core.mcq.completion import MCQConfig
from core.mcq.finding import mcq_finding, score_drop
from core.mcq.match import SIMILARITY_METRICS
from core.mcq.stored import KIND, run_stored_benchmark
from core.mcq.study import MCQReport
from core.stats.finding import Finding
from core.store.results import ResultStore
from core.viz.csv_export import result_csv
from core.viz.mcq_plots import PROBE_TITLES, mcq_score_distribution, rank_histogram
from core.viz.mcq_view import question_html
from core.viz.report import mcq_section, render_report
from ui.common import current_model_spec, current_start_token, get_model, streamlit_progress
from ui.dataset_picker import DatasetChoice, dataset_picker, demo_examples, file_examples
from ui.finding import finding_banner
from ui.freshness import setting, show_result
from ui.layout import controls, details, finish_run, result_first_page, scroll_after_run, scroll_to_result_area
from ui.run_control import cancelled_notice, watched_run

REPORT_KEY = "mcq_report"
# The probe the verdict rests on (options finished word for word): its chart is the one under the verdict. (A
# comment, not a docstring: Streamlit would draw a bare string at a page's top level.)
VERDICT_PROBE = "completion"
REPORT_TITLE = "LeakLens multiple-choice memorisation report"
REPORT_INTRO = ("Each option is cut in half and the model continues it; a model that memorised the benchmark "
                "finishes more options word for word in the published order than once the options are shuffled.")

SAMPLES = (Path(__file__).resolve().parents[1] / ".." / "shared" / "data").resolve()
EXAMPLES = file_examples({
    "MMLU sample (English)": SAMPLES / "mmlu_sample.jsonl",
    "Chinese exam sample (single + multi-choice)": SAMPLES / "chinese_mcq_sample.jsonl",
}) + demo_examples("mcq")


class MCQRun(NamedTuple):
    """What the page keeps of the last run between reruns."""

    report: MCQReport
    model: str
    benchmark: str
    skipped: str
    n_computed: int
    """Questions measured by that run (0: read from the store)."""


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
frame = result_first_page("MCQ memorisation", INTRO, has_result=REPORT_KEY in st.session_state,
                          present_intro=PRESENT_INTRO)


def _load(choice: DatasetChoice, columns: MCQColumns, limit: int) -> MCQDataset:
    if choice.is_upload:
        return questions_from_table(load_uploaded(choice.data, choice.source), columns=columns, limit=limit)
    return load_mcq(choice.source, split=choice.split, config=choice.config, limit=limit, columns=columns)


def questions_csv(report: MCQReport, finding: Finding, *, model: str, benchmark: str) -> str:
    """Per-question scores, each row led by the verdict and the interval of the drop it rests on."""
    drop, (low, high) = score_drop(report, VERDICT_PROBE)
    interval = {"completion_drop": drop, "completion_drop_ci_low": low, "completion_drop_ci_high": high}
    return result_csv([{**interval, **row} for row in report.question_rows()], finding=finding, model=model,
                      data=benchmark)


def _show(shown: MCQRun) -> None:
    report, model, benchmark = shown.report, shown.model, dataset_label(shown.benchmark)
    finding = mcq_finding(report)
    st.subheader(f"{benchmark} · {model}")
    finding_banner(finding)
    st.plotly_chart(mcq_score_distribution(report, VERDICT_PROBE), width="stretch", key="mcq_dist")
    with controls("mcq_exports"):
        cols = st.columns(3)
        cols[0].download_button(
            "Report (HTML)",
            lambda: render_report([mcq_section(report, model=model, benchmark=benchmark)], title=REPORT_TITLE,
                                  intro=REPORT_INTRO),
            "mcq_report.html", "text/html", key="mcq_report_html", on_click="ignore", icon=":material/description:",
            help="One self-contained file: the verdict, the charts and the numbers.")
        cols[1].download_button("Per-question scores (CSV)",
                                questions_csv(report, finding, model=model, benchmark=benchmark), "mcq_scores.csv",
                                "text/csv", key="mcq_csv", on_click="ignore", icon=":material/download:")
        cols[2].download_button("Shuffled benchmark (JSONL)", to_jsonl(report.shuffled_questions),
                                "shuffled_benchmark.jsonl", "application/jsonl", key="mcq_jsonl", on_click="ignore",
                                icon=":material/download:",
                                help="The same questions with their options shuffled: a release less easy to "
                                     "memorise by heart.")
    with details("mcq"):
        _show_details(shown)


def _show_details(shown: MCQRun) -> None:
    report = shown.report
    if shown.skipped:
        st.caption(shown.skipped)
    if shown.n_computed:
        st.success(f"{shown.n_computed} questions measured and stored: the Results page opens and exports this "
                   "run, and an identical run is read back instead of measured again.")
    else:
        st.success("Read from the store: these questions were measured earlier with the same model and settings, "
                   "so nothing was recomputed. The Results page opens and exports this run.")
    with controls("mcq_probe"):
        # The probe shown is a view of the same measurements, so it is not an input of the result.
        kind = st.selectbox("Probe shown", ["completion", "next_token", "similar"],
                            format_func=lambda k: PROBE_TITLES[k], key="mcq_probe")
    payload = report.to_dict(model=shown.model, benchmark=shown.benchmark)
    k = report.original.n_options
    cols = st.columns(4)
    how = {"completion": "the greedy continuation of an option's first half reproduces the rest exactly",
           "next_token": "the greedy next token is the option's next token",
           "similar": "the greedy continuation is close enough to the rest of the option"}.get(kind, kind)
    cols[0].metric("Questions", payload["n"], help="Questions scored in this run.")
    cols[1].metric(f"Mean score, original ({kind})", f"{report.original.summary(kind).mean:.2f} of {k}",
                   help=f"Options per question the model reproduced, in the published order (counted when {how}).")
    cols[2].metric(f"Mean score, shuffled ({kind})", f"{report.shuffled.summary(kind).mean:.2f} of {k}",
                   help="The same score after shuffling the options: what a shuffled release leaves.")
    cols[3].metric("Mitigation (drop)", f"{report.mitigation.drop(kind):+.2f}",
                   help="Original minus shuffled score: how much shuffling the options removes.")
    if kind != VERDICT_PROBE:
        st.plotly_chart(mcq_score_distribution(report, kind), width="stretch", key="mcq_dist_shown")

    st.subheader("Summary (model × benchmark)")
    st.dataframe(payload["summary"], hide_index=True, width="stretch", key="mcq_summary")

    if report.permutation is not None:
        st.plotly_chart(rank_histogram(report), width="stretch", key="mcq_ranks")
        perm = payload["permutation"]
        st.caption(f"Original order most likely for {perm['top1_fraction']:.1%} of questions "
                   f"(chance {1 / perm['n_orders']:.1%}, binomial p = {perm['p_value_top1']:.2g}).")

    st.subheader("Questions")
    st.dataframe(report.question_rows(), hide_index=True, width="stretch", key="mcq_questions")

    st.subheader("Per-question view")
    ranked = sorted(report.original.results, key=lambda r: -r.score(kind))
    labels = {f"#{r.question.index} · score {r.score(kind)} · {r.question.question[:80]}": r for r in ranked}
    with controls("mcq_question"):
        picked = st.selectbox("Question", list(labels), key="mcq_pick")
        which = st.radio("Options", ["original order", "shuffled"], horizontal=True, key="mcq_which")
    result = labels[picked]
    if which == "shuffled":
        result = next(r for r in report.shuffled.results if r.question.index == result.question.index)
    with st.expander("Full question", expanded=False):
        st.text(report.original.config.layout.render(result.question)[0])
    st.html(question_html(result))


with frame.setup:
    choice = dataset_picker("Benchmark", EXAMPLES, key="mcq", path_placeholder="/data/exam.jsonl",
                            hub_placeholder="cais/mmlu", split_placeholder="test")
    # No form: a form would run on Enter in any field, and would show edited values the results do not reflect.
    with st.container(border=True):
        left, middle, right = st.columns(3)
        limit = left.number_input("Sample size (questions)", 1, 5000, 20, key="mcq_limit")
        cut = middle.selectbox("Cut", ["chars", "words"], key="mcq_cut",
                               format_func=lambda c: "half the characters" if c == "chars" else "half the words")
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
    model = current_model_spec()
    st.caption(f"Model: **{model}** (chosen in the sidebar, shared by every page)")
    inputs = [setting("model", model), setting("start token", current_start_token() or "automatic"),
              setting("benchmark", choice), setting("sample size", int(limit)), setting("cut", cut),
              setting("shuffle seed", int(seed)), setting("similarity", metric),
              setting("similarity threshold", threshold), setting("option-order test", permutation),
              setting("question column", question_col), setting("option columns", option_cols),
              setting("answer column", answer_col), setting("option layout", option_template)]
    submitted = st.button("Run", type="primary", key="mcq_run")
with frame.result:
    if submitted and choice is None:
        st.warning("Choose a benchmark in Setup first.")
    elif submitted and choice is not None:
        scroll_to_result_area()
        try:
            columns = MCQColumns(question=question_col.strip(), answer=answer_col.strip() or None,
                                 options=tuple(c.strip() for c in option_cols.split(",") if c.strip()))
            config = MCQConfig(layout=PromptLayout(option_template=option_template), cut=cut, metric=metric,
                               threshold=float(threshold))
            dataset = _load(choice, columns, int(limit))
            with watched_run("mcq", KIND, "questions"):
                report, _, n_computed = run_stored_benchmark(
                    dataset.questions, config, load=lambda: get_model(model), store=ResultStore(), model=model,
                    benchmark=display_name(dataset.source), shuffle_seed=int(seed), permutation=permutation,
                    progress=streamlit_progress(f"Probing original and shuffled options with {model}"),
                    start_token=current_start_token())
            said = [dataset.skipped_summary()] if dataset.skipped else []
            finish_run(REPORT_KEY, MCQRun(report, model, display_name(dataset.source),
                                          " ".join([*said, *dataset.notes]), n_computed), inputs)
        except LeakLensError as exc:
            st.error(str(exc))
    cancelled_notice("mcq")
    if show_result(REPORT_KEY, inputs, _show, action="Run"):
        scroll_after_run()
    elif choice is None:
        st.info("Choose a benchmark in Setup to start: a ready example, an uploaded file, a local path or a hub "
                "dataset id.")
