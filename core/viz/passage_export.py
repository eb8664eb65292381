"""An inspection's CSV exports: one row per scored token, and one per passage and detector, each row led by its
passage's verdict, the model and the passage's name (the same shape as every other LeakLens CSV)."""

from __future__ import annotations

import csv
import io

from core.methods import default_methods
from core.passage.reading import passage_label, placement_of
from core.passage.result import InspectResult
from core.passage.summary import reportable_scores
from core.stats.finding import Finding
from core.viz.csv_export import result_csv
from core.viz.token_table import token_table_csv

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
