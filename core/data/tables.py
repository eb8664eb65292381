"""Read rows from wherever a user keeps them: a local CSV / JSONL / JSON / Parquet file, an uploaded
file's bytes, or a Hugging Face dataset id (through ``datasets``).

Malformed JSONL lines are skipped and reported with their line numbers instead of failing the whole
load, so one bad line in a million never loses the rest. Higher-level loaders (labelled membership
data, MCQ benchmarks, training sets) build on ``load_rows``.
"""

from __future__ import annotations

import io
import json
import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.data.demo import demo_path, is_demo_source
from core.errors import DataError

LOCAL_SUFFIXES = (".csv", ".tsv", ".jsonl", ".ndjson", ".json", ".parquet")


@dataclass(frozen=True)
class SkippedRow:
    """A row or line that could not be used, and why.

    ``line`` is the 1-based line of the file where the row starts (JSONL, CSV); for sources without lines
    (Parquet, a JSON array, a hub dataset) it is the 1-based row number. ``row_id`` is the row's own id
    when it has one, so a report points at the row whichever way the user looks for it.
    """

    line: int
    reason: str
    row_id: str | None = None

    def where(self) -> str:
        """e.g. ``4`` or ``4 (id q17)``."""
        return f"{self.line} (id {self.row_id})" if self.row_id is not None else str(self.line)


ROW_ID_COLUMNS = ("id", "ID", "Id", "uid", "sample_id", "task_id")
"""Columns whose value names a row in skipped-row reports."""


def is_blank(value: Any) -> bool:
    """None, an empty or blank string, or a missing number (NaN, as a table library reads an empty cell)."""
    if isinstance(value, float):
        return math.isnan(value)
    return value is None or not str(value).strip()


def row_id_of(row: dict[str, Any]) -> str | None:
    """The row's own id from the first ``ROW_ID_COLUMNS`` column that holds one; None when none does."""
    return next((str(row[c]) for c in ROW_ID_COLUMNS if not is_blank(row.get(c))), None)


def skipped_summary(skipped: list[SkippedRow] | tuple[SkippedRow, ...], *, unit: str = "lines", limit: int = 10) -> str:
    """e.g. '3 rows skipped (lines 4, 9, 12: not valid JSON)'; empty when nothing was skipped."""
    if not skipped:
        return ""
    shown = ", ".join(s.where() for s in skipped[:limit])
    more = f" and {len(skipped) - limit} more" if len(skipped) > limit else ""
    reasons = sorted({s.reason for s in skipped})
    return f"{len(skipped)} rows skipped ({unit} {shown}{more}: {'; '.join(reasons[:3])})"


@dataclass(frozen=True)
class Table:
    """Rows as dicts, the columns they have, and what was skipped while reading."""

    rows: list[dict[str, Any]]
    columns: list[str]
    source: str
    """Human-readable description of where the rows came from."""
    skipped: list[SkippedRow] = field(default_factory=list)
    row_lines: list[int] = field(default_factory=list)
    """1-based file line where each row starts (JSONL, CSV); empty for sources without lines."""

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def unit(self) -> str:
        """What ``SkippedRow.line`` counts in this table: file ``lines`` or ``rows``."""
        return "lines" if self.row_lines or not self.rows else "rows"

    def line_of(self, index: int) -> int:
        """The number a user finds row ``index`` under: its file line, else its 1-based row number."""
        return self.row_lines[index] if self.row_lines else index + 1

    def skip(self, index: int, reason: str) -> SkippedRow:
        """A report of row ``index`` being left out, numbered like every other report (see ``SkippedRow``)."""
        return SkippedRow(self.line_of(index), reason, row_id_of(self.rows[index]))

    def require_columns(self, *names: str) -> None:
        """Raise a ``DataError`` naming the missing columns and listing the ones that exist."""
        missing = [n for n in names if n not in self.columns]
        if missing:
            raise DataError(
                f"{self.source} has no column(s) {', '.join(repr(m) for m in missing)}. "
                f"Columns found: {', '.join(repr(c) for c in self.columns) or 'none'}."
            )

    def skipped_summary(self, limit: int = 10) -> str:
        """e.g. '3 rows skipped (lines 4, 9, 12: not valid JSON)'."""
        return skipped_summary(self.skipped, unit=self.unit, limit=limit)


def display_name(source: str) -> str:
    """A short name for a data source, for every view: a file's name (never its full path), or the hub id."""
    source = source.strip()
    if source.startswith("hub dataset "):
        return source.removeprefix("hub dataset ")
    if "/" in source and Path(source).suffix:
        return Path(source).name
    return source


def is_local_source(source: str) -> bool:
    """True for a source read from this machine: a file path or a shipped demo (``demo:NAME``), not a hub id."""
    return is_demo_source(source) or Path(source).expanduser().exists() or source.lower().endswith(LOCAL_SUFFIXES)


def check_hub_options(
    sources: Sequence[str], *, split: str | None = None, config: str | None = None, shipped: Sequence[str] = ()
) -> None:
    """Refuse ``--split`` / ``--config`` when none of ``sources`` is a hub dataset: they would be ignored.

    A blank value counts as not given (a page's empty field). With several sources (a command whose one
    flag serves two sets) the flag is accepted as soon as one of them is a hub dataset. ``shipped`` names
    sets a command ships under a plain word (``humaneval``, ``builtin``): local, like a demo.
    """
    given = [flag for flag, value in (("--split", split), ("--config", config)) if (value or "").strip()]
    named = list(dict.fromkeys(s.strip() for s in sources if (s or "").strip()))
    if not given or not named or not all(s in shipped or is_local_source(s) for s in named):
        return
    flags = " and ".join(given)
    what = "; ".join(
        f"{s} is {'a shipped set' if s in shipped else 'a shipped demo' if is_demo_source(s) else 'a local file'}"
        for s in named
    )
    raise DataError(f"{flags} {'apply' if len(given) > 1 else 'applies'} to hub datasets; {what}: drop {flags}.")


def load_rows(
    source: str,
    *,
    split: str | None = None,
    config: str | None = None,
    limit: int | None = None,
) -> Table:
    """Load rows from a shipped demo (``demo:NAME``), a local file path or a hub dataset id.

    ``split`` / ``config`` apply to hub datasets only: given with a demo or a file they raise a
    ``DataError`` naming the flag (see ``check_hub_options``), never silently ignored. A caller that
    fills in a default split passes it for hub sources only.
    """
    source = (source or "").strip()
    if not source:
        raise DataError("No dataset given: pass a file path (CSV, JSONL, Parquet) or a hub dataset id.")
    if is_demo_source(source):
        path = demo_path(source)
        check_hub_options([source], split=split, config=config)
        with path.open("rb") as handle:
            return _read_bytes(handle.read(), path.name, source.strip(), limit)
    if is_local_source(source):
        path = Path(source).expanduser()
        if not path.exists():
            raise DataError(f"File not found: {source}.")
        if path.is_dir():
            raise DataError(f"{source} is a directory; pass a CSV, JSONL, JSON or Parquet file.")
        check_hub_options([source], split=split, config=config)
        with path.open("rb") as handle:
            return _read_bytes(handle.read(), path.name, str(path), limit)
    return _load_hub(source, split=split, config=config, limit=limit)


def load_uploaded(data: bytes, filename: str, *, limit: int | None = None) -> Table:
    """Rows from an uploaded file's bytes; the format comes from its extension."""
    return _read_bytes(data, filename, f"uploaded file {filename}", limit)


def load_table(
    source: str,
    *,
    data: bytes | None = None,
    split: str | None = None,
    config: str | None = None,
    limit: int | None = None,
) -> Table:
    """Rows of a picked dataset in the shape every page's loader has (``ui.dataset_picker.load_choice``): an
    upload's bytes (``data``, with ``source`` its file name), else whatever ``load_rows`` reads."""
    if data is not None:
        return load_uploaded(data, source, limit=limit)
    return load_rows(source, split=split, config=config, limit=limit)


def _read_bytes(data: bytes, filename: str, source: str, limit: int | None) -> Table:
    suffix = os.path.splitext(filename.lower())[1]
    if suffix in (".jsonl", ".ndjson"):
        return _read_jsonl(data, source, limit)
    if suffix == ".json":
        return _read_json(data, source, limit)
    if suffix in (".csv", ".tsv"):
        return _read_csv(data, source, limit, sep="\t" if suffix == ".tsv" else ",")
    if suffix == ".parquet":
        return _read_parquet(data, source, limit)
    raise DataError(f"{source}: unsupported file type '{suffix or filename}'. Use CSV, TSV, JSONL, JSON or Parquet.")


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"{source} is not UTF-8 text (byte {exc.start} cannot be decoded).") from exc


def _read_jsonl(data: bytes, source: str, limit: int | None) -> Table:
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    skipped: list[SkippedRow] = []
    for number, line in _numbered_lines(_decode(data, source)):
        if limit is not None and len(rows) >= limit:
            break
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            skipped.append(SkippedRow(number, f"not valid JSON ({exc.msg})"))
            continue
        if not isinstance(value, dict):
            skipped.append(SkippedRow(number, "not a JSON object"))
            continue
        rows.append(value)
        lines.append(number)
    if not rows and skipped:
        raise DataError(f"{source}: no readable line; {len(skipped)} malformed (first at line {skipped[0].line}).")
    return Table(rows=rows, columns=_columns(rows), source=source, skipped=skipped, row_lines=lines)


def _numbered_lines(text: str) -> Iterator[tuple[int, str]]:
    yield from enumerate(text.splitlines(), start=1)


def _read_json(data: bytes, source: str, limit: int | None) -> Table:
    try:
        value = json.loads(_decode(data, source))
    except json.JSONDecodeError as exc:
        # A .json file holding JSON lines is common; fall back to line-by-line reading.
        if "Extra data" in exc.msg:
            return _read_jsonl(data, source, limit)
        raise DataError(f"{source} is not valid JSON: {exc.msg} at line {exc.lineno}.") from exc
    if isinstance(value, dict):
        # {"col": [..], ...} column layout, or a single record.
        if value and all(isinstance(v, list) for v in value.values()):
            lengths = {len(v) for v in value.values()}
            if len(lengths) != 1:
                raise DataError(f"{source}: columns have different lengths {sorted(lengths)}.")
            n = lengths.pop()
            value = [{k: v[i] for k, v in value.items()} for i in range(n)]
        else:
            value = [value]
    if not isinstance(value, list):
        raise DataError(f"{source}: expected a list of objects.")
    rows, skipped = [], []
    for index, item in enumerate(value):
        if isinstance(item, dict):
            rows.append(item)
        else:
            skipped.append(SkippedRow(index + 1, "not a JSON object"))
    if value and not rows:
        kinds = sorted({_json_kind(item) for item in value})
        raise DataError(
            f"{source}: its {len(value)} entries are {' and '.join(kinds)}, not objects; each row must be a JSON "
            'object with named fields, e.g. {"text": "...", "label": 1}.'
        )
    rows = rows[:limit] if limit is not None else rows
    return Table(rows=rows, columns=_columns(rows), source=source, skipped=skipped)


def _json_kind(item: Any) -> str:
    if isinstance(item, list):
        return "arrays"
    if isinstance(item, str):
        return "strings"
    if isinstance(item, bool):
        return "true/false values"
    if isinstance(item, int | float):
        return "numbers"
    return "nulls" if item is None else type(item).__name__


def _read_csv(data: bytes, source: str, limit: int | None, sep: str) -> Table:
    import pandas as pd

    text = _decode(data, source)
    try:
        frame = pd.read_csv(io.StringIO(text), sep=sep, nrows=limit, dtype=object)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise DataError(f"{source} could not be read as {'TSV' if sep == chr(9) else 'CSV'}: {exc}") from exc
    table = _from_frame(frame, source)
    lines = _csv_row_lines(text, sep, len(table.rows))
    return replace(table, row_lines=lines) if len(lines) == len(table.rows) else table


def _csv_row_lines(text: str, sep: str, n_rows: int) -> list[int]:
    """1-based line where each data row starts; a quoted field may span lines, so rows are not lines.

    Blank lines are skipped as pandas skips them. A count that disagrees with pandas' means the two
    parsers read the file differently: the caller then numbers rows instead of guessing lines.
    """
    import csv

    starts: list[int] = []
    reader = csv.reader(io.StringIO(text), delimiter=sep)
    previous = 0
    try:
        for record in reader:
            start, previous = previous + 1, reader.line_num
            if record:
                starts.append(start)
            if len(starts) > n_rows:
                break
    except csv.Error:
        return []
    return starts[1 : n_rows + 1]  # the first record is the header


def _read_parquet(data: bytes, source: str, limit: int | None) -> Table:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(io.BytesIO(data))
    except (pa.ArrowInvalid, OSError) as exc:
        raise DataError(f"{source} is not a readable Parquet file: {exc}") from exc
    if limit is not None:
        table = table.slice(0, limit)
    rows = table.to_pylist()
    return Table(rows=rows, columns=list(table.column_names), source=source)


def _from_frame(frame, source: str) -> Table:
    frame = frame.astype(object).where(frame.notna(), None)
    return Table(rows=frame.to_dict(orient="records"), columns=[str(c) for c in frame.columns], source=source)


def _load_hub(source: str, *, split: str | None, config: str | None, limit: int | None) -> Table:
    if source.count("/") > 1 or " " in source:
        raise DataError(f"'{source}' is neither an existing file nor a hub dataset id (owner/name).")
    try:
        import datasets

        dataset = datasets.load_dataset(source, config, split=split or None)
    except Exception as exc:  # datasets raises many unrelated types for "not reachable / not found"
        raise DataError(
            f"Could not load hub dataset '{source}'"
            + (f" (config {config})" if config else "")
            + (f" (split {split})" if split else "")
            + f": {type(exc).__name__}: {str(exc)[:300]}. If you are offline or the id is private, download "
            "the data and pass a local CSV / JSONL / Parquet file instead."
        ) from exc
    if isinstance(dataset, datasets.DatasetDict):
        splits = list(dataset.keys())
        raise DataError(f"Hub dataset '{source}' has several splits ({', '.join(splits)}); choose one with a split.")
    if limit is not None:
        dataset = dataset.select(range(min(limit, len(dataset))))
    label = f"hub dataset {source}" + (f" [{split}]" if split else "")
    return Table(rows=[dict(r) for r in dataset], columns=list(dataset.column_names), source=label)


def _columns(rows: list[dict[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for row in rows[:1000]:
        for key in row:
            seen.setdefault(str(key), None)
    return list(seen)
