"""Plain sets of texts without labels: a suspect set and a validation set for dataset inference.

Read through ``core.data.tables`` like every other dataset (files, uploads, hub ids, ``demo:`` data);
the text column is auto-detected as for labelled data. ``where`` keeps the rows whose column holds one
value, so one file with a split column (or a labelled file) serves as both sets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.data.labelled import detect_text_column, parse_label
from core.data.tables import (
    SkippedRow,
    Table,
    display_name,
    is_local_source,
    load_rows,
    load_uploaded,
    skipped_summary,
)
from core.data.text import unicode_problem
from core.errors import DataError


@dataclass(frozen=True)
class TextSet:
    """Texts in source order, with stable ids and what was skipped while reading."""

    name: str
    """Display name: the file name or hub id, with the row filter when one was applied."""
    texts: list[str]
    ids: list[str]
    """The row's 1-based line (or row number) in its source: stable whichever filter is applied."""
    source: str
    text_col: str
    skipped: list[SkippedRow]
    unit: str = "lines"

    def __len__(self) -> int:
        return len(self.texts)

    def skipped_summary(self) -> str:
        return skipped_summary(self.skipped, unit=self.unit)


def parse_where(spec: str | None) -> tuple[str, str] | None:
    """``COLUMN=VALUE`` -> (column, value); None for no filter."""
    if spec is None or not spec.strip():
        return None
    column, sep, value = spec.partition("=")
    if not sep or not column.strip():
        raise DataError(f"A row filter looks like COLUMN=VALUE (e.g. label=1), got {spec!r}.")
    return column.strip(), value.strip()


def _matches(cell: Any, wanted: str) -> bool:
    """Equal as text, or as 0/1 labels (so label=1 keeps 1, 1.0, "1" and True alike)."""
    if str(cell).strip() == wanted:
        return True
    label, target = parse_label(cell), parse_label(wanted)
    return label is not None and label == target


def text_set_from_table(
    table: Table, *, text_col: str | None = None, where: tuple[str, str] | None = None, limit: int | None = None
) -> TextSet:
    """Validate rows already read (e.g. an upload); rows without usable text are skipped and reported."""
    if limit is not None and limit < 1:
        raise DataError(f"limit must be at least 1, got {limit}.")
    if not table.rows:
        raise DataError(f"{table.source} has no rows.")
    text_col = text_col or detect_text_column(table.columns)
    table.require_columns(text_col, *([where[0]] if where else []))
    texts, ids, skipped = [], [], list(table.skipped)
    for index, row in enumerate(table.rows):
        if where is not None and not _matches(row.get(where[0]), where[1]):
            continue
        text = row.get(text_col)
        if not isinstance(text, str) or not text.strip():
            skipped.append(table.skip(index, f"no text in column {text_col!r}"))
            continue
        if (problem := unicode_problem(text)) is not None:
            skipped.append(table.skip(index, f"text in column {text_col!r} {problem}"))
            continue
        texts.append(text)
        ids.append(str(table.line_of(index)))
        if limit is not None and len(texts) == limit:
            break
    name = display_name(table.source) + (f" ({where[0]}={where[1]})" if where else "")
    if not texts:
        raise DataError(
            f"{name} has no row with text in column {text_col!r}"
            + (f" where {where[0]} is {where[1]!r}." if where else ".")
        )
    return TextSet(name, texts, ids, table.source, text_col, skipped, table.unit)


def load_text_set(
    source: str,
    *,
    data: bytes | None = None,
    text_col: str | None = None,
    where: tuple[str, str] | None = None,
    split: str | None = None,
    config: str | None = None,
    limit: int | None = None,
) -> TextSet:
    """A demo, a local file, a hub dataset id or an upload's ``data`` (``source`` is then its file name) as a set
    of texts: one call whichever way the user gave it.

    ``split`` / ``config`` reach a hub dataset only: dataset inference's one ``--split`` serves both its
    sets, so a file beside a hub set ignores it; whether the flag applies to any set is for the command
    to check over all its sets (``core.data.tables.check_hub_options``).
    """
    if data is not None:
        table = load_uploaded(data, source)
    else:
        hub = not is_local_source(source)
        table = load_rows(source, split=split if hub else None, config=config if hub else None)
    return text_set_from_table(table, text_col=text_col, where=where, limit=limit)
