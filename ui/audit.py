"""The audit page's pieces: the evidence a user can add, the plan shown before Run, one progress for the whole
audit, and the result (the verdict, the evidence table, the chart of the strongest evidence, every other test one
click away). The logic is ``core.audit``; the Results page draws a stored audit with ``results_lead`` and
``results_more``."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import NamedTuple

import streamlit as st

from core.audit.plan import AuditPlan, EvidenceSources
from core.data.demo import dataset_label
from core.data.problems import BUILTIN
from core.engine.progress import ProgressCallback, format_duration
from core.errors import LeakLensError
from core.results.kinds import KIND_BY_NAME, OpenedAudit, audit_figure, open_audit
from core.results.report import stored_runs_report
from core.results.stored import StoredResult
from core.store.results import ResultStore
from core.viz.banner import LEVEL_STYLE
from core.viz.reports.audit import audit_csv, evidence_table_html
from ui.common import streamlit_progress
from ui.finding import finding_banner, finding_fold
from ui.layout import controls, details, present_mode
from ui.share import share_link

NO_SOURCE = "None"


class AuditRun(NamedTuple):
    """What the page keeps of a finished audit: the audit and its parts reopened from the store."""

    opened: OpenedAudit


def evidence_inputs(key: str) -> EvidenceSources:
    """The optional sources that add tests: a reference set (loss delta), a validation set (dataset inference), a
    training-data index (overlap) and a base model (loss delta's Δ²)."""
    with st.expander("Add evidence (optional): a reference set, held-out texts, a training-data index"):
        cols = st.columns(2)
        reference = cols[0].selectbox(
            "Reference set, for loss delta",
            [NO_SOURCE, BUILTIN, "Local path…"],
            key=f"{key}_reference",
            help="Fresh problems of the same kind as the benchmark: loss delta compares how easy the model finds "
            "each. The built-in set is Python code problems.",
        )
        if reference == "Local path…":
            reference = cols[0].text_input("Reference set path", key=f"{key}_reference_path").strip() or NO_SOURCE
        validation = cols[1].text_input(
            "Held-out texts, for dataset inference",
            key=f"{key}_validation",
            placeholder="/data/heldout.jsonl",
            help="Texts from the same source as the benchmark that the model cannot have seen.",
        )
        index = cols[0].text_input(
            "Training-data index, for overlap", key=f"{key}_index", help="An index built on the Overlap search page."
        )
        base = cols[1].text_input(
            "Base model, for loss delta's Δ²", key=f"{key}_base", help="The model the audited one was fine-tuned from."
        )
    return EvidenceSources(None if reference == NO_SOURCE else reference, validation, index, base)


def show_plan(plan: AuditPlan) -> None:
    """The tests that will run, with their expected times, and why the others will not."""
    total = sum(p.estimate_s or 0.0 for p in plan.to_run)
    st.markdown(f"**The plan: {len(plan.to_run)} tests, {format_duration(total)} on this machine**")
    st.dataframe(
        [
            {"test": p.title, "what it checks": p.checks, "expected time": format_duration(p.estimate_s)}
            for p in plan.to_run
        ],
        hide_index=True,
        width="stretch",
        key="audit_plan_table",
    )
    for part in plan.left_out:
        st.caption(f"Not run · {part.why_not}")
    for note in plan.notes:
        st.caption(note)


def audit_progress(slot, plan: AuditPlan) -> Callable[[str], ProgressCallback]:
    """One bar at a time in ``slot``: the step and its number, and the time the steps after it are expected to
    take (its own time left comes from its measured rate)."""
    after = {p.title: sum(q.estimate_s or 0.0 for q in plan.to_run[i + 1 :]) for i, p in enumerate(plan.to_run)}

    def step(label: str) -> ProgressCallback:
        title = label.split(" (")[0]
        later = after.get(title, 0.0)
        suffix = f" · then {format_duration(later)} for the tests after it" if later >= 1 else ""
        with slot.container():
            return streamlit_progress(f"Audit: {label}{suffix}")

    return step


def show_audit(shown: AuditRun) -> None:
    """The verdict, the evidence table, the chart of the strongest evidence; downloads; every test one click away."""
    opened = shown.opened
    audit = opened.audit
    st.subheader(f"{dataset_label(audit.benchmark)} · {audit.model}")
    finding_banner(audit.finding, fold=False)  # the evidence table first: it is what the verdict rests on
    st.html(evidence_table_html(audit, with_numbers=not present_mode()))
    finding_fold(audit.finding)
    st.plotly_chart(audit_figure(opened), width="stretch", key="audit_chart")
    with controls("audit_downloads"):
        _downloads(opened)
    if audit.run_id:
        share_link(audit.run_id, "audit")
    with details("audit_parts"):
        show_parts(opened, key="audit")


def _downloads(opened: OpenedAudit) -> None:
    audit = opened.audit
    cols = st.columns(3)
    store = ResultStore()
    run = store.get_run(audit.run_id) if audit.run_id else None
    if run is not None:
        cols[0].download_button(
            "Report (HTML)",
            lambda: stored_runs_report(store, [run]),
            "leaklens_audit.html",
            "text/html",
            key="audit_html",
            on_click="ignore",
            icon=":material/description:",
            help="One self-contained file: the summary a stakeholder reads in a minute, then every test's section.",
        )
    csv = audit_csv(audit, audit.finding, dataset_label(audit.benchmark))
    cols[1].download_button(
        csv.label, csv.text, csv.file_name, "text/csv", key="audit_csv", on_click="ignore", icon=":material/download:"
    )
    cols[2].download_button(
        "Result (JSON)",
        json.dumps(audit.to_dict(), indent=2, default=str),
        "leaklens_audit.json",
        "application/json",
        key="audit_json",
        on_click="ignore",
        icon=":material/download:",
    )


def show_parts(opened: OpenedAudit, *, key: str) -> None:
    """Each test's own verdict and chart, folded; what was not run and why."""
    audit = opened.audit
    results = {stored.run_id: (result, stored) for _, result, stored in opened.parts}
    for part in audit.parts:
        title = next((p.title for p in audit.plan.parts if p.key == part.key), part.key)
        with st.expander(f"{title}: {LEVEL_STYLE[part.finding.level][0].lower()}"):
            finding_banner(part.finding)
            held = results.get(part.run_id or "")
            if held is not None:
                result, stored = held
                figure = KIND_BY_NAME[stored.kind].figure
                if figure is not None:
                    st.plotly_chart(figure(result), width="stretch", key=f"{key}_{part.key}_chart")
            elif part.key == "extraction" and audit.items_extraction is not None:
                from core.viz.audit_plots import extraction_chart

                st.plotly_chart(extraction_chart(audit.items_extraction), width="stretch", key=f"{key}_items")
    for planned in audit.plan.left_out:
        st.caption(f"Not run · {planned.why_not}")
    for note in opened.notes:
        st.warning(note)


def reopen(run_id: str) -> AuditRun | None:
    """The stored audit and its parts, or an error on the page (None)."""
    store = ResultStore()
    run = store.get_run(run_id)
    if run is None:
        st.error(f"Audit {run_id} is no longer in the results store.")
        return None
    try:
        return AuditRun(open_audit(store, run))
    except LeakLensError as exc:
        st.error(str(exc))
        return None


def results_lead(stored: StoredResult) -> None:
    """On the Results page, right under the verdict: the evidence table."""
    st.html(evidence_table_html(stored.result.audit, with_numbers=not present_mode()))


def results_more(stored: StoredResult) -> None:
    """On the Results page, folded: every test's own verdict and chart."""
    with details("results_audit_parts"):
        show_parts(stored.result, key="results_audit")
