"""Results: every stored run of every test as a verdict card, the most recent one opened at the top, and reports."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from core.errors import LeakLensError
from core.inference.run import KIND as INFERENCE_KIND
from core.leakage.comparison import COMPARISON_KIND
from core.mcq.stored import KIND as MCQ_KIND
from core.membership.benchmark import KIND as MEMBERSHIP_KIND
from core.membership.benchmark import latest_per_dataset
from core.results.stored import RunCard, StoredResult, run_card, try_open
from core.store.overview import (
    DELTA_KIND,
    STORY_KINDS,
    delta_table,
    filter_runs,
    kind_label,
    opened_run,
    parts_of,
    run_details,
    run_table,
    story_runs,
    unfinished_runs,
)
from core.store.results import ResultStore, RunInfo
from core.viz.inference_plots import detector_weights, held_out_scores, split_p_values
from core.viz.leakage_plots import delta2_bars, delta_bars
from core.viz.mcq_plots import mcq_score_distribution, rank_histogram
from core.viz.membership_plots import auroc_bars, auroc_heatmap, roc_overlay, top_methods
from core.viz.report import results_csv, stored_csv, stored_runs_report
from core.viz.run_cards import card_html
from ui.common import metric_columns
from ui.finding import finding_banner
from ui.layout import controls, details, result_first_page, scroll_to_result_area

INTRO = ("Every run stored on this machine, from this dashboard or the command line (`python -m core mia ...`, "
         "`mcq ...`, `delta ...`, `dataset-inference ...`): the most recent one opens here, every run's verdict is "
         "listed below it. Export a self-contained report from here, or from a terminal with "
         "`python -m core report RUN_ID --out report.html` (run ids in Setup).")
PRESENT_INTRO = ("**What did the tests find?** The most recent test's verdict first, then every stored test's "
                 "verdict, newest first.")
OPEN_KEY = "results_open"  # (id of the run opened from the list, id of the newest run when it was opened)
SCROLL_KEY = "results_scroll_up"
MANY_CARDS = 8  # more cards than this scroll inside a box of their own, so the sections below stay in reach

store = ResultStore()
try:
    runs = store.list_runs()
    problem = None
except LeakLensError as exc:
    runs, problem = [], str(exc)
stories = story_runs(runs)
frame = result_first_page("Results", INTRO, has_result=bool(stories), present_intro=PRESENT_INTRO)


@st.cache_resource(max_entries=256, show_spinner=False)
def _reopened(path: str, run_id: str, finished_at: float | None) -> tuple[StoredResult | None, str | None]:
    """A finished run rebuilt once per run (finished runs never change), or why it cannot be."""
    stored = ResultStore(path)
    run = stored.get_run(run_id)
    if run is None:
        return None, "This run is no longer stored."
    return try_open(stored, run)


def _open(run: RunInfo) -> tuple[StoredResult | None, str | None]:
    return _reopened(str(store.path), run.run_id, run.finished_at)


def _card(run: RunInfo) -> RunCard:
    return run_card(run, *_open(run))


def _choose(run_id: str) -> None:
    st.session_state[OPEN_KEY] = (run_id, stories[0].run_id)
    st.session_state[SCROLL_KEY] = True


# ------------------------------------------------------------------------------------- one run, by kind


@contextmanager
def _more(key: str) -> Iterator[None]:
    """What backs the opened run's verdict up, folded: the list of runs stays close under the verdict."""
    with details(key), st.expander("Tables and further charts", key=f"results_more_{key}"):
        yield


def _exports(stored: StoredResult) -> None:
    """This run's downloads, named for what they hold."""
    with controls("run_exports"):
        csv = stored_csv(stored)
        left, right, _ = st.columns([1, 1, 2])
        left.download_button("Report of this run (HTML)", lambda: stored_runs_report(store, [stored.run]),
                             file_name=f"leaklens_{stored.kind}_report.html", mime="text/html",
                             key="results_run_html", help="Opens in any browser without the app or a network.")
        right.download_button(csv.label, csv.text, file_name=csv.file_name, mime="text/csv", key="results_run_csv",
                              help="Every row starts with the verdict, the model and the data.")


def _show_membership(stored: StoredResult) -> None:
    result = stored.result
    st.plotly_chart(auroc_bars(result), width="stretch", key="results_bars")
    _exports(stored)
    with _more("membership"):
        members = sum(result.labels)
        st.caption(f"Membership benchmark · {result.n} texts ({members} members, {result.n - members} non-members)")
        st.dataframe(
            [{"method": r["label"], "AUROC": r["auroc"], "CI low": r["ci_low"], "CI high": r["ci_high"],
              "TPR@1%FPR": r["tpr_at_1_fpr"], "TPR@5%FPR": r["tpr_at_5_fpr"]} for r in result.table_rows()],
            hide_index=True, width="stretch",
            column_config=metric_columns(("AUROC", "CI low", "CI high", "TPR@1%FPR", "TPR@5%FPR")),
        )
        for note in result.notes:
            st.caption(f"Note: {note}")
        available = [k for k in result.method_keys if result.metrics.get(k) is not None]
        with controls("roc"):
            shown = st.multiselect("ROC curves", available, default=top_methods(result, 5),
                                   format_func=lambda k: result.method_labels.get(k, k), key="results_roc_methods")
        st.plotly_chart(roc_overlay(result, shown), width="stretch", key="results_roc")


def _show_mcq(stored: StoredResult) -> None:
    report = stored.result
    st.plotly_chart(mcq_score_distribution(report, "completion"), width="stretch", key="results_mcq_completion")
    _exports(stored)
    with _more("mcq"):
        st.caption(f"Multiple-choice test · {len(report.original.results)} questions · "
                   f"{report.original.n_options} options each · shuffle seed {report.mitigation.seed}")
        st.plotly_chart(mcq_score_distribution(report, "next_token"), width="stretch", key="results_mcq_next")
        if report.permutation is not None:
            st.plotly_chart(rank_histogram(report), width="stretch", key="results_mcq_ranks")
        run = stored.run
        st.dataframe(report.to_dict(model=run.model, benchmark=run.dataset)["summary"], hide_index=True,
                     width="stretch", key="results_mcq_summary")
        with st.expander("Per question"):
            st.dataframe(report.question_rows(), hide_index=True, width="stretch", key="results_mcq_questions")


def _show_delta(stored: StoredResult) -> None:
    leakage = stored.result
    st.plotly_chart(delta_bars(leakage), width="stretch", key="results_delta_bars")
    _exports(stored)
    with _more("delta"):
        first = leakage.models[0].stats
        st.caption(f"Loss-delta test · {first.n_test} benchmark and {first.n_ref} reference problems · "
                   f"{'paired by task id' if leakage.paired else 'unpaired'} · significance test: {leakage.test_used}")
        if leakage.delta2_table():
            st.plotly_chart(delta2_bars(leakage), width="stretch", key="results_delta2_bars")
        st.dataframe(leakage.delta_table(), hide_index=True, width="stretch", key="results_delta_models")


def _show_inference(stored: StoredResult) -> None:
    inference = stored.result
    st.plotly_chart(held_out_scores(inference), width="stretch", key="results_inference_scores")
    _exports(stored)
    with _more("inference"):
        result = inference.result
        st.caption(f"Dataset inference · {result.n_suspect} suspect and {result.n_validation} validation texts · "
                   f"{len(result.split_p_values)} random splits · p = {result.p_value:.2g}")
        st.plotly_chart(detector_weights(inference), width="stretch", key="results_inference_weights")
        st.plotly_chart(split_p_values(inference), width="stretch", key="results_inference_splits")


SHOW = {MEMBERSHIP_KIND: _show_membership, MCQ_KIND: _show_mcq, COMPARISON_KIND: _show_delta,
        INFERENCE_KIND: _show_inference}


def _show_run(run: RunInfo, why_shown: str) -> None:
    """The opened run: what it is about, its verdict, the chart that carries it, then the rest in details."""
    stored, why = _open(run)
    card = _card(run)
    st.subheader(f"{card.data} · {card.model}")
    st.caption(f"{card.test} · finished {card.date} · {why_shown}")
    if stored is None:
        st.warning(why)
        return
    finding_banner(stored.finding)
    SHOW[run.kind](stored)


# ------------------------------------------------------------------------------------------------ page

with frame.result:
    opened_box = st.container()  # the opened run, drawn once the filters below have said which it is
    runs_box = st.container()

opened: RunInfo | None = None
chosen_models: list[str] = []
if stories:
    with runs_box:
        st.subheader("All runs")
        with controls("filters"):
            left, right = st.columns(2)
            chosen_models = left.multiselect("Model", sorted({r.model for r in runs if r.model}), key="results_models",
                                             placeholder="Every model")
            chosen_kinds = right.multiselect("Test", [k for k in STORY_KINDS if any(r.kind == k for r in stories)],
                                             format_func=kind_label, key="results_kinds", placeholder="Every test")
        listed = filter_runs(stories, models=chosen_models or None, kinds=chosen_kinds or None)
        choice = st.session_state.get(OPEN_KEY) or (None, None)
        opened = opened_run(listed, choice[0], newest_when_chosen=choice[1], newest=stories[0].run_id)
        unfinished = filter_runs(unfinished_runs(runs), models=chosen_models or None)
        st.caption(f"{len(listed)} of {len(stories)} finished runs, newest first"
                   + (f" · {len(unfinished)} not finished (in *Every stored run* at the bottom; an interrupted run "
                      "resumes when started again with the same data, model and settings)" if unfinished else ""))
        with st.container(height=620 if len(listed) > MANY_CARDS else "content", border=False):
            for run in listed:
                card = _card(run)
                is_open = opened is not None and run.run_id == opened.run_id
                text, button = st.columns([9, 1], vertical_alignment="center")
                text.markdown(card_html(card, opened=is_open), unsafe_allow_html=True)
                if not is_open and card.finding is not None:
                    with button, controls(f"open_{run.run_id}"):
                        st.button("Open", key=f"results_open_{run.run_id}", on_click=_choose, args=(run.run_id,),
                                  width="stretch")
        reportable = [r for r in listed if _open(r)[0] is not None]
        membership = [_open(r)[0].result for r in reportable if r.kind == MEMBERSHIP_KIND]
        with controls("exports"):
            left, right, _ = st.columns([1, 1, 1])
            many = f"{len(reportable)} listed runs" if len(reportable) != 1 else "listed run"
            left.download_button(f"Report of the {many} (HTML)",
                                 lambda: stored_runs_report(store, reportable), file_name="leaklens_report.html",
                                 mime="text/html", key="results_html", disabled=not reportable,
                                 help="Opens with every listed run's verdict, then each run's charts and tables "
                                      "(a dataset inference holds its scores: it is one run). Opens in any browser "
                                      "without the app or a network. Narrow the list with the filters above.")
            right.download_button("AUROC of the listed membership runs (CSV)", results_csv(membership),
                                  file_name="leaklens_membership_auroc.csv", mime="text/csv", key="results_csv",
                                  disabled=not membership,
                                  help="One row per detector and run, each starting with its run's verdict, model "
                                       "and data.")

    with opened_box:
        if opened is None:
            st.info("No finished run matches the filters under *All runs*: choose another model or test there.")
        else:
            if st.session_state.pop(SCROLL_KEY, False):
                scroll_to_result_area()
            if opened.run_id == stories[0].run_id:
                why_shown = "the most recent run"
            elif opened.run_id == choice[0]:
                why_shown = "opened from the list below"
            else:
                why_shown = "the most recent run the filters below let through"
            _show_run(opened, why_shown)

    if membership:
        with details("compare"):
            st.subheader("Compare methods")
            st.caption("Each detector's AUROC on each data set (the newest listed run per data set and model; "
                       "0.5 = chance, hover a cell for its 95% interval).")
            # sized by its cells (core.viz), not stretched: two data sets are two readable columns
            st.plotly_chart(auroc_heatmap(latest_per_dataset(membership)), width="content", key="results_heatmap")
else:
    with frame.result:
        if problem:
            st.error(problem)
        elif not runs:
            st.info("No stored runs yet. Run a test on any page (the Membership benchmark, say), or "
                    "`python -m core mia --dataset demo:famous-vs-fresh --model MODEL` from a terminal: "
                    "it appears here.")
        else:
            st.info("No finished run yet: the stored runs (in *Every stored run* below) were interrupted or are "
                    "still running. An interrupted run resumes where it stopped when started again with the same "
                    "data, model and settings.")

with frame.setup:
    st.caption(f"Results store: `{store.path}`. Run ids are for `python -m core report RUN_ID ...` (a unique "
               "prefix is enough).")
    if runs:
        st.dataframe(run_details(runs), hide_index=True, width="stretch", key="results_details")
        with st.popover("Delete a run"):
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


if runs:
    with details("tables"):
        table_runs = [r for r in runs if r.model in chosen_models] if chosen_models else runs
        rows = run_table(table_runs)
        with st.expander(f"Every stored run ({len(rows)})"):
            st.dataframe(rows, hide_index=True, width="stretch",
                         column_order=["test", "dataset", "model", "status", "done", "total", "started (UTC)",
                                       "finished (UTC)"])
        if any(r.kind == DELTA_KIND for r in table_runs):
            with st.expander("Stored losses per problem set"):
                st.caption("Each model's loss on each problem set, reused by every loss-delta comparison of it.")
                if any(r.kind == DELTA_KIND and r.run_id not in parts_of(runs) for r in table_runs):
                    st.caption("Losses stored by an older LeakLens are kept per problem set only, with no verdict: "
                               "open them as a comparison by running the test again (Loss delta page or "
                               "`python -m core delta ...`); the stored losses are reused, so no model scores a set "
                               "twice.")
                st.dataframe(delta_table(table_runs), hide_index=True, width="stretch", key="results_delta",
                             column_config={"benchmark mean loss": st.column_config.NumberColumn(format="%.3f"),
                                            "reference mean loss": st.column_config.NumberColumn(format="%.3f")})
