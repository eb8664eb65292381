"""Multiple-choice memorization: does the model finish a benchmark's options word for word?"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import streamlit as st

from core.errors import LeakLensError
from core.mcq.completion import MCQConfig
from core.data.questions import MCQColumns, MCQDataset, PromptLayout, load_mcq, questions_from_table, to_jsonl
from core.mcq.match import SIMILARITY_METRICS
from core.mcq.study import MCQReport, run_benchmark
from core.mcq.stored import save_report
from core.viz.mcq_view import question_html
from core.viz.mcq_plots import PROBE_TITLES, rank_histogram, mcq_score_distribution
from core.store.results import ResultStore
from core.data.tables import load_uploaded
from ui.common import get_model, model_picker, page_setup, streamlit_progress

REPORT_KEY = "mcq_report"
SAMPLES = (Path(__file__).resolve().parents[1] / ".." / "shared" / "data").resolve()
BUILTIN = {
    "MMLU sample (English)": SAMPLES / "mmlu_sample.jsonl",
    "Chinese exam sample (single + multi-choice)": SAMPLES / "chinese_mcq_sample.jsonl",
}
OTHER_PATH = "Local path or hub id"
OTHER_UPLOAD = "Upload a file"

page_setup("MCQ memorization")
model_picker()
st.title("Multiple-choice memorization")
st.caption(
    "Each option of each question is cut in half; the model sees the question, the earlier options and the first "
    "half, and continues greedily. A model that memorised the benchmark finishes the options verbatim. "
    "Score per question = options reproduced (0–4). Shuffling the options and measuring again shows how much a "
    "shuffled release mitigates; the order test ranks the published option order among all 24."
)


def _dataset_inputs() -> tuple[str, object] | None:
    choices = [name for name, path in BUILTIN.items() if path.exists()] + [OTHER_PATH, OTHER_UPLOAD]
    choice = st.selectbox("Benchmark", choices, key="mcq_dataset")
    if choice in BUILTIN:
        return "source", str(BUILTIN[choice])
    if choice == OTHER_PATH:
        value = st.text_input("Path or hub id", placeholder="cais/mmlu or /data/exam.jsonl", key="mcq_path")
        return ("source", value.strip()) if value.strip() else None
    upload = st.file_uploader("CSV, JSONL, JSON or Parquet", type=["csv", "tsv", "jsonl", "json", "parquet"],
                              key="mcq_upload")
    return ("upload", (upload.getvalue(), upload.name)) if upload is not None else None


def _load(source: tuple[str, object], columns: MCQColumns, split: str, config: str, limit: int) -> MCQDataset:
    kind, value = source
    if kind == "upload":
        data, name = value  # type: ignore[misc]
        return questions_from_table(load_uploaded(data, name), columns=columns, limit=limit)
    return load_mcq(str(value), split=split or None, config=config or None, limit=limit, columns=columns)


def _rows_csv(rows: list[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def _show(report: MCQReport, kind: str, model: str, benchmark: str) -> None:
    payload = report.to_dict(model=model, benchmark=benchmark)
    cols = st.columns(4)
    cols[0].metric("Questions", payload["n"])
    cols[1].metric(f"Mean score, original ({kind})", f"{report.original.summary(kind).mean:.2f}")
    cols[2].metric(f"Mean score, shuffled ({kind})", f"{report.shuffled.summary(kind).mean:.2f}")
    cols[3].metric("Mitigation (drop)", f"{report.mitigation.drop(kind):+.2f}")
    st.plotly_chart(mcq_score_distribution(report, kind), width="stretch", key="mcq_dist")

    st.subheader("Summary (model × benchmark)")
    st.dataframe(payload["summary"], hide_index=True, width="stretch", key="mcq_summary")

    if report.permutation is not None:
        st.plotly_chart(rank_histogram(report), width="stretch", key="mcq_ranks")
        perm = payload["permutation"]
        st.caption(f"Original order most likely for {perm['top1_fraction']:.1%} of questions "
                   f"(chance {1 / perm['n_orders']:.1%}, binomial p = {perm['p_value_top1']:.2g}).")

    st.subheader("Questions")
    rows = report.question_rows()
    st.dataframe(rows, hide_index=True, width="stretch", key="mcq_questions")
    dl = st.columns(3)
    dl[0].download_button("Download per-question scores (CSV)", _rows_csv(rows), "mcq_scores.csv", "text/csv",
                          key="mcq_csv")
    dl[1].download_button("Download shuffled benchmark (JSONL)", to_jsonl(report.shuffled_questions),
                          "shuffled_benchmark.jsonl", "application/jsonl", key="mcq_jsonl")
    if dl[2].button("Save to the results store", key="mcq_save"):
        try:
            run = save_report(ResultStore(), report, model=model, benchmark=benchmark)
            st.success(f"Stored as run {run.run_id} (kind mcq); see the Results page.")
        except LeakLensError as exc:
            st.error(str(exc))

    st.subheader("Per-question view")
    ranked = sorted(report.original.results, key=lambda r: -r.score(kind))
    labels = {f"#{r.question.index} · score {r.score(kind)} · {r.question.question[:80]}": r for r in ranked}
    picked = st.selectbox("Question", list(labels), key="mcq_pick")
    which = st.radio("Options", ["original order", "shuffled"], horizontal=True, key="mcq_which")
    result = labels[picked]
    if which == "shuffled":
        result = next(r for r in report.shuffled.results if r.question.index == result.question.index)
    with st.expander("Full question", expanded=False):
        st.text(report.original.config.layout.render(result.question)[0])
    st.html(question_html(result))


source = _dataset_inputs()
with st.form("mcq_form"):
    left, middle, right = st.columns(3)
    limit = left.number_input("Sample size (questions)", 1, 5000, 20, key="mcq_limit")
    probe = middle.selectbox("Probe shown", ["completion", "next_token", "similar"],
                             format_func=lambda k: PROBE_TITLES[k], key="mcq_probe")
    cut = right.selectbox("Cut", ["chars", "words"], key="mcq_cut",
                          format_func=lambda c: "half the characters" if c == "chars" else "half the words")
    seed = left.number_input("Shuffle seed", 0, 2**31 - 1, 0, key="mcq_seed")
    metric = middle.selectbox("Similarity", SIMILARITY_METRICS, key="mcq_metric")
    threshold = right.slider("Similarity threshold", 0.05, 1.0, 0.75, 0.05, key="mcq_threshold")
    permutation = st.checkbox("Option-order test (24 orders per question)", key="mcq_perm")
    with st.expander("Columns, hub split and prompt layout"):
        c1, c2, c3 = st.columns(3)
        question_col = c1.text_input("Question column", "question", key="mcq_qcol")
        option_cols = c2.text_input("Option columns", "A,B,C,D", key="mcq_ocols")
        answer_col = c3.text_input("Answer column", "answer", key="mcq_acol")
        split = c1.text_input("Hub split", "", placeholder="test", key="mcq_split")
        hub_config = c2.text_input("Hub config", "", placeholder="all", key="mcq_config")
        option_template = c3.text_input("Option layout", "{letter}. {text}", key="mcq_otemplate")
    submitted = st.form_submit_button("Run", type="primary", key="mcq_run")

if submitted:
    if source is None:
        st.warning("Choose a benchmark first.")
    else:
        try:
            columns = MCQColumns(question=question_col.strip(), answer=answer_col.strip() or None,
                                 options=tuple(c.strip() for c in option_cols.split(",") if c.strip()))
            config = MCQConfig(layout=PromptLayout(option_template=option_template), cut=cut, metric=metric,
                               threshold=float(threshold))
            dataset = _load(source, columns, split.strip(), hub_config.strip(), int(limit))
            lm = get_model()
            report = run_benchmark(lm, dataset.questions, config, shuffle_seed=int(seed), permutation=permutation,
                                   progress=streamlit_progress("Probing original and shuffled options"))
            st.session_state[REPORT_KEY] = (report, lm.spec, dataset.source, dataset.skipped_summary()
                                            if dataset.skipped else "")
        except LeakLensError as exc:
            st.error(str(exc))

if REPORT_KEY in st.session_state:
    report, model, benchmark, skipped = st.session_state[REPORT_KEY]
    if skipped:
        st.caption(skipped)
    st.caption(f"Model `{model}` · benchmark `{benchmark}`")
    _show(report, probe, model, benchmark)
