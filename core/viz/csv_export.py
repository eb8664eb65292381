"""The one CSV writer for downloads: every row starts with what the file is about, so a spreadsheet opened
weeks later still says the verdict, the model and the data beside each number."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.files.csv_rows import rows_csv
from core.stats.finding import Finding

CONTEXT_COLUMNS = ("verdict", "verdict_headline", "model", "data")


def csv_text(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> str:
    """``rows`` as CSV text (columns: ``columns``, else the first row's keys); None becomes an empty cell."""
    return rows_csv(rows, columns if columns else (rows[0].keys() if rows else ()))


def result_csv(
    rows: Sequence[Mapping[str, Any]],
    *,
    finding: Finding | None,
    model: str,
    data: str,
    columns: Sequence[str] | None = None,
) -> str:
    """CSV whose every row starts with the verdict (level and headline), the model and the data, then ``rows``'
    own columns (interval columns included by the caller)."""
    context = {
        "verdict": finding.level if finding else "",
        "verdict_headline": finding.headline if finding else "",
        "model": model,
        "data": data,
    }
    own = list(columns or (rows[0].keys() if rows else ()))
    return csv_text([{**context, **row} for row in rows], [*CONTEXT_COLUMNS, *own])
