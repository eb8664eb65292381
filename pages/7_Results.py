"""Results: every stored run of every test as a verdict card, the most recent one opened at the top, and reports."""

from __future__ import annotations

import streamlit as st

from core.errors import LeakLensError
from core.membership.benchmark import latest_per_dataset
from core.results.kinds import MEMBERSHIP_KIND, STORY_KINDS, kind_label
from core.results.links import RUN_PARAM, LinkedRun, linked_run
from core.results.overview import (
    PER_MODEL_KINDS,
    delta_table,
    filter_runs,
    opened_run,
    parts_of,
    run_details,
    run_table,
    story_runs,
    unfinished_runs,
)
from core.results.report import stored_runs_report
from core.store.results import ResultStore, RunInfo
from core.viz.membership_plots import auroc_heatmap
from core.viz.reports.membership import results_csv
from core.viz.run_cards import card_html
from ui.layout import controls, details, result_first_page, scroll_to_result_area
from ui.results import card, reopened, show_run, show_same_question

INTRO = (
    "Every run stored on this machine, from this dashboard or the command line (`python -m core mia ...`, "
    "`mcq ...`, `delta ...`, `dataset-inference ...`, `order-test ...`, `audit ...`): the most recent one opens "
    "here, every run's verdict is listed below it. Export a self-contained report from here, or from a terminal with "
    "`python -m core report RUN_ID --out report.html` (run ids in Setup)."
)
PRESENT_INTRO = (
    "**What did the tests find?** The most recent test's verdict first, then every stored test's verdict, newest first."
)
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


def _choose(run_id: str) -> None:
    st.session_state[OPEN_KEY] = (run_id, stories[0].run_id)
    st.query_params.pop(RUN_PARAM, None)  # the address stops naming the run a shared link opened
    st.session_state[SCROLL_KEY] = True


# ------------------------------------------------------------------------------------------------ page

with frame.result:
    opened_box = st.container()  # the opened run, drawn once the filters below have said which it is
    runs_box = st.container()

opened: RunInfo | None = None
linked: LinkedRun | None = None
chosen_models: list[str] = []
if stories:
    with runs_box:
        st.subheader("All runs")
        with controls("filters"):
            left, right = st.columns(2)
            chosen_models = left.multiselect(
                "Model", sorted({r.model for r in runs if r.model}), key="results_models", placeholder="Every model"
            )
            chosen_kinds = right.multiselect(
                "Test",
                [k for k in STORY_KINDS if any(r.kind == k for r in stories)],
                format_func=kind_label,
                key="results_kinds",
                placeholder="Every test",
            )
        listed = filter_runs(stories, models=chosen_models or None, kinds=chosen_kinds or None)
        choice = st.session_state.get(OPEN_KEY) or (None, None)
        opened = opened_run(listed, choice[0], newest_when_chosen=choice[1], newest=stories[0].run_id)
        wanted = str(st.query_params.get(RUN_PARAM, "")).strip()
        linked = linked_run(stories, STORY_KINDS, wanted, how_to_make="") if wanted and not choice[0] else None
        if linked is not None and linked.run is not None:
            opened = linked.run
        unfinished = filter_runs(unfinished_runs(runs), models=chosen_models or None)
        st.caption(
            f"{len(listed)} of {len(stories)} finished runs, newest first"
            + (
                f" · {len(unfinished)} not finished (in *Every stored run* at the bottom; an interrupted run "
                "resumes when started again with the same data, model and settings)"
                if unfinished
                else ""
            )
        )
        with st.container(height=620 if len(listed) > MANY_CARDS else "content", border=False):
            for run in listed:
                shown = card(store, run)
                is_open = opened is not None and run.run_id == opened.run_id
                text, button = st.columns([9, 1], vertical_alignment="center")
                text.markdown(card_html(shown, opened=is_open), unsafe_allow_html=True)
                if not is_open and shown.finding is not None:
                    with button, controls(f"open_{run.run_id}"):
                        st.button(
                            "Open",
                            key=f"results_open_{run.run_id}",
                            on_click=_choose,
                            args=(run.run_id,),
                            width="stretch",
                        )
        reportable = [r for r in listed if reopened(store, r)[0] is not None]
        membership = [reopened(store, r)[0].result for r in reportable if r.kind == MEMBERSHIP_KIND]
        with controls("exports"):
            left, right, _ = st.columns([1, 1, 1])
            many = f"{len(reportable)} listed runs" if len(reportable) != 1 else "listed run"
            left.download_button(
                f"Report of the {many} (HTML)",
                lambda: stored_runs_report(store, reportable),
                file_name="leaklens_report.html",
                mime="text/html",
                key="results_html",
                disabled=not reportable,
                help="Opens with every listed run's verdict, then each run's charts and tables "
                "(a dataset inference holds its scores: it is one run). Opens in any browser "
                "without the app or a network. Narrow the list with the filters above.",
            )
            right.download_button(
                "AUROC of the listed membership runs (CSV)",
                results_csv(membership),
                file_name="leaklens_membership_auroc.csv",
                mime="text/csv",
                key="results_csv",
                disabled=not membership,
                help="One row per detector and run, each starting with its run's verdict, model and data.",
            )

    with opened_box:
        if linked is not None and linked.run is None:
            st.info(linked.message, icon=":material/slideshow:")
        if opened is None:
            st.info("No finished run matches the filters under *All runs*: choose another model or test there.")
        else:
            if st.session_state.pop(SCROLL_KEY, False):
                scroll_to_result_area()
            if linked is not None and linked.run is not None:
                why_shown = linked.why_shown
            elif opened.run_id == stories[0].run_id:
                why_shown = "the most recent run"
            elif opened.run_id == choice[0]:
                why_shown = "opened from the list below"
            else:
                why_shown = "the most recent run the filters below let through"
            show_run(store, opened, why_shown)
            show_same_question(store, opened, stories)

    if membership:
        with details("compare"):
            st.subheader("Compare methods")
            st.caption(
                "Each detector's AUROC on each data set (the newest listed run per data set and model; "
                "0.5 = chance, hover a cell for its 95% interval)."
            )
            # sized by its cells (core.viz), not stretched: two data sets are two readable columns
            st.plotly_chart(auroc_heatmap(latest_per_dataset(membership)), width="content", key="results_heatmap")
else:
    with frame.result:
        if problem:
            st.error(problem)
        elif not runs:
            st.info(
                "No stored runs yet. Run a test on any page (the Membership benchmark, say), or "
                "`python -m core mia --dataset demo:famous-vs-fresh --model MODEL` from a terminal: "
                "it appears here."
            )
        else:
            st.info(
                "No finished run yet: the stored runs (in *Every stored run* below) were interrupted or are "
                "still running. An interrupted run resumes where it stopped when started again with the same "
                "data, model and settings."
            )

with frame.setup:
    st.caption(
        f"Results store: `{store.path}`. Run ids are for `python -m core report RUN_ID ...` (a unique "
        "prefix is enough)."
    )
    if runs:
        st.dataframe(run_details(runs), hide_index=True, width="stretch", key="results_details")
        with st.popover("Delete a run"):
            by_id = {r.run_id: r for r in runs}
            doomed = st.selectbox(
                "Run",
                list(by_id),
                key="results_delete_choice",
                format_func=lambda rid: (
                    f"{kind_label(by_id[rid].kind)} · {by_id[rid].dataset} · "
                    f"{by_id[rid].model} · {by_id[rid].status} · "
                    f"{by_id[rid].timestamp('created_at')}"
                ),
            )
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
            st.dataframe(
                rows,
                hide_index=True,
                width="stretch",
                column_order=["test", "dataset", "model", "status", "done", "total", "started (UTC)", "finished (UTC)"],
            )
        if any(r.kind in PER_MODEL_KINDS for r in table_runs):
            with st.expander("Stored losses per problem set"):
                st.caption("Each model's loss on each problem set, reused by every loss-delta comparison of it.")
                if any(r.kind in PER_MODEL_KINDS and r.run_id not in parts_of(runs) for r in table_runs):
                    st.caption(
                        "Losses stored by an older LeakLens are kept per problem set only, with no verdict: "
                        "open them as a comparison by running the test again (Loss delta page or "
                        "`python -m core delta ...`); the stored losses are reused, so no model scores a set "
                        "twice."
                    )
                st.dataframe(
                    delta_table(table_runs),
                    hide_index=True,
                    width="stretch",
                    key="results_delta",
                    column_config={
                        "benchmark mean loss": st.column_config.NumberColumn(format="%.3f"),
                        "reference mean loss": st.column_config.NumberColumn(format="%.3f"),
                    },
                )
