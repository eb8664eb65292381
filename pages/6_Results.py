"""Results: every stored run, detectors compared across datasets by AUROC, and export for stakeholders."""

from __future__ import annotations

import streamlit as st

from core.errors import LeakLensError
from core.membership.benchmark import latest_per_dataset, stored_results
from core.membership.finding import membership_finding
from core.store.results import ResultStore
from core.viz.membership_plots import auroc_bars, auroc_heatmap, column_labels, roc_overlay, top_methods
from core.viz.report import build_html_report, results_csv
from ui.common import model_picker, page_setup
from ui.finding import finding_banner

page_setup("Results")
model_picker()
st.title("Results")
st.caption(
    "Every run stored on this machine, from this dashboard or the command line (`python -m core mia ...`). "
    "AUROC 0.5 is chance; the blind baseline (a bag-of-words classifier that never sees the model) shows how "
    "separable each dataset is without the model."
)

store = ResultStore()
try:
    runs = store.list_runs()
except LeakLensError as exc:
    st.error(str(exc))
    st.stop()
if not runs:
    st.info(
        f"No stored runs yet in `{store.path}`. Run the Membership benchmark page, or "
        "`python -m core mia --dataset FILE --model MODEL` from a terminal."
    )
    st.stop()

models = sorted({r.model for r in runs if r.model})
chosen_models = st.multiselect("Filter by model", models, default=models, key="results_models")
runs = [r for r in runs if r.model in chosen_models or not r.model]

st.subheader("Stored runs")
st.dataframe(
    [
        {
            "kind": r.kind,
            "dataset": r.dataset,
            "model": r.model,
            "status": r.status,
            "done": r.n_done,
            "total": r.n_total,
            "started (UTC)": r.timestamp("created_at"),
            "finished (UTC)": r.timestamp("finished_at"),
            "run id": r.run_id,
        }
        for r in runs
    ],
    hide_index=True,
    width="stretch",
)
unfinished = [r for r in runs if not r.finished]
if unfinished:
    st.caption(
        f"{len(unfinished)} run(s) not finished: interrupted runs resume where they stopped when started again "
        "with the same dataset, model and methods."
    )

results = latest_per_dataset([r for r in stored_results(store) if r.model in chosen_models])
if not results:
    st.info("No finished membership benchmark run matches the filter.")
    st.stop()

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

st.subheader("Export")
picked = st.multiselect("Runs to export", range(len(results)), default=list(range(len(results))),
                        format_func=lambda i: names[i], key="results_export_runs",
                        help="The report opens with each run's finding, then its charts and the full table.")
chosen = [results[i] for i in picked]
cols = st.columns(3)
cols[0].download_button("AUROC table (CSV)", results_csv(chosen), file_name="leaklens_results.csv",
                        mime="text/csv", key="results_csv", disabled=not chosen)
cols[1].download_button("Report (self-contained HTML)", lambda: build_html_report(chosen),
                        file_name="leaklens_report.html", mime="text/html", key="results_html", disabled=not chosen,
                        help="Opens in any browser without the app or a network connection.")
with cols[2].popover("Delete a run"):
    by_id = {r.run_id: r for r in runs}
    doomed = st.selectbox("Run", list(by_id), key="results_delete_choice",
                          format_func=lambda rid: f"{by_id[rid].dataset} · {by_id[rid].model} · "
                                                  f"{by_id[rid].status} · {rid[:8]}")
    # Deleting cannot be undone and a run can stand for hours of scoring: ask for an explicit tick first.
    sure = st.checkbox(f"Delete its {by_id[doomed].n_done} scored texts for good", key="results_delete_sure")
    if st.button("Delete", key="results_delete", type="primary", disabled=not sure):
        store.delete_run(doomed)
        st.rerun()
