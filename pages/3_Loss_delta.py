"""Loss-delta leakage test: a benchmark's solutions vs a freshly written reference set, across models."""

from __future__ import annotations

import html

import streamlit as st

from core.data.problems import BUILTIN, HUMANEVAL, SKY_SHADOW, ProblemSet, load_problem_set, load_uploaded_problems
from core.engine.models import available_bundled_models
from core.errors import LeakLensError
from core.leakage.delta import DELTA2_THRESHOLD, LeakageReport, ModelRequest, distinct_specs
from core.leakage.finding import leakage_finding
from core.leakage.run import run_leakage_test
from core.leakage.stored import KIND as DELTA_KIND
from core.store.results import ResultStore
from core.viz.leakage_plots import delta2_bars, delta_bars, problem_scatter
from ui.common import (
    current_model_spec,
    current_start_token,
    get_model,
    metric_columns,
    model_picker,
    page_setup,
    streamlit_progress,
)
from ui.dataset_picker import DatasetChoice, ReadyExample, dataset_picker
from ui.finding import finding_banner
from ui.freshness import keep_result, setting, show_result
from ui.run_control import cancelled_notice, scroll_to_finding, watched_run

REPORT_KEY = "loss_delta_report"
TEST_EXAMPLES = [ReadyExample("HumanEval (offline, 164 problems)", HUMANEVAL),
                 ReadyExample("LeakLens built-in set", BUILTIN)]
REF_EXAMPLES = [ReadyExample("LeakLens built-in set (52 fresh problems)", BUILTIN),
                ReadyExample("HumanEval shadow set (hub)", SKY_SHADOW), ReadyExample("HumanEval (offline)", HUMANEVAL)]

page_setup("Loss delta")
model_picker()
st.title("Loss delta")
st.caption(
    "A model that trained on a benchmark finds its solutions easier than equally hard problems written later. "
    "Δ = L_test − L_ref compares the mean loss on solution tokens (given the prompt) of the benchmark and of a "
    "fresh reference set; Δ² = Δ_model − Δ_base isolates what fine-tuning added (the original study proposes "
    f"Δ² > {DELTA2_THRESHOLD} as a necessary condition for a clean fine-tune; the threshold depends on the base)."
)


def _load(choice: DatasetChoice, columns: dict, limit: int | None) -> ProblemSet:
    if choice.is_upload:
        problems = load_uploaded_problems(choice.data, choice.source, **columns)
        return ProblemSet(problems.name, problems.problems[:limit] if limit else problems.problems, problems.has_ids,
                          problems.skipped)
    return load_problem_set(choice.source, split=choice.split, config=choice.config, limit=limit, **columns)


def _show(report: LeakageReport, threshold: float) -> None:
    finding_banner(leakage_finding(report))
    first = report.models[0].stats
    pairing = "paired by task id" if report.paired else "unpaired (different task ids)"
    st.caption(f"{html.escape(report.test_name)}: {first.n_test} problems · {html.escape(report.ref_name)}: "
               f"{first.n_ref} problems · {pairing} · significance test: {report.test_used}")
    if report.unmatched_test or report.unmatched_ref:
        st.caption(f"Left out for lack of a partner: {len(report.unmatched_test)} test and "
                   f"{len(report.unmatched_ref)} reference problems.")
    st.dataframe(
        [{"Model": m.model, "L_test": m.stats.l_test, "L_ref": m.stats.l_ref, "Δ": m.stats.delta,
          "Δ CI low": m.stats.ci[0], "Δ CI high": m.stats.ci[1], "p": m.stats.p_value} for m in report.models],
        hide_index=True, width="stretch",
        column_config=metric_columns(("L_test", "L_ref", "Δ", "Δ CI low", "Δ CI high", "p"), "%.4f"),
    )
    cols = st.columns(2)
    cols[0].download_button("Download Model | L_test | L_ref | Δ (CSV)", report.delta_csv(), "loss_delta.csv",
                            "text/csv", key="ld_csv_delta")
    if report.delta2_table():
        cols[1].download_button("Download Δ² table (CSV)", report.delta2_csv(), "loss_delta2.csv", "text/csv",
                                key="ld_csv_delta2")
    st.plotly_chart(delta_bars(report), width="stretch", key="ld_bars")
    if report.delta2_table():
        st.dataframe(report.delta2_table(), hide_index=True, width="stretch",
                     column_config=metric_columns(("L_test", "L_ref", "Δ_SFT", "Δ_base", "Δ²"), "%.4f"))
        st.plotly_chart(delta2_bars(report, threshold), width="stretch", key="ld_delta2")
        below = [m.model for m in report.models if m.delta2 is not None and m.delta2 < threshold]
        if below:
            st.warning(f"Δ² below {threshold:+.3f} for: {', '.join(below)}. Fine-tuning made the benchmark "
                       "markedly easier than the reference: a sign of benchmark text in the fine-tuning data.")
    scored = [ml.model for ml in report.losses]
    model = st.selectbox("Per-problem losses of", scored, key="ld_scatter_model") if len(scored) > 1 else scored[0]
    st.plotly_chart(problem_scatter(report, model), width="stretch", key="ld_scatter")
    st.subheader("Reference-set check")
    if report.flagged:
        st.caption("Reference problems that may be unfit as a reference (not evidence of leakage): solution length "
                   "more than 30% off its paired test problem, or per-problem Δ < −0.2 for more than 80% of models.")
        st.dataframe([{"task_id": f.task_id, "reasons": "; ".join(f.reasons)} for f in report.flagged],
                     hide_index=True, width="stretch")
    else:
        st.caption("No reference problem flagged.")


left, right = st.columns(2)
with left:
    test_choice = dataset_picker("Test set (benchmark)", TEST_EXAMPLES, key="ld_test",
                                 path_placeholder="/data/my_problems.jsonl", hub_placeholder="openai/openai_humaneval")
with right:
    ref_choice = dataset_picker("Reference set", REF_EXAMPLES, key="ld_ref", path_placeholder="/data/my_problems.jsonl",
                                hub_placeholder=SKY_SHADOW)
with st.expander("Columns, size and pairing"):
    cols = st.columns(3)
    id_col = cols[0].text_input("Task id column", placeholder="auto: task_id, id", key="ld_id_col").strip() or None
    prompt_col = cols[1].text_input("Prompt column", placeholder="auto: prompt", key="ld_prompt_col").strip() or None
    solution_col = cols[2].text_input("Solution column", placeholder="auto: canonical_solution, solution",
                                      key="ld_solution_col").strip() or None
    cols = st.columns(3)
    limit = int(cols[0].number_input("Problems per set (0 = all)", min_value=0, value=0, step=10, key="ld_limit"))
    pairing = cols[1].selectbox("Pairing", ["auto", "paired", "unpaired"], key="ld_pairing",
                                help="auto pairs problems by task id when both sets share ids (Wilcoxon signed-rank); "
                                     "otherwise the sets are compared as two samples (Mann-Whitney U).")
    threshold = float(cols[2].number_input("Δ² threshold", value=DELTA2_THRESHOLD, step=0.01, format="%.3f",
                                           key="ld_threshold"))

sidebar_model = current_model_spec()
models = st.multiselect("Models", sorted({sidebar_model, *available_bundled_models()}), default=[sidebar_model],
                        help="Every model is scored on both sets; losses are kept in the results store.",
                        key="ld_models")
bases: dict[str, str] = {}
if models:
    st.caption("Base model per model (optional, for Δ²): a bundled name, local directory or hub id.")
    base_cols = st.columns(min(len(models), 3))
    for index, spec in enumerate(models):
        bases[spec] = base_cols[index % len(base_cols)].text_input(
            f"Base of {spec}", placeholder="none", key=f"ld_base_{index}").strip()

inputs = [setting("test set", test_choice), setting("reference set", ref_choice),
          setting("task id column", id_col or "auto"), setting("prompt column", prompt_col or "auto"),
          setting("solution column", solution_col or "auto"), setting("problems per set", limit or "all"),
          setting("pairing", pairing), setting("models", tuple(models)),
          setting("base models", {spec: base for spec, base in bases.items() if base}),
          setting("start token", current_start_token() or "automatic")]
run_clicked = st.button("Run loss-delta test", type="primary",
                        disabled=test_choice is None or ref_choice is None or not models, key="ld_run")
if run_clicked and test_choice is not None and ref_choice is not None:
    try:
        columns = {"id_column": id_col, "prompt_column": prompt_col, "solution_column": solution_col}
        test = _load(test_choice, columns, limit or None)
        ref = _load(ref_choice, columns, limit or None)
        requests = [ModelRequest(spec, bases.get(spec) or None) for spec in models]
        with watched_run("ld", DELTA_KIND, "solutions", total=(len(test) + len(ref)) * len(distinct_specs(requests))):
            progress = streamlit_progress(f"Scoring {len(test)} + {len(ref)} solutions per model")
            report = run_leakage_test(test, ref, requests, load=get_model, pairing=pairing, store=ResultStore(),
                                      progress=progress, start_token=current_start_token())
        keep_result(REPORT_KEY, report, inputs)
    except LeakLensError as exc:
        st.error(str(exc))
cancelled_notice("ld")

shown = show_result(REPORT_KEY, inputs, lambda report: _show(report, threshold), action="Run loss-delta test")
if shown and run_clicked:
    scroll_to_finding()
if not shown and (test_choice is None or ref_choice is None):
    st.info("Choose a test set and a reference set to start.")
