"""A benchmark's examples as the published file lays them out: one text per row, in the file's order.

The user names the fields and how they join (a template such as ``"{question} {A} {B} {C} {D} {answer}"``),
shown in every output so a reader knows exactly which text was scored. Without one, every column but a row
id is joined in the file's column order. Each example ends with ``SEPARATOR``, so the examples of a shard read
like consecutive entries of the file. Rows missing a field are skipped, each named by its 1-based line.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from typing import Any

from core.data.fingerprint import fingerprint_rows
from core.data.tables import ROW_ID_COLUMNS, SkippedRow, Table, display_name, skipped_summary
from core.errors import DataError

SEPARATOR = "\n\n"


def template_fields(template: str) -> list[str]:
    """The field names a template reads, in order; a ``DataError`` for a malformed template.

    The language is plain ``{column}`` names (spaces allowed, as in ``{option A}``) and ``{{``/``}}`` for a
    literal brace; conversions, format specs, attributes and indexes (``{question!r}``, ``{question:d}``,
    ``{row.x}``) are refused, so a template can never run Python's formatting machinery on the data."""
    fields = [name for _, name, _, _ in _parsed(template) if name is not None]
    if not fields:
        raise DataError(
            f"The text template {template!r} names no field; use column names in braces, e.g. {{question}}."
        )
    return list(dict.fromkeys(fields))


def _parsed(template: str) -> list[tuple[str, str | None, str | None, str | None]]:
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise DataError(
            f"The text template {template!r} is malformed ({exc}); double a literal brace: {{{{ }}}}."
        ) from exc
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if conversion or spec or ":" in name or "!" in name:
            raise DataError(
                f"The text template {template!r} may hold only plain column names in braces, such as "
                f"{{question}}: {{{name}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}} is "
                "not one (no conversions or format specs)."
            )
        if not name.strip() or name.strip().isdigit():
            raise DataError(
                f"The text template {template!r} needs named fields such as {{question}}, not {{}} or {{0}}."
            )
        if not _plain_name(name):
            raise DataError(
                f"The text template {template!r} may hold only plain column names in braces, such as "
                f"{{question}}: {{{name}}} is not one."
            )
    return parsed


def _filled(parsed: list[tuple[str, str | None, str | None, str | None]], values: dict[str, str]) -> str:
    """A parsed template with each ``{field}`` replaced by its value, literally (no formatting applied)."""
    return "".join(literal + (values[name] if name is not None else "") for literal, name, _, _ in parsed)


def default_template(columns: list[str]) -> str:
    """Every column but a row id, joined by spaces, in the file's order (names with spaces included)."""
    shown = [c for c in columns if c not in ROW_ID_COLUMNS and _plain_name(c)]
    if not shown:
        raise DataError("The dataset has no column to build the examples from; give --text-template.")
    return " ".join(f"{{{c}}}" for c in shown)


def _plain_name(column: str) -> bool:
    """A column a template can name: not blank, no braces, colons, bangs, dots or brackets, not a bare number."""
    return (
        bool(column.strip())
        and column == column.strip()
        and not any(m in column for m in "{}:!.[]")
        and not (column.isdigit())
    )


def _value(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value)
    return text if text.strip() else None


@dataclass(frozen=True)
class BenchmarkExamples:
    name: str
    """The benchmark as people call it (a file's name, a hub id, a demo)."""
    template: str
    texts: tuple[str, ...]
    """Each usable row rendered, separator included, in the file's order."""
    rows: tuple[dict[str, Any], ...]
    """The rows behind ``texts`` (for the order-pattern checks)."""
    skipped: tuple[SkippedRow, ...]
    unit: str

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def fields(self) -> list[str]:
        return template_fields(self.template)

    @property
    def fingerprint(self) -> str:
        """Over the rendered examples in order: the same file and template match wherever they were read."""
        return fingerprint_rows((text,) for text in self.texts)

    def skipped_summary(self) -> str:
        return skipped_summary(list(self.skipped), unit=self.unit)


def render_examples(table: Table, template: str | None = None) -> BenchmarkExamples:
    """The table's rows rendered through ``template`` (default: ``default_template``)."""
    chosen = template if template and template.strip() else default_template(table.columns)
    fields = template_fields(chosen)
    parsed = _parsed(chosen)  # once, not per row
    table.require_columns(*fields)
    texts: list[str] = []
    rows: list[dict[str, Any]] = []
    skipped: list[SkippedRow] = list(table.skipped)
    for index, row in enumerate(table.rows):
        values = {name: _value(row.get(name)) for name in fields}
        missing = [name for name, value in values.items() if value is None]
        if missing:
            skipped.append(table.skip(index, f"no value for {', '.join(missing)}"))
            continue
        texts.append(_filled(parsed, {k: v for k, v in values.items() if v is not None}) + SEPARATOR)
        rows.append(row)
    return BenchmarkExamples(
        name=display_name(table.source),
        template=chosen,
        texts=tuple(texts),
        rows=tuple(rows),
        skipped=tuple(skipped),
        unit=table.unit,
    )
