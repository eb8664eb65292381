"""The single-passage test's report and CSVs: one section per inspected passage (its place among fresh passages,
its continuation, token confidence, coloured tokens), the report's title and intro, and the inspection's
downloads: one row per scored token, and one per passage and detector, each row led by its passage's verdict, the
model and the passage's name (the same shape as every other LeakLens CSV)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from html import escape

from core.errors import LeakLensError
from core.methods import default_methods
from core.passage.extraction_finding import extraction_sentence
from core.passage.inspection import InspectedPassage
from core.passage.placement import PassagePlacement
from core.passage.reading import findings_of, passage_label, placement_of
from core.passage.result import InspectResult
from core.passage.summary import reportable_scores
from core.passage.verdict import PassageVerdict
from core.stats.finding import Finding
from core.viz.csv_export import result_csv
from core.viz.extraction_panel import extraction_panel_html
from core.viz.passage_plots import placement_strip
from core.viz.reports.shell import CsvFile, ReportSection, fmt, render_report, table
from core.viz.token_curve import confidence_curve, confidence_figure
from core.viz.token_heatmap import token_heatmap_block
from core.viz.token_table import token_table_csv

TITLE = "LeakLens passage inspection report"
INTRO = (
    "Each passage is scored by the model and placed among passages freshly written for LeakLens (which no model "
    "can have trained on) of similar length: far more predictable than all of them is a sign of memorisation. "
    "The model is also given each passage's first half: writing the rest word for word, further than it "
    "continues any fresh passage, is the plainest sign of all."
)
SCORE_COLUMNS = (
    "passage",
    "n_tokens",
    "perplexity",
    "method",
    "method_label",
    "score",
    "percentile_vs_fresh",
    "fresh_scoring_at_least_as_high",
    "fresh_compared",
    "chance_if_fresh",
)


def _placement_table(placement: PassagePlacement) -> str:
    rows = [
        (
            (
                m.label,
                f"{m.score:.3f}",
                f"{m.percentile:.0f}%",
                f"{m.n_at_least} of {m.n_compared}",
                f"{m.chance:.3f}",
                m.level,
            ),
            "",
        )
        for m in placement.methods
    ]
    return table(
        (
            "method",
            "score",
            "more predictable than",
            "fresh passages scoring at least as high",
            "chance if fresh",
            "level",
        ),
        rows,
    )


def _scores_table(passage: InspectedPassage) -> str:
    scores = reportable_scores(passage.analysis.scores, passage.analysis.records.n_tokens)
    rows = [((key, fmt(value, ".4f")), "") for key, value in sorted(scores.items())]
    return table(("method", "score (higher = more likely seen)"), rows)


def passage_section(passage: InspectedPassage, verdict: PassageVerdict, *, model: str) -> ReportSection:
    """One inspected passage: its place among fresh passages and its continuation (the evidence), token
    confidence, coloured tokens."""
    records = passage.analysis.records
    placement = verdict.placement
    figures = [placement_strip(m, passage.name) for m in placement.methods]
    figures.append(confidence_figure([confidence_curve(records, passage.name)]))
    low, high = placement.token_range
    details = [
        '<p class="label">How predictable each token was</p>',
        f'<div class="figure">{token_heatmap_block(records)}</div>',
        '<p class="label">Against freshly written passages of similar length</p>',
        _placement_table(placement),
        '<p class="label">Every method\'s score</p>',
        _scores_table(passage),
    ]
    if verdict.view is not None and verdict.reading is not None:
        panel = extraction_panel_html(verdict.view, extraction_sentence(verdict.reading, verdict.view))
        details[:0] = ['<p class="label">Given the first half, what the model wrote</p>', f"<div>{panel}</div>"]
    elif verdict.extraction_note:
        details.insert(0, f'<p class="note">{escape(verdict.extraction_note)}</p>')
    if passage.n_dropped:
        details.insert(
            0,
            f'<p class="note">Only the first {records.n_tokens} tokens were scored; '
            f"{passage.n_dropped_text} more were left out.</p>",
        )
    return ReportSection(
        heading=f"Passage inspection · {passage.name} · {model}",
        finding=verdict.finding,
        figures=tuple(figures),
        meta=(
            f"Passage inspection · {records.n_tokens} tokens · perplexity {passage.analysis.perplexity:.1f} · "
            f"compared with {placement.n_similar} of {placement.n_calibration} freshly written passages "
            f"({low}–{high} tokens)"
        ),
        details="".join(details),
    )


def passage_sections(
    passages: Sequence[InspectedPassage], verdicts: Sequence[PassageVerdict], *, model: str
) -> list[ReportSection]:
    """One section per inspected passage (the Inspect page compares one or two)."""
    if len(passages) != len(verdicts):
        raise LeakLensError(
            f"{len(passages)} passage(s) but {len(verdicts)} verdict(s): give every passage its placement among "
            "the fresh passages and its continuation (core.passage.verdict.judge_passages) first."
        )
    return [passage_section(p, v, model=model) for p, v in zip(passages, verdicts, strict=True)]


def passage_report(
    passages: Sequence[InspectedPassage],
    verdicts: Sequence[PassageVerdict],
    *,
    model: str,
    title: str = TITLE,
) -> str:
    """The self-contained report of one or two inspected passages."""
    return render_report(passage_sections(passages, verdicts, model=model), title=title, intro=INTRO)


def token_csv(result: InspectResult, findings: list[Finding]) -> str:
    """One row per scored token, each starting with its passage's verdict, the model and the passage.

    The token table's own writer neutralises cells a spreadsheet would run as formulas (passages are
    untrusted); its rows are read back and given the verdict columns.
    """
    parts: list[str] = []
    tables = [
        list(csv.DictReader(io.StringIO(token_table_csv([(p.name, p.analysis.records)])))) for p in result.passages
    ]
    columns: list[str] = []
    for rows in tables:
        for row in rows[:1]:
            columns += [c for c in row if c not in columns]
    for index, (finding, rows) in enumerate(zip(findings, tables, strict=True)):
        data = passage_label(result, index)
        text = result_csv(rows, finding=finding, model=result.model, data=data, columns=columns)
        parts.append(text if not parts else text.split("\n", 1)[1])
    return "".join(parts)


def scores_csv(result: InspectResult, findings: list[Finding]) -> str:
    """One row per passage and detector: the score and, for the placed methods, its place among fresh passages."""
    labels = {m.key: m.label for m in default_methods()}
    parts: list[str] = []
    for index, (passage, finding) in enumerate(zip(result.passages, findings, strict=True)):
        placement = placement_of(result, index)
        rows = []
        for key, value in reportable_scores(passage.analysis.scores, passage.analysis.records.n_tokens).items():
            placed = placement.method(key) if placement is not None else None
            rows.append(
                {
                    "passage": passage.name,
                    "n_tokens": passage.analysis.records.n_tokens,
                    "perplexity": passage.analysis.perplexity,
                    "method": key,
                    "method_label": labels.get(key, key),
                    "score": value,
                    "percentile_vs_fresh": placed.percentile if placed else None,
                    "fresh_scoring_at_least_as_high": placed.n_at_least if placed else None,
                    "fresh_compared": placed.n_compared if placed else None,
                    "chance_if_fresh": placed.chance if placed else None,
                }
            )
        data = passage_label(result, index)
        text = result_csv(rows, finding=finding, model=result.model, data=data, columns=list(SCORE_COLUMNS))
        parts.append(text if not parts else text.split("\n", 1)[1])
    return "".join(parts)


def stored_scores_csv(inspection: InspectResult) -> CsvFile:
    """A stored inspection's download: every passage's detector scores, each row led by its verdict."""
    return CsvFile(
        "Detector scores (CSV)", "leaklens_passage_scores.csv", scores_csv(inspection, findings_of(inspection))
    )
