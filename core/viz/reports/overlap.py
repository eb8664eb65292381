"""The overlap search's report and CSVs: its section (each item's overlap, the eval × training heatmap when
there are several pairs, the best matches with shared text marked), the report's title and intro, and the page's
two downloads (one row per test set and training set; one per test item and training set), each row led by the
verdict, the model and the data (``core.viz.csv_export.result_csv``)."""

from __future__ import annotations

from html import escape
from typing import Any

from core.overlap.finding import overlap_finding
from core.overlap.report import column_names
from core.overlap.run import SearchOutcome, match_location
from core.stats.finding import Finding
from core.viz.csv_export import result_csv
from core.viz.overlap_plots import contamination_heatmap, highlighted_html, item_overlap_chart
from core.viz.reports.shell import CsvFile, ReportSection, render_report

TITLE = "LeakLens overlap search report"
INTRO = (
    "Each test item is searched in the training data; its overlap is the share of its text found in the best "
    "training document (1.0 = a verbatim copy). Shared text is not proof of training."
)
BEST_MATCHES = 10
"""Matches listed in an overlap report, most overlap first."""


def _matches_table(outcome: SearchOutcome, limit: int) -> str:
    best = outcome.best(limit)
    if not best:
        return '<p class="meta">No test item shares text with the training data.</p>'
    head = (
        "<th>test item</th><th>eval set</th><th>overlap</th><th>best training document</th>"
        '<th class="text">test text (shared text marked)</th>'
    )
    body = "".join(
        f"<tr><td>{escape(m.test_id)}</td><td>{escape(m.eval_name)}</td><td>{m.value:.2f}</td>"
        f"<td>{escape(match_location(m))}</td>"
        f'<td class="text">{highlighted_html(m.test_text, m.test_spans)}</td></tr>'
        for m in best
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def overlap_section(outcome: SearchOutcome, *, limit: int = BEST_MATCHES) -> ReportSection:
    """An overlap search as its page shows it: each item's overlap (what the verdict counts), the eval × training
    heatmap when there are several pairs to compare, then the best matches, text marked."""
    report = outcome.report
    n_items = sum(report.counts.values())
    details = [
        f'<p class="label">Best matches ({min(limit, outcome.n_matching)} of {outcome.n_matching})</p>',
        _matches_table(outcome, limit),
    ]
    if outcome.skipped:
        details.append(f'<p class="note">{len(outcome.skipped)} test row(s) were skipped (no text or unreadable).</p>')
    return ReportSection(
        heading=f"Overlap search · {', '.join(report.evals)} in {', '.join(report.trains)}",
        finding=overlap_finding(report),
        figures=(
            item_overlap_chart(outcome.matches),
            *((contamination_heatmap(report),) if len(report.evals) * len(report.trains) > 1 else ()),
        ),
        meta=f"Overlap search · {n_items} test items · {outcome.n_matching} (item, training set) pairs with overlap",
        details="".join(details),
    )


def overlap_report(outcome: SearchOutcome, *, title: str = TITLE, limit: int = BEST_MATCHES) -> str:
    """The self-contained report of one overlap search."""
    return render_report([overlap_section(outcome, limit=limit)], title=title, intro=INTRO)


def pair_rows(outcome: SearchOutcome) -> list[dict[str, Any]]:
    """One row per (test set, training set): items, items with any shared text, their share, mean overlap."""
    report = outcome.report
    return [
        {
            "test_set": e,
            "training_set": t,
            "items": report.counts[e],
            "items_matched": report.matched[(e, t)],
            "share_matched": round(report.matched[(e, t)] / max(report.counts[e], 1), 4),
            "mean_overlap": round(report.scores[(e, t)], 4),
        }
        for e in report.evals
        for t in report.trains
        if (e, t) in report.scores
    ]


def item_rows(outcome: SearchOutcome) -> list[dict[str, Any]]:
    """One row per (test item, training set), most overlap first: the score, and where the best match sits."""
    columns = column_names(outcome.matches)
    ranked = sorted(outcome.matches, key=lambda m: (-m.score, m.eval_name, m.test_id))
    return [
        {
            "test_set": m.eval_name,
            "test_id": m.test_id,
            "training_set": columns[(m.index, m.train_dataset)],
            "overlap": round(m.score, 4),
            "raw_overlap": round(m.value, 4),
            "best_document": match_location(m),
            "documents_matched": len(m.matched_docs),
        }
        for m in ranked
    ]


def overlap_csvs(outcome: SearchOutcome, finding: Finding, *, model: str, data: str) -> tuple[CsvFile, CsvFile]:
    """The search's two downloads: overlap per test set and index, and per test item."""
    return (
        CsvFile(
            "Overlap per test set and index (CSV)",
            "overlap_per_set.csv",
            result_csv(pair_rows(outcome), finding=finding, model=model, data=data),
        ),
        CsvFile(
            "Overlap per test item (CSV)",
            "overlap_per_item.csv",
            result_csv(item_rows(outcome), finding=finding, model=model, data=data),
        ),
    )
