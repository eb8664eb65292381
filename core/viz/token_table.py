"""Token tables as CSV for download: one row per scored token, one block per passage."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence

from core.engine.scoring import TokenRecords

_FORMULA_STARTS = ("=", "+", "@", "\t", "\r")


def _safe_cell(value: object) -> object:
    """Neutralise text that a spreadsheet would run as a formula (passages are untrusted)."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def token_table_csv(passages: Sequence[tuple[str, TokenRecords]]) -> str:
    """CSV text with a ``passage`` column followed by every ``TokenRecords.table()`` column."""
    if not passages:
        raise ValueError("token_table_csv needs at least one passage.")
    rows = [{"passage": name, **row} for name, records in passages for row in records.table()]
    columns: list[str] = []
    for row in rows:
        columns += [c for c in row if c not in columns]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _safe_cell(v) for k, v in row.items()})
    return buffer.getvalue()
