"""The one way rows become CSV text, for every download and export.

A cell from data (a passage, a question, a file name) that a spreadsheet would run as a formula is
neutralised with a leading apostrophe: exports are opened in spreadsheets, and their text is untrusted.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

FORMULA_STARTS = ("=", "+", "@", "\t", "\r")


def safe_cell(value: object) -> object:
    """``value``, or text a spreadsheet would run as a formula made inert; None becomes an empty cell."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def rows_csv(rows: Sequence[Mapping[str, Any]], columns: Iterable[str] | None = None) -> str:
    """``rows`` as CSV text: the columns given (else every key in order of first appearance), one header line."""
    if columns is None:
        names: list[str] = []
        for row in rows:
            names += [key for key in row if key not in names]
    else:
        names = list(columns)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=names, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: safe_cell(row.get(key)) for key in names})
    return buffer.getvalue()
