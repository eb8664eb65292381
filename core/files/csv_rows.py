"""The one way rows become CSV text, for every download and export.

A cell from data (a passage, a question, a file name) that a spreadsheet would run as a formula is
neutralised with a leading apostrophe: exports are opened in spreadsheets, and their text is untrusted.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""The characters OWASP lists as starting a formula in a spreadsheet cell."""


def safe_cell(value: object) -> object:
    """``value``, or text a spreadsheet would run as a formula made inert; None becomes an empty cell. Text that
    is a plain negative number ("-0.5") stays a number: a spreadsheet reads it as one and runs nothing."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _plain_negative_number(value):
        return "'" + value
    return value


def _plain_negative_number(text: str) -> bool:
    if not text.startswith("-"):
        return False
    try:
        float(text)
    except ValueError:
        return False
    return text == text.strip() and (text[1:2].isdigit() or text[1:2] == ".")


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
