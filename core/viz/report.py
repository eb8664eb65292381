"""A self-contained HTML report of membership benchmark results, for people who do not run the app.

One file: the Plotly library is embedded once inline, so the figures work offline and the file can be
mailed or archived; all text from data (dataset names, model specs, method labels) is HTML-escaped.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from datetime import UTC, datetime
from html import escape

import plotly.graph_objects as go

from core.errors import LeakLensError
from core.membership.benchmark import BenchmarkResult
from core.viz.membership_plots import auroc_bars, auroc_heatmap, column_labels, roc_overlay, top_methods

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

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1200px;
       color: #222; padding: 0 1rem; }
h1 { margin-bottom: 0.2rem; } .meta { color: #666; margin-top: 0; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.9rem; }
th, td { border: 1px solid #ddd; padding: 0.25rem 0.6rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
tr.baseline td { background: #f2f2f2; font-style: italic; } tr.ensemble td { background: #eef7ee; }
.note { background: #fff8e1; border-left: 4px solid #f0b400; padding: 0.5rem 0.8rem; }
"""


def results_csv(results: Sequence[BenchmarkResult]) -> str:
    """Every run's table rows (methods, blind baseline, ensemble) as CSV text."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for result in results:
        for row in result.table_rows():
            writer.writerow({k: ("" if row[k] is None else row[k]) for k in CSV_COLUMNS})
    return buffer.getvalue()


def _figure_html(figure: go.Figure, first: bool) -> str:
    return figure.to_html(full_html=False, include_plotlyjs=True if first else False, config={"displaylogo": False})


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _table(result: BenchmarkResult) -> str:
    header = "".join(f"<th>{h}</th>" for h in ("method", "AUROC", "95% CI", "TPR@1%FPR", "TPR@5%FPR"))
    body = []
    for row in result.table_rows():
        css = {"blind_baseline": ' class="baseline"', "ensemble": ' class="ensemble"'}.get(row["method"], "")
        ci = "–" if row["ci_low"] is None else f"{row['ci_low']:.3f}–{row['ci_high']:.3f}"
        body.append(
            f"<tr{css}><td>{escape(str(row['label']))} <small>({escape(row['method'])})</small></td>"
            f"<td>{_fmt(row['auroc'])}</td><td>{ci}</td><td>{_fmt(row['tpr_at_1_fpr'])}</td>"
            f"<td>{_fmt(row['tpr_at_5_fpr'])}</td></tr>"
        )
    return f"<table><thead><tr>{header}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _baseline_warning(result: BenchmarkResult) -> str:
    if result.blind_baseline is None:
        return ""
    best = max((m.auroc for m in result.metrics.values() if m is not None), default=None)
    if best is not None and result.blind_baseline.auroc >= best:
        return (
            '<p class="note">The model-free blind baseline separates this data at least as well as every '
            "detector: the labels are predictable from the wording alone, so these AUROCs say little about "
            "what the model saw.</p>"
        )
    return ""


def build_html_report(
    results: Sequence[BenchmarkResult], *, title: str = "LeakLens membership benchmark report"
) -> str:
    """The whole report as one HTML document (heatmap, then per run: table, bar chart, ROC curves)."""
    if not results:
        raise LeakLensError("There are no finished benchmark runs to report; run a membership benchmark first.")
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="meta">Generated {generated} by LeakLens · {len(results)} run(s). AUROC: probability that a '
        "random member text outscores a random non-member (0.5 = chance), with a 95% bootstrap interval. The "
        "blind baseline is a bag-of-words classifier that never sees the model.</p>",
        "<h2>All runs</h2>",
        _figure_html(auroc_heatmap(results), first=True),
    ]
    for result, heading in zip(results, column_labels(results, with_model=True), strict=True):
        parts.append(f"<h2>{escape(heading)}</h2>")
        members = sum(result.labels)
        parts.append(f'<p class="meta">{result.n} texts ({members} members) · run {escape(result.run_id)}</p>')
        parts.append(_baseline_warning(result))
        parts.append(_table(result))
        for note in result.notes:
            parts.append(f'<p class="note">{escape(note)}</p>')
        parts.append(_figure_html(auroc_bars(result), first=False))
        parts.append(_figure_html(roc_overlay(result, top_methods(result)), first=False))
    parts.append("</body></html>")
    return "\n".join(parts)
