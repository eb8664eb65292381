"""The audit's report and CSV: a one-screen executive summary (the verdict, the evidence table, what would change
the conclusion, the model and the data), then the sampled items' extraction; each other test's own section follows
as its own report has it (``core.results.kinds`` adds them from the parts' stored runs)."""

from __future__ import annotations

from html import escape

from core.audit.extraction import items_finding
from core.audit.run import Audit
from core.audit.summary import evidence_rows, what_would_change
from core.data.demo import dataset_label
from core.stats.finding import Finding
from core.viz.audit_plots import evidence_chart, extraction_chart
from core.viz.banner import LEVEL_STYLE
from core.viz.csv_export import result_csv
from core.viz.glossary import gloss_html
from core.viz.reports.shell import CsvFile, ReportSection, stored_as

TITLE = "LeakLens audit"
INTRO = (
    "Has this model seen this benchmark? Every test that fits the benchmark ran on the model; each asks the question "
    "a different way, and the verdict counts a test's evidence only when it holds up after allowing for running "
    "several tests (Holm's correction). The summary comes first; each test's own section follows."
)


def evidence_table(audit: Audit) -> str:
    """Test · what it checks · what it found (its level, then its sentence) · its key number, terms glossed on
    hover · whether it counts as evidence once every test is allowed for."""
    head = "".join(
        f'<th class="text">{escape(h)}</th>'
        for h in ("Test", "What it checks", "What it found", "Key number", "Counts as evidence?")
    )
    body = []
    for row in evidence_rows(audit):
        label, colour, _ = LEVEL_STYLE[row.level_key]
        body.append(
            "<tr>"
            f'<td class="text"><b>{escape(row.test)}</b></td>'
            f'<td class="text">{escape(row.checks)}</td>'
            f'<td class="text"><b style="color: {colour}">{escape(label)}</b><br>{escape(row.finding)}</td>'
            f'<td class="text">{gloss_html(row.key_number)}</td>'
            f'<td class="text">{escape(row.counted)}<br><span class="meta">{gloss_html(row.chance)}</span></td>'
            "</tr>"
        )
    return f'<table class="evidence"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _list(lines: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{escape(line)}</li>" for line in lines) + "</ul>"


def audit_summary_section(audit: Audit) -> ReportSection:
    """The executive summary: one screen a stakeholder reads first."""
    provenance = [
        f"Model: {audit.model}",
        f"Benchmark: {dataset_label(audit.benchmark)} ({audit.plan.n_rows:,} rows)",
        f"Tests run: {len(audit.parts)} · combined at family-wise level {audit.verdict.alpha:g} (Holm)",
    ]
    details = [
        '<p class="label">What would change the conclusion</p>',
        _list(what_would_change(audit)),
        '<p class="label">Model and data</p>',
        _list(provenance),
    ]
    if audit.plan.left_out:
        details += ['<p class="label">Not run, and why</p>', _list([p.why_not for p in audit.plan.left_out])]
    if audit.run_id:
        details.append(stored_as(audit.run_id))
    return ReportSection(
        heading=f"Audit · {dataset_label(audit.benchmark)} · {audit.model}",
        finding=audit.finding,
        figures=(evidence_chart(audit),),
        meta=f"{len(audit.parts)} tests · {len(audit.verdict.survivors)} hold up once every test is counted",
        lead=evidence_table(audit),
        details="".join(details),
    )


def extraction_section(audit: Audit) -> ReportSection | None:
    """The sampled items' continuations (a part with no stored run of its own); None when it did not run."""
    items = audit.items_extraction
    if items is None:
        return None
    return ReportSection(
        heading=f"Extraction · {dataset_label(audit.benchmark)} · {audit.model}",
        finding=items_finding(items),
        figures=(extraction_chart(items),) if items.readings else (),
        meta=(
            f"{items.n_sampled} items sampled · {len(items.readings)} long enough to continue · compared with "
            f"{items.fresh_compared} freshly written passages"
        ),
    )


def audit_csv(audit: Audit, finding: Finding, data: str) -> CsvFile:
    """The evidence table, one row per test."""
    rows = [
        {
            "test": row.test,
            "checks": row.checks,
            "level": row.level,
            "finding": row.finding,
            "key_number": row.key_number,
            "p_value": audit.part(row.key).p_value,
            "p_value_after_holm": audit.verdict.adjusted.get(row.key),
            "counted": row.counted,
        }
        for row in evidence_rows(audit)
    ]
    return CsvFile(
        "Evidence table (CSV)",
        "leaklens_audit.csv",
        result_csv(rows, finding=finding, model=audit.model, data=data),
    )
