"""Loss-delta leakage test: a benchmark's solutions vs a freshly written reference set, for the sidebar's model."""

from __future__ import annotations

import html

import streamlit as st

from core.data.demo import dataset_label
from core.data.problems import BUILTIN, HUMANEVAL, SKY_SHADOW, ProblemSet, load_problem_set, load_uploaded_problems
from core.errors import LeakLensError
from core.leakage.delta import DELTA2_THRESHOLD, DeltaStats, LeakageReport, ModelRequest, distinct_specs
from core.leakage.finding import leakage_finding
from core.leakage.run import run_leakage_test
from core.leakage.stored import KIND as DELTA_KIND
from core.stats.finding import Finding
from core.store.results import ResultStore
from core.viz.csv_export import result_csv
from core.viz.leakage_plots import delta2_bars, delta_bars, problem_scatter
from core.viz.report import leakage_report
from ui.common import current_model_spec, current_start_token, get_model, metric_columns, streamlit_progress
from ui.dataset_picker import DatasetChoice, ReadyExample, dataset_picker
from ui.finding import finding_banner
from ui.freshness import setting, show_result
from ui.layout import controls, details, finish_run, result_first_page, scroll_after_run, scroll_to_result_area
from ui.run_control import cancelled_notice, watched_run

REPORT_KEY = "loss_delta_report"
TEST_EXAMPLES = [ReadyExample("HumanEval (offline, 164 problems)", HUMANEVAL),
                 ReadyExample("LeakLens built-in set", BUILTIN)]
REF_EXAMPLES = [ReadyExample("LeakLens built-in set (52 fresh problems)", BUILTIN),
                ReadyExample("HumanEval shadow set (hub)", SKY_SHADOW), ReadyExample("HumanEval (offline)", HUMANEVAL)]

INTRO = (
    "A model that trained on a benchmark finds its solutions easier than equally hard problems written later. "
    "Δ = L_test − L_ref compares the mean loss on solution tokens (given the prompt) of the benchmark and of a "
    "fresh reference set; Δ² = Δ_model − Δ_base isolates what fine-tuning added (the original study proposes "
    f"Δ² > {DELTA2_THRESHOLD} as a necessary condition for a clean fine-tune; the threshold depends on the base). "
    "Losses are stored: an interrupted run resumes, and every run appears on the Results page."
)
PRESENT_INTRO = (
    "**Does the model find this benchmark easier than comparable fresh problems?** The model reads each "
    "benchmark solution and each solution of a set written later; a benchmark it finds clearly easier (a lower "
    "loss) may have been in its training data, or text very like it."
)
frame = result_first_page("Loss delta", INTRO, has_result=REPORT_KEY in st.session_state,
                          present_intro=PRESENT_INTRO)


def _load(choice: DatasetChoice, columns: dict, limit: int | None) -> ProblemSet:
    if choice.is_upload:
        problems = load_uploaded_problems(choice.data, choice.source, **columns)
        return ProblemSet(problems.name, problems.problems[:limit] if limit else problems.problems, problems.has_ids,
                          problems.skipped)
    return load_problem_set(choice.source, split=choice.split, config=choice.config, limit=limit, **columns)


def _data(report: LeakageReport) -> str:
    """The two sets by the names people know them by (a demo's title, a file's name, never a path)."""
    return f"{dataset_label(report.test_name)} vs {dataset_label(report.ref_name)}"


def _tested(report: LeakageReport) -> str:
    return ", ".join(m.model for m in report.models)


def _interval(stats: DeltaStats) -> dict[str, object]:
    return {"delta": stats.delta, "delta_ci_low": stats.ci[0], "delta_ci_high": stats.ci[1], "p_value": stats.p_value}


def summary_csv(report: LeakageReport, finding: Finding) -> str:
    """One row per tested model: Δ with its interval and p-value, both losses, and Δ² against the base model."""
    rows = []
    for m in report.models:
        s = m.stats
        rows.append({**_interval(s), "significance_test": s.test, "loss_test": s.l_test, "loss_reference": s.l_ref,
                     "n_test": s.n_test, "n_reference": s.n_ref, "base_model": m.base_model,
                     "delta_base": m.base_stats.delta if m.base_stats else None, "delta2": m.delta2,
                     "delta2_ci_low": m.delta2_ci[0] if m.delta2_ci else None,
                     "delta2_ci_high": m.delta2_ci[1] if m.delta2_ci else None})
    return result_csv(rows, finding=finding, model=_tested(report), data=_data(report))


def problems_csv(report: LeakageReport, finding: Finding) -> str:
    """One row per problem (and scoring model, base models included), with that model's Δ interval first."""
    stats = {m.model: m.stats for m in report.models}
    for m in report.models:
        if m.base_model and m.base_stats and m.base_model not in stats:
            stats[m.base_model] = m.base_stats
    rows = []
    for row in report.problem_rows():
        scored_by = str(row["model"])
        interval = _interval(stats[scored_by]) if scored_by in stats else {}
        rows.append({**interval, "scored_by": scored_by, "task_id": row["task_id"], "loss_test": row["loss_test"],
                     "loss_reference": row["loss_ref"]})
    columns = ["delta", "delta_ci_low", "delta_ci_high", "p_value", "scored_by", "task_id", "loss_test",
               "loss_reference"]
    return result_csv(rows, finding=finding, model=_tested(report), data=_data(report), columns=columns)


def _show(report: LeakageReport, threshold: float) -> None:
    finding = leakage_finding(report)
    st.subheader(f"{_data(report)} · {_tested(report)}")
    finding_banner(finding)
    st.plotly_chart(delta_bars(report), width="stretch", key="ld_bars")
    with controls("ld_exports"):
        cols = st.columns(3)
        cols[0].download_button("Report (HTML)", lambda: leakage_report(report), "loss_delta_report.html",
                                "text/html", key="ld_report", on_click="ignore", icon=":material/description:",
                                help="One self-contained file: the verdict, the charts and the numbers.")
        cols[1].download_button("Loss delta per model (CSV)", summary_csv(report, finding), "loss_delta.csv",
                                "text/csv", key="ld_csv_delta", on_click="ignore", icon=":material/download:")
        cols[2].download_button("Per-problem losses (CSV)", problems_csv(report, finding),
                                "loss_delta_problems.csv", "text/csv", key="ld_csv_problems", on_click="ignore",
                                icon=":material/download:")
    with details("ld"):
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
        if report.delta2_table():
            st.dataframe(report.delta2_table(), hide_index=True, width="stretch",
                         column_config=metric_columns(("L_test", "L_ref", "Δ_SFT", "Δ_base", "Δ²"), "%.4f"))
            st.plotly_chart(delta2_bars(report, threshold), width="stretch", key="ld_delta2")
            below = [m.model for m in report.models if m.delta2 is not None and m.delta2 < threshold]
            if below:
                st.caption(f"Δ² below the study's threshold {threshold:+.3f} for: {', '.join(below)}. The study "
                           "reads this as fine-tuning having made the benchmark markedly easier than the reference; "
                           "the verdict above weighs it with its interval.")
        scored = [ml.model for ml in report.losses]
        if len(scored) > 1:
            with controls("ld_scatter"):
                model = st.selectbox("Per-problem losses of", scored, key="ld_scatter_model")
        else:
            model = scored[0]
        st.plotly_chart(problem_scatter(report, model), width="stretch", key="ld_scatter")
        st.subheader("Reference-set check")
        if report.flagged:
            st.caption("Reference problems that may be unfit as a reference (not evidence of leakage): solution "
                       "length more than 30% off its paired test problem, or per-problem Δ < −0.2 for more than 80% "
                       "of models.")
            st.dataframe([{"task_id": f.task_id, "reasons": "; ".join(f.reasons)} for f in report.flagged],
                         hide_index=True, width="stretch")
        else:
            st.caption("No reference problem flagged.")


with frame.setup:
    left, right = st.columns(2)
    with left:
        test_choice = dataset_picker("Test set (benchmark)", TEST_EXAMPLES, key="ld_test",
                                     path_placeholder="/data/my_problems.jsonl",
                                     hub_placeholder="openai/openai_humaneval")
    with right:
        ref_choice = dataset_picker("Reference set", REF_EXAMPLES, key="ld_ref",
                                    path_placeholder="/data/my_problems.jsonl", hub_placeholder=SKY_SHADOW)
    with st.expander("Columns, size and pairing"):
        cols = st.columns(3)
        id_col = cols[0].text_input("Task id column", placeholder="auto: task_id, id", key="ld_id_col").strip() or None
        prompt_col = cols[1].text_input("Prompt column", placeholder="auto: prompt",
                                        key="ld_prompt_col").strip() or None
        solution_col = cols[2].text_input("Solution column", placeholder="auto: canonical_solution, solution",
                                          key="ld_solution_col").strip() or None
        cols = st.columns(3)
        limit = int(cols[0].number_input("Problems per set (0 = all)", min_value=0, value=0, step=10,
                                         key="ld_limit"))
        pairing = cols[1].selectbox("Pairing", ["auto", "paired", "unpaired"], key="ld_pairing",
                                    help="auto pairs problems by task id when both sets share ids (Wilcoxon "
                                         "signed-rank); otherwise the sets are compared as two samples "
                                         "(Mann-Whitney U).")
        threshold = float(cols[2].number_input("Δ² threshold", value=DELTA2_THRESHOLD, step=0.01, format="%.3f",
                                               key="ld_threshold"))
    model = current_model_spec()
    st.caption(f"Model: **{model}** (chosen in the sidebar, shared by every page)")
    base = st.text_input("Base model (optional, for Δ²)", placeholder="none", key="ld_base_0",
                         help="The model before fine-tuning: a bundled name, local directory or hub id. "
                              "Δ² = Δ_model − Δ_base isolates what fine-tuning added.").strip() or None

    inputs = [setting("test set", test_choice), setting("reference set", ref_choice),
              setting("task id column", id_col or "auto"), setting("prompt column", prompt_col or "auto"),
              setting("solution column", solution_col or "auto"), setting("problems per set", limit or "all"),
              setting("pairing", pairing), setting("model", model), setting("base model", base),
              setting("start token", current_start_token() or "automatic")]
    run_clicked = st.button("Run loss-delta test", type="primary",
                            disabled=test_choice is None or ref_choice is None, key="ld_run")
with frame.result:
    if run_clicked and test_choice is not None and ref_choice is not None:
        scroll_to_result_area()
        try:
            columns = {"id_column": id_col, "prompt_column": prompt_col, "solution_column": solution_col}
            test = _load(test_choice, columns, limit or None)
            ref = _load(ref_choice, columns, limit or None)
            requests = [ModelRequest(model, base)]
            with watched_run("ld", DELTA_KIND, "solutions",
                             total=(len(test) + len(ref)) * len(distinct_specs(requests))):
                progress = streamlit_progress(f"Scoring {len(test)} + {len(ref)} solutions with {model}")
                report = run_leakage_test(test, ref, requests, load=get_model, pairing=pairing, store=ResultStore(),
                                          progress=progress, start_token=current_start_token())
            finish_run(REPORT_KEY, report, inputs)
        except LeakLensError as exc:
            st.error(str(exc))
    cancelled_notice("ld")
    shown = show_result(REPORT_KEY, inputs, lambda report: _show(report, threshold), action="Run loss-delta test")
    if shown:
        scroll_after_run()
    elif test_choice is None or ref_choice is None:
        st.info("Choose a test set and a reference set in Setup to start.")
