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


EVIDENCE_CSS = """<style>
table.ll-evidence { border-collapse: collapse; width: 100%; font-size: 0.92rem; color: #1b2630; }
table.ll-evidence th { text-align: left; background: #f2f6f8; padding: 0.35rem 0.6rem;
  border-bottom: 1px solid #dde3e8; border-left: none; border-right: none; border-top: none; }
table.ll-evidence td { text-align: left; padding: 0.35rem 0.6rem; border: none; border-bottom: 1px solid #eef1f4;
  vertical-align: top; }
table.ll-evidence abbr { text-decoration: underline dotted; cursor: help; }
table.ll-evidence .ll-checks { color: #4a5963; font-size: 0.85rem; }
</style>"""


def evidence_table_html(audit: Audit, *, with_numbers: bool = True, sentences: bool = False) -> str:
    """The evidence table of the page, the Results page and the report: test and what it checks · what it found
    (its sentence on hover, or under the level with ``sentences``, as a printed report needs) · key number (terms
    glossed, every number on hover) · whether it counts once every test is allowed for. ``with_numbers=False``
    (Present mode, where number lines fold away) leaves the key numbers out."""
    rows = []
    for row in evidence_rows(audit):
        label, colour, _ = LEVEL_STYLE[row.level_key]
        found = f'<b style="color: {colour}">{escape(label)}</b>'
        if sentences:
            found += f"<br>{escape(row.finding)}"
        number = f'<td title="{escape(row.numbers)}">{gloss_html(row.key_number)}</td>' if with_numbers else ""
        rows.append(
            "<tr>"
            f'<td><b>{escape(row.test)}</b><br><span class="ll-checks">{escape(row.checks)}</span></td>'
            f'<td title="{escape(row.finding)}">{found}</td>'
            f"{number}"
            f'<td title="{escape(row.chance)}">{escape(row.counted)}</td>'
            "</tr>"
        )
    widths = (28, 36, 24) if sentences else (42, 14, 32)  # test, found, key number; the last column 12%
    number_head = f'<th style="width: {widths[2]}%">Key number</th>' if with_numbers else ""
    head = (
        f'<tr><th style="width: {widths[0]}%">Test · what it checks</th><th style="width: {widths[1]}%">Found</th>'
        f'{number_head}<th style="width: 12%">Counts as evidence?</th></tr>'
    )
    return f'{EVIDENCE_CSS}<table class="ll-evidence"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'


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
        lead=evidence_table_html(audit, sentences=True),
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
