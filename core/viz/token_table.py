"""Token tables as CSV for download: one row per scored token, one block per passage."""

from __future__ import annotations

from collections.abc import Sequence

from core.engine.scoring import TokenRecords
from core.files.csv_rows import rows_csv


def token_table_csv(passages: Sequence[tuple[str, TokenRecords]]) -> str:
    """CSV text with a ``passage`` column followed by every ``TokenRecords.table()`` column."""
    if not passages:
        raise ValueError("token_table_csv needs at least one passage.")
    rows = [{"passage": name, **row} for name, records in passages for row in records.table()]
    return rows_csv(rows)
