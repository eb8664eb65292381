"""Results: every stored run of every test, one opened at a time, and a report for stakeholders."""

from __future__ import annotations

import streamlit as st

from core.data.tables import display_name
from core.errors import LeakLensError
from core.inference.run import KIND as INFERENCE_KIND
from core.inference.run import inference_from_run
from core.leakage.comparison import COMPARISON_KIND, report_from_comparison
from core.leakage.finding import leakage_finding
from core.mcq.finding import mcq_finding
from core.mcq.stored import KIND as MCQ_KIND
from core.mcq.stored import mcq_report_from_run
from core.membership.benchmark import KIND as MEMBERSHIP_KIND
from core.membership.benchmark import latest_per_dataset, stored_results
from core.membership.finding import membership_finding
from core.store.overview import DELTA_KIND, delta_table, kind_label, run_details, run_table
from core.store.results import ResultStore
from core.viz.inference_plots import detector_weights, held_out_scores
from core.viz.leakage_plots import delta2_bars, delta_bars
from core.viz.mcq_plots import mcq_score_distribution, rank_histogram
from core.viz.membership_plots import auroc_bars, auroc_heatmap, column_labels, roc_overlay, top_methods
from core.viz.report import (
    DEFAULT_TITLE,
    MIXED_TITLE,
    build_html_report,
    inference_section,
    leakage_section,
    mcq_section,
    results_csv,
)
from ui.common import model_picker, page_setup
from ui.finding import finding_banner

page_setup("Results")
model_picker()
st.title("Results")
st.caption(
    "Every run stored on this machine, from this dashboard or the command line (`python -m core mia ...`, "
    "`mcq ...`, `delta ...`). Open one below; export a self-contained report at the bottom, or from a terminal "
    "with `python -m core report RUN_ID --out report.html` (run ids under *Run details*)."
)

store = ResultStore()
try:
    runs = store.list_runs()
except LeakLensError as exc:
    st.error(str(exc))
    st.stop()
if not runs:
    st.info(
        "No stored runs yet. Run the Membership benchmark page, or "
        "`python -m core mia --dataset FILE --model MODEL` from a terminal."
    )
    with st.expander("Run details"):
        st.caption(f"Results store: `{store.path}`")
    st.stop()

models = sorted({r.model for r in runs if r.model})
chosen_models = st.multiselect("Filter by model", models, default=models, key="results_models")
runs = [r for r in runs if r.model in chosen_models or not r.model]

unfinished = [r for r in runs if not r.finished]
# The list of runs is reference material: folded, so the opened run's verdict and charts come first.
with st.expander(f"Stored runs ({len(runs)}{f', {len(unfinished)} not finished' if unfinished else ''})"):
    st.dataframe(run_table(runs), hide_index=True, width="stretch",
                 column_order=["test", "dataset", "model", "status", "done", "total", "started (UTC)",
                               "finished (UTC)"])
    if unfinished:
        st.caption(
            f"{len(unfinished)} run(s) not finished: interrupted runs resume where they stopped when started "
            "again with the same data, model and settings."
        )
    st.markdown("**Run details**")
    st.caption(f"Run ids (for `python -m core report RUN_ID ...`; a unique prefix is enough). "
               f"Results store: `{store.path}`")
    st.dataframe(run_details(runs), hide_index=True, width="stretch", key="results_details")

results = latest_per_dataset([r for r in stored_results(store) if r.model in chosen_models])
mcq_runs = [r for r in runs if r.kind == MCQ_KIND and r.finished]
comparisons = [r for r in runs if r.kind == COMPARISON_KIND and r.finished]
inferences = [r for r in runs if r.kind == INFERENCE_KIND and r.finished]
kinds_stored = {r.kind for r in runs}
views = [MEMBERSHIP_KIND, *([MCQ_KIND] if MCQ_KIND in kinds_stored else []),
         *([DELTA_KIND] if kinds_stored & {DELTA_KIND, COMPARISON_KIND} else []),
         *([INFERENCE_KIND] if inferences else [])]

if len(views) > 1:
    st.subheader("Open a run")
view = st.radio("Test", views, format_func=kind_label, horizontal=True, key="results_view",
                label_visibility="collapsed") if len(views) > 1 else views[0]


def _run_label(run) -> str:
    return f"{display_name(run.dataset)} · {run.model} · {run.timestamp('finished_at')}"


# How each kind of finished run is rebuilt from the store alone (no model, no data files).
REBUILD = {MCQ_KIND: mcq_report_from_run, COMPARISON_KIND: report_from_comparison, INFERENCE_KIND: inference_from_run}


@st.cache_resource(max_entries=64, show_spinner=False)
def _stored_result(path: str, run_id: str, finished_at: float | None):
    """A finished run's result, rebuilt once per run (finished runs never change)."""
    stored = ResultStore(path)
    run = stored.get_run(run_id)
    return REBUILD[run.kind](stored, run)


def _try_open(run):
    """(result, None), or (None, why it cannot be opened) for a run stored by an older LeakLens."""
    try:
        return _stored_result(str(store.path), run.run_id, run.finished_at), None
    except LeakLensError as exc:
        return None, str(exc)


if view == MEMBERSHIP_KIND:
    if not results:
        st.info("No finished membership benchmark run matches the filter.")
    else:
        st.subheader("Methods × datasets")
        # sized by its cells (core.viz), not stretched: two datasets are two readable columns, not two wide bands
        st.plotly_chart(auroc_heatmap(results), width="content", key="results_heatmap")
        names = column_labels(results, with_model=True)
        index = st.selectbox("Dataset", range(len(results)), format_func=lambda i: names[i], key="results_dataset")
        result = results[index]
        finding_banner(membership_finding(result))
        for note in result.notes:
            st.caption(f"Note: {note}")
        st.plotly_chart(auroc_bars(result), width="stretch", key="results_bars")
        available = [k for k in result.method_keys if result.metrics.get(k) is not None]
        shown = st.multiselect("ROC curves", available, default=top_methods(result, 5),
                               format_func=lambda k: result.method_labels.get(k, k), key="results_roc_methods")
        st.plotly_chart(roc_overlay(result, shown), width="stretch", key="results_roc")
elif view == MCQ_KIND:
    if not mcq_runs:
        st.info("No finished multiple-choice run matches the filter.")
    else:
        mcq_index = st.selectbox("Run", range(len(mcq_runs)), format_func=lambda i: _run_label(mcq_runs[i]),
                                 key="results_mcq_run")
        picked_run = mcq_runs[mcq_index]
        report, problem = _try_open(picked_run)
        if report is None:
            st.warning(problem)
        else:
            finding_banner(mcq_finding(report))
            st.caption(f"Multiple-choice test · {len(report.original.results)} questions · "
                       f"{report.original.n_options} options each · shuffle seed {report.mitigation.seed}")
            st.plotly_chart(mcq_score_distribution(report, "completion"), width="stretch", key="results_mcq_completion")
            st.plotly_chart(mcq_score_distribution(report, "next_token"), width="stretch", key="results_mcq_next")
            if report.permutation is not None:
                st.plotly_chart(rank_histogram(report), width="stretch", key="results_mcq_ranks")
            payload = report.to_dict(model=picked_run.model, benchmark=display_name(picked_run.dataset))
            st.dataframe(payload["summary"], hide_index=True, width="stretch", key="results_mcq_summary")
            with st.expander("Per question"):
                st.dataframe(report.question_rows(), hide_index=True, width="stretch", key="results_mcq_questions")
elif view == INFERENCE_KIND:
    di_index = st.selectbox("Run", range(len(inferences)), format_func=lambda i: _run_label(inferences[i]),
                            key="results_inference_run")
    inference, problem = _try_open(inferences[di_index])
    if inference is None:
        st.warning(problem)
    else:
        finding_banner(inference.finding)
        st.caption(f"Dataset inference · {inference.result.n_suspect} suspect and {inference.result.n_validation} "
                   f"validation texts · {len(inference.result.split_p_values)} random splits · "
                   f"p = {inference.result.p_value:.2g}")
        st.plotly_chart(held_out_scores(inference), width="stretch", key="results_inference_scores")
        st.plotly_chart(detector_weights(inference), width="stretch", key="results_inference_weights")
else:
    if not comparisons:
        st.info("No finished loss-delta comparison matches the filter (losses stored by an older LeakLens are "
                "kept per problem set only): open one by running the test again (Loss delta page or "
                "`python -m core delta ...`); the stored losses below are reused, so no model scores a set twice.")
    else:
        delta_index = st.selectbox("Comparison", range(len(comparisons)),
                                   format_func=lambda i: _run_label(comparisons[i]), key="results_delta_run")
        leakage, problem = _try_open(comparisons[delta_index])
        if leakage is None:
            st.warning(problem)
        else:
            finding_banner(leakage_finding(leakage))
            first = leakage.models[0].stats
            st.caption(f"Loss-delta test · {first.n_test} benchmark and {first.n_ref} reference problems · "
                       f"{'paired by task id' if leakage.paired else 'unpaired'} · "
                       f"significance test: {leakage.test_used}")
            st.plotly_chart(delta_bars(leakage), width="stretch", key="results_delta_bars")
            if leakage.delta2_table():
                st.plotly_chart(delta2_bars(leakage), width="stretch", key="results_delta2_bars")
            st.dataframe(leakage.delta_table(), hide_index=True, width="stretch", key="results_delta_models")
    with st.expander("Stored losses per problem set"):
        st.dataframe(delta_table(runs), hide_index=True, width="stretch", key="results_delta",
                     column_config={"benchmark mean loss": st.column_config.NumberColumn(format="%.3f"),
                                    "reference mean loss": st.column_config.NumberColumn(format="%.3f")})

st.subheader("Export")
# an MCQ run stored without its options (older LeakLens) opens with a note above, but has nothing to export
exportable_mcq = [r for r in mcq_runs if _try_open(r)[0] is not None]
exportable_delta = [r for r in comparisons if _try_open(r)[0] is not None]
exportable_inference = [r for r in inferences if _try_open(r)[0] is not None]
options = ([("mia", i) for i in range(len(results))] + [("mcq", i) for i in range(len(exportable_mcq))]
           + [("delta", i) for i in range(len(exportable_delta))]
           + [("inference", i) for i in range(len(exportable_inference))])
labels = column_labels(results, with_model=True) if results else []


def _export_label(i: int) -> str:
    kind, index = options[i]
    if kind == "mia":
        return labels[index]
    if kind == "mcq":
        return f"Multiple choice · {_run_label(exportable_mcq[index])}"
    if kind == "inference":
        return f"Dataset inference · {_run_label(exportable_inference[index])}"
    return f"Loss delta · {_run_label(exportable_delta[index])}"


picked = st.multiselect(
    "Runs to export", range(len(options)), default=list(range(len(options))), format_func=_export_label,
    key="results_export_runs",
    help="The report opens with each run's finding, then its charts and tables: membership benchmark, "
         "multiple-choice, loss-delta and dataset-inference runs.")
chosen = [results[options[i][1]] for i in picked if options[i][0] == "mia"]
chosen_mcq = [exportable_mcq[options[i][1]] for i in picked if options[i][0] == "mcq"]
chosen_delta = [exportable_delta[options[i][1]] for i in picked if options[i][0] == "delta"]
chosen_inference = [exportable_inference[options[i][1]] for i in picked if options[i][0] == "inference"]


def _html_report() -> str:
    sections = [mcq_section(_try_open(r)[0], model=r.model, benchmark=display_name(r.dataset))
                for r in chosen_mcq]
    sections += [leakage_section(_try_open(r)[0]) for r in chosen_delta]
    sections += [inference_section(_try_open(r)[0]) for r in chosen_inference]
    return build_html_report(chosen, title=MIXED_TITLE if sections else DEFAULT_TITLE, sections=sections)


cols = st.columns(3)
cols[0].download_button("AUROC table (CSV)", results_csv(chosen), file_name="leaklens_results.csv",
                        mime="text/csv", key="results_csv", disabled=not chosen,
                        help="Membership benchmark runs only.")
cols[1].download_button("Report (self-contained HTML)", _html_report,
                        file_name="leaklens_report.html", mime="text/html", key="results_html",
                        disabled=not (chosen or chosen_mcq or chosen_delta or chosen_inference),
                        help="Opens in any browser without the app or a network connection.")
with cols[2].popover("Delete a run"):
    by_id = {r.run_id: r for r in runs}
    doomed = st.selectbox("Run", list(by_id), key="results_delete_choice",
                          format_func=lambda rid: f"{kind_label(by_id[rid].kind)} · {by_id[rid].dataset} · "
                                                  f"{by_id[rid].model} · {by_id[rid].status} · "
                                                  f"{by_id[rid].timestamp('created_at')}")
    # Deleting cannot be undone and a run can stand for hours of scoring: ask for an explicit tick first.
    sure = st.checkbox(f"Delete its {by_id[doomed].n_done} scored texts for good", key="results_delete_sure")
    if st.button("Delete", key="results_delete", type="primary", disabled=not sure):
        store.delete_run(doomed)
        st.rerun()
