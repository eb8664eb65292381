"""The membership benchmark's report and CSVs: one section per run (AUROC bars with the blind baseline, ROC
curves, the full table), the AUROC-per-detector download of one run and of several, the report's title and
intro, and the report of several runs with their AUROC heatmap first."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from core.errors import LeakLensError
from core.membership.benchmark import BenchmarkResult
from core.membership.finding import membership_finding, wording_rivals_detectors
from core.stats.finding import Finding
from core.viz.csv_export import CONTEXT_COLUMNS, csv_text, result_csv
from core.viz.membership_plots import auroc_bars, auroc_heatmap, column_labels, roc_overlay, top_methods
from core.viz.reports.shell import CsvFile, ReportSection, fmt, render_report, stored_as, table

TITLE = "LeakLens membership benchmark report"
INTRO = (
    "AUROC: probability that a random member text outscores a random non-member (0.5 = chance), with a 95% "
    "bootstrap interval. The blind baseline is a bag-of-words classifier that never sees the model."
)
CSV_COLUMNS = [
    "dataset",
    "model",
    "method",
    "label",
    "auroc",
    "ci_low",
    "ci_high",
    "tpr_at_1_fpr",
    "tpr_at_5_fpr",
    "n",
    "run_id",
]


def results_csv(results: Sequence[BenchmarkResult]) -> str:
    """Every membership run's table rows (methods, blind baseline, ensemble) as CSV text, each row led by its
    run's verdict, model and data (``core.viz.csv_export.CONTEXT_COLUMNS``), then the AUROC with its interval."""
    rows = []
    for result, data in zip(results, column_labels(results, with_model=False), strict=True):
        finding = membership_finding(result)
        context = {"verdict": finding.level, "verdict_headline": finding.headline, "model": result.model, "data": data}
        rows += [{**row, **context} for row in result.table_rows()]
    return csv_text(rows, [*CONTEXT_COLUMNS, *(c for c in CSV_COLUMNS if c != "model")])


def membership_csv(result: BenchmarkResult, finding: Finding, data: str) -> CsvFile:
    """AUROC per detector of one membership run."""
    rows = [{k: row[k] for k in CSV_COLUMNS if k not in ("dataset", "model")} for row in result.table_rows()]
    return CsvFile(
        "AUROC per detector (CSV)",
        "leaklens_membership_auroc.csv",
        result_csv(rows, finding=finding, model=result.model, data=data),
    )


def _membership_table(result: BenchmarkResult) -> str:
    rows = []
    for row in result.table_rows():
        css = {"blind_baseline": "baseline", "ensemble": "ensemble"}.get(row["method"], "")
        ci = "–" if row["ci_low"] is None else f"{row['ci_low']:.3f}–{row['ci_high']:.3f}"
        cells = (
            f"{row['label']} ({row['method']})",
            fmt(row["auroc"]),
            ci,
            fmt(row["tpr_at_1_fpr"]),
            fmt(row["tpr_at_5_fpr"]),
        )
        rows.append((cells, css))
    return table(("method", "AUROC", "95% CI", "TPR@1%FPR", "TPR@5%FPR"), rows)


def _baseline_warning(result: BenchmarkResult) -> str:
    if not wording_rivals_detectors(result):
        return ""
    return (
        '<p class="note">The model-free blind baseline, above chance, separates this data at least as well as '
        "every detector: the labels are predictable from the wording alone, so these AUROCs say little about "
        "what the model saw.</p>"
    )


def membership_sections(results: Sequence[BenchmarkResult]) -> list[ReportSection]:
    """One section per benchmark run: AUROC bars (the evidence), ROC curves, then the full table."""
    sections = []
    for result, heading in zip(results, column_labels(results, with_model=True), strict=True):
        members = sum(result.labels)
        details = [_baseline_warning(result), _membership_table(result)]
        details += [f'<p class="note">{escape(note)}</p>' for note in result.notes]
        details.append(stored_as(result.run_id))
        sections.append(
            ReportSection(
                heading=heading,
                finding=membership_finding(result),
                figures=(auroc_bars(result), roc_overlay(result, top_methods(result))),
                meta=f"Membership benchmark · {result.n} texts ({members} members)",
                details="".join(details),
            )
        )
    return sections


def build_html_report(
    results: Sequence[BenchmarkResult], *, title: str = TITLE, sections: Sequence[ReportSection] = ()
) -> str:
    """The report of membership runs (an AUROC heatmap across them first) and any other runs' ``sections``."""
    if not results and not sections:
        raise LeakLensError("There are no finished benchmark runs to report; run a membership benchmark first.")
    return render_report(
        [*membership_sections(results), *sections],
        title=title,
        intro=INTRO if results else "",
        overview=auroc_heatmap(results) if len(results) > 1 else None,
    )
