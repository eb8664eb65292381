"""Where overlap documents come from: training sets (plain text field, conversational messages,
dataset-mixer YAML) and test sets.

Large local JSONL training files are streamed line by line, as bytes: each line decodes as UTF-8 or the
file is refused (never read with replacement characters), and decontamination copies the lines it keeps
byte for byte. Every other format goes through ``core.data.tables.load_rows``. Unreadable lines and rows
without usable text are skipped and reported by their 1-based file line (or 1-based row number where a
format has no lines) and the row's id where it has one, never silently lost. A local training file's
size, modification time and sha256 are recorded at indexing, so a file changed since cannot be
decontaminated by stale row numbers.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from core.config import cache_subdir
from core.data.demo import demo_path, is_demo_source
from core.data.tables import SkippedRow, Table, is_blank, is_local_source, load_rows, load_uploaded, row_id_of
from core.errors import DataError
from core.files.outputs import write_atomic

DEFAULT_HUB_SPLIT = "train"
DEFAULT_TEST_SPLIT = "test"
TEST_TEXT_FIELDS = ("question", "text", "prompt", "input", "content", "problem", "instruction")
"""Test-set text fields tried in order when none is named (MMLU-style first, then common names)."""


@dataclass(frozen=True)
class Document:
    """One indexed unit of training text: a row's text field, or one conversation turn."""

    dataset: str
    """Name of the training set it belongs to (a column of the contamination report)."""
    row: int
    """0-based row index in the training set (what decontamination removes)."""
    turn: int | None
    """Index of the turn within the row's messages, or None for a plain text field."""
    text: str

    @property
    def key(self) -> str:
        return str(self.row) if self.turn is None else f"{self.row}:{self.turn}"


@dataclass(frozen=True)
class TrainingSource:
    """How to read documents out of one training set."""

    source: str
    """Local CSV / JSONL / Parquet path or hub dataset id."""
    name: str = ""
    """Report name; derived from the source when empty."""
    text_field: str | None = "text"
    """Plain text field; ignored when ``messages_field`` is set."""
    messages_field: str | None = None
    """Field holding a list of turns (dicts); each kept turn is one document."""
    query_filter: tuple[str, str] | None = None
    """Keep only turns whose ``key`` equals ``value`` (e.g. ``("role", "user")``)."""
    query_field: str = "content"
    """Field of a turn that holds its text."""
    split: str | None = None
    config: str | None = None
    proportion: float | None = None
    """Dataset-mixer share: a fraction (<= 1) of the rows, or a row count (> 1); None = all rows."""
    fingerprint: dict[str, Any] | None = None
    """``size``, ``mtime_ns`` and ``sha256`` of a local file when it was indexed (see ``fingerprinted``)."""

    def __post_init__(self) -> None:
        if not self.source.strip():
            raise DataError("A training set needs a source: a file path or a hub dataset id.")
        if not self.messages_field and not self.text_field:
            raise DataError("Give a text field (--text-field) or a messages field (--messages-field).")
        if self.proportion is not None and self.proportion <= 0:
            raise DataError(f"Dataset-mixer proportion for {self.source} must be positive, got {self.proportion}.")
        if not self.name:
            object.__setattr__(self, "name", dataset_name(self.source))

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "name": self.name,
            "text_field": self.text_field,
            "messages_field": self.messages_field,
            "query_filter": list(self.query_filter) if self.query_filter else None,
            "query_field": self.query_field,
            "split": self.split,
            "config": self.config,
            "proportion": self.proportion,
            "fingerprint": self.fingerprint,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainingSource:
        qf = data.get("query_filter")
        return cls(**{**data, "query_filter": tuple(qf) if qf else None})


@dataclass(frozen=True)
class EvalInstance:
    id: str
    text: str


@dataclass(frozen=True)
class EvalSet:
    """Test instances read from one evaluation set (a row of the contamination report)."""

    name: str
    instances: list[EvalInstance]
    source: str
    skipped: list[SkippedRow] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.instances)


def dataset_name(source: str) -> str:
    """A short, file-name-safe name: a file's stem, or a hub id with '/' replaced by '__'."""
    base = Path(source).stem if is_local_source(source) else source.replace("/", "__")
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "_", base).strip("._") or "dataset"
    return cleaned


def distinct_names(sources: Sequence[str], names: Sequence[str]) -> list[str]:
    """``names`` made distinct: sets that share a name are prefixed with their folders, nearest first, until
    they differ (``a/train.jsonl``, ``b/train.jsonl`` -> ``a__train``, ``b__train``); the same source given
    twice, or names still equal, get ``-2``, ``-3`` in order. Names already distinct stay as they are."""
    out = list(names)
    for name in set(names):
        group = [i for i, n in enumerate(names) if n == name]
        if len(group) < 2:
            continue
        folders = [Path(sources[i]).expanduser().absolute().parent.parts for i in group]
        for depth in range(1, max(len(f) for f in folders) + 1):
            candidates = [dataset_name("__".join([*f[-depth:], name])) if f[-depth:] else name for f in folders]
            if len(set(candidates)) == len(candidates):
                for i, candidate in zip(group, candidates):
                    out[i] = candidate
                break
    seen: dict[str, int] = {}
    for i, name in enumerate(out):
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            out[i] = f"{name}-{seen[name]}"
    return out


def parse_query_filter(spec: str | None) -> tuple[str, str] | None:
    """``"role:user"`` -> ``("role", "user")``."""
    if not spec:
        return None
    key, sep, value = spec.partition(":")
    if not sep or not key.strip() or not value.strip():
        raise DataError(f"Query filter '{spec}' must look like FIELD:VALUE, e.g. role:user.")
    return key.strip(), value.strip()


def training_sources(
    datasets: Sequence[str],
    *,
    text_field: str | None = "text",
    messages_field: str | None = None,
    query_filter: str | None = None,
    query_field: str | None = "content",
    split: str | None = None,
    config: str | None = None,
    mixer_config: str | Path | None = None,
) -> list[TrainingSource]:
    """The training sets to index, from what a user typed (CLI flags or page fields) in one place.

    Every surface reads documents the same way: blank strings count as not given (a page's empty field
    equals an omitted flag), the turn filter (``FIELD:VALUE``) is checked even when unused but applies
    only to a messages field, and a dataset-mixer YAML adds its datasets after ``datasets`` with the same
    options. Raises ``DataError`` when neither names a training set.
    """
    messages = (messages_field or "").strip() or None
    parsed_filter = parse_query_filter((query_filter or "").strip() or None)
    options: dict[str, Any] = {
        "text_field": (text_field or "").strip() or "text",
        "messages_field": messages,
        "query_filter": parsed_filter if messages else None,
        "query_field": (query_field or "").strip() or "content",
        "split": (split or "").strip() or None,
        "config": (config or "").strip() or None,
    }
    sources = [TrainingSource(d.strip(), **options) for d in datasets if d.strip()]
    mixer = str(mixer_config or "").strip()
    if mixer:
        sources += parse_mixer(mixer, **options)
    if not sources:
        raise DataError(
            "No training set given: name a dataset (demo:overlap-train, a file path or a hub id) "
            "or a dataset-mixer YAML."
        )
    names = distinct_names([s.source for s in sources], [s.name for s in sources])
    return [s if s.name == name else replace(s, name=name) for s, name in zip(sources, names)]


def keep_upload(data: bytes, filename: str) -> str:
    """Save an uploaded training file in the cache and return its path.

    An index records where its documents came from and decontamination re-reads the training file by
    that path, so an upload must outlive the browser session that sent it, and a later upload of the same
    name must not replace it: it goes in a folder named after its content's sha256 (same bytes, same
    path), under its own file name so the training set keeps its name.
    """
    folder = cache_subdir("uploads") / hashlib.sha256(data).hexdigest()[:32]
    path = folder / (Path(filename).name or "upload")
    if not path.is_file() or path.read_bytes() != data:
        write_atomic(path, data)
    return str(path)


def source_file(source: TrainingSource) -> Path | None:
    """The file a training set is read from (a demo's shipped file too); None for a hub dataset."""
    if is_demo_source(source.source):
        return demo_path(source.source)
    path = Path(source.source).expanduser()
    return path if is_local_source(source.source) and path.is_file() else None


def file_fingerprint(path: Path) -> dict[str, Any]:
    """What identifies a file's content: size and mtime (cheap) and the sha256 of its bytes."""
    stat = path.stat()
    with path.open("rb") as handle:
        digest = hashlib.file_digest(handle, "sha256").hexdigest()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": digest}


def fingerprinted(source: TrainingSource) -> TrainingSource:
    """``source`` with its file's fingerprint recorded (hub datasets have none)."""
    path = source_file(source)
    return replace(source, fingerprint=file_fingerprint(path)) if path else source


def check_unchanged(source: TrainingSource, index: str, *, full: bool = True) -> None:
    """Refuse a training file that differs from the one indexed: its row numbers no longer point at the
    rows the index holds. ``full=False`` compares size and mtime only (the check right after indexing)."""
    path = source_file(source)
    if path is None:
        return
    redo = (
        f"Re-index it (python -m core overlap index --name {index} --overwrite --dataset {source.source} ...) "
        "and search again."
    )
    recorded = source.fingerprint
    if not recorded:
        raise DataError(
            f"Index '{index}' holds no fingerprint of {path} (it was built by an older LeakLens), so "
            f"LeakLens cannot tell whether the file changed since. {redo}"
        )
    now = {"size": path.stat().st_size, "mtime_ns": path.stat().st_mtime_ns} if not full else file_fingerprint(path)
    if any(now[k] != recorded.get(k) for k in now if k != "mtime_ns" or not full):
        raise DataError(
            f"{path} changed since index '{index}' was built (now {now['size']} bytes, was "
            f"{recorded.get('size')}; content differs), so its row numbers no longer match the index. "
            f"{redo}"
        )


def skipped_note(name: str, skipped: Sequence[SkippedRow], limit: int = 30) -> str:
    """e.g. 'train: skipped 2 rows (lines 4, 9): not valid JSON (...).'; empty when nothing was skipped.

    Rows skipped for different reasons get each reason with its own lines ('test: skipped 3 rows (lines 2, 5,
    7): no text in field 'text' (lines 2, 5); no value in id field 'id' (lines 7).'), so no row is reported
    under another row's reason."""
    if not skipped:
        return ""
    rows = "row" if len(skipped) == 1 else "rows"
    head = f"{name}: skipped {len(skipped)} {rows} ({_line_list(skipped, limit)})"
    reasons = list(dict.fromkeys(s.reason for s in skipped))
    if len(reasons) == 1:
        return f"{head}: {reasons[0]}."
    parts = []
    for reason in reasons:
        lines = [s.line for s in skipped if s.reason == reason]
        more = "" if len(lines) <= limit else f" and {len(lines) - limit} more"
        parts.append(f"{reason} (lines {', '.join(map(str, lines[:limit]))}{more})")
    return f"{head}: {'; '.join(parts)}."


def _line_list(skipped: Sequence[SkippedRow], limit: int) -> str:
    """e.g. 'lines 4', 'lines 4 (id q17), 9' or 'lines 1, ..., 30 and 4 more' (always 'lines', as before)."""
    listed = ", ".join(s.where() for s in skipped[:limit])
    more = "" if len(skipped) <= limit else f" and {len(skipped) - limit} more"
    return f"lines {listed}{more}"


def parse_mixer(path: str | Path, **options: Any) -> list[TrainingSource]:
    """Training sources from a dataset-mixer YAML (``dataset_mixer: {dataset: proportion}``)."""
    import yaml

    path = Path(path).expanduser()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise DataError(f"Dataset-mixer config not found: {path}.") from exc
    except yaml.YAMLError as exc:
        raise DataError(f"{path} is not valid YAML: {exc}") from exc
    mixer = data.get("dataset_mixer") if isinstance(data, dict) else None
    if not isinstance(mixer, dict) or not mixer:
        raise DataError(f"{path} has no 'dataset_mixer:' mapping of dataset -> proportion.")
    sources = []
    for dataset, proportion in mixer.items():
        if not isinstance(proportion, (int, float)) or isinstance(proportion, bool):
            raise DataError(f"{path}: proportion for {dataset} must be a number, got {proportion!r}.")
        source = str(dataset)
        # Relative local paths in the YAML are relative to the YAML file.
        candidate = path.parent / source
        if not Path(source).expanduser().exists() and candidate.exists():
            source = str(candidate)
        sources.append(TrainingSource(source=source, proportion=float(proportion), **options))
    names = [s.name for s in sources]
    if len(set(names)) != len(names):
        raise DataError(f"{path}: two datasets share the name {sorted(n for n in names if names.count(n) > 1)[0]}.")
    return sources


@dataclass(frozen=True)
class RawLine:
    """One line of a streamed JSONL training file, exactly as stored."""

    number: int
    """1-based line number in the file."""
    raw: bytes
    """The line's bytes, line ending included: what decontamination writes back."""
    index: int | None
    """Row index (``Document.row``); None for a blank line, which is no row."""
    row: dict[str, Any] | None
    """The parsed object; None for a blank or malformed line."""


class TrainingReader:
    """Iterates the documents of one training set; ``skipped`` and ``n_rows`` are filled as it goes."""

    def __init__(self, source: TrainingSource) -> None:
        self.source = source
        self.skipped: list[SkippedRow] = []
        self.n_rows = 0

    @property
    def streamed(self) -> bool:
        """True for a local JSONL file: read line by line, rewritten line by line."""
        path = Path(self.source.source).expanduser()
        return is_local_source(self.source.source) and path.suffix.lower() in (".jsonl", ".ndjson") and path.is_file()

    def rows(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """(row index, row) pairs of the selected rows."""
        for index, _, row in self._numbered_rows():
            yield index, row

    def _numbered_rows(self) -> Iterator[tuple[int, SkippedRow, dict[str, Any]]]:
        """(row index, how a report names the row, row) for the selected rows."""
        src = self.source
        if self.streamed:
            for line in self.lines():
                if line.row is not None:
                    # lines() gives every line that has a row an index.
                    yield cast(int, line.index), _where(line.number, line.row), line.row
            return
        hub = not is_local_source(src.source)  # a split or config reaches hub sets only (checked by the command)
        table = load_rows(
            src.source, split=(src.split or DEFAULT_HUB_SPLIT) if hub else None, config=src.config if hub else None
        )
        self.skipped.extend(table.skipped)
        limit = _row_limit(src.proportion, len(table.rows))
        for index, row in enumerate(table.rows[:limit]):
            yield index, table.skip(index, ""), row

    def lines(self) -> Iterator[RawLine]:
        """Every line of a streamed JSONL file up to the selected share, malformed ones reported in ``skipped``.

        Raises ``DataError`` at the first line that is not UTF-8, naming it and its byte offset: reading it
        with replacement characters would index, and write back, text the file does not hold."""
        path = Path(self.source.source).expanduser()
        limit = None
        if self.source.proportion is not None:
            with path.open("rb") as handle:
                limit = _row_limit(self.source.proportion, sum(1 for line in handle if line.strip()))
        index = 0
        offset = 0
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if limit is not None and index >= limit:
                    break
                bom = len(_BOM) if number == 1 and raw.startswith(_BOM) else 0
                text = _decode_line(raw[bom:], path, number, offset + bom)
                offset += len(raw)
                if not text.strip():
                    yield RawLine(number, raw, None, None)
                    continue
                row = self._parse(text, number)
                yield RawLine(number, raw, index, row)
                index += 1

    def _parse(self, text: str, number: int) -> dict[str, Any] | None:
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            self.skipped.append(SkippedRow(number, f"not valid JSON ({exc.msg})"))
            return None
        if not isinstance(value, dict):
            self.skipped.append(SkippedRow(number, "not a JSON object"))
            return None
        return value

    def documents(self) -> Iterator[Document]:
        """Every document of the training set. A row without the text (or messages) field is skipped with its
        line like any other unusable row, the first one too; only a set in which no row has the field at all
        is refused (a misspelt field name), listing the fields its rows have."""
        src = self.source
        wanted = src.messages_field or src.text_field
        found = False
        fields: dict[str, None] = {}
        n_rows = 0
        for index, where, row in self._numbered_rows():
            self.n_rows += 1
            n_rows += 1
            if not found:
                if wanted in row:
                    self._check_field(row[wanted])
                    found = True
                elif len(fields) < _FIELDS_LISTED:
                    fields.update(dict.fromkeys(str(k) for k in row))
            if src.messages_field:
                yield from self._turns(index, where, row)
            else:
                # TrainingSource.__post_init__ refuses a source with neither field, so text_field is set here.
                text = row.get(cast(str, src.text_field))
                if isinstance(text, str) and text.strip():
                    yield Document(src.name, index, None, text)
                else:
                    self.skipped.append(replace(where, reason=f"no text in field '{src.text_field}'"))
        if not n_rows:
            raise DataError(f"{src.source} has no readable rows.")
        if not found:
            listing = ", ".join(repr(k) for k in list(fields)[:_FIELDS_LISTED]) or "none"
            raise DataError(f"{src.source} has no field '{wanted}' in any row. Fields found: {listing}.")

    def _check_field(self, value: Any) -> None:
        """The first value of the messages field must be a list of turns (else the wrong flag was used)."""
        src = self.source
        if src.messages_field and not isinstance(value, list):
            raise DataError(
                f"{src.source}: field '{src.messages_field}' is not a list of turns; use --text-field for plain text."
            )

    def _turns(self, index: int, where: SkippedRow, row: dict[str, Any]) -> Iterator[Document]:
        src = self.source
        turns = row.get(cast(str, src.messages_field))  # only called when messages_field is set
        if not isinstance(turns, list):
            what = "is not a list" if src.messages_field in row else "is missing"
            self.skipped.append(replace(where, reason=f"field '{src.messages_field}' {what}"))
            return
        for turn_index, turn in enumerate(turns):
            if not isinstance(turn, dict):
                continue
            if src.query_filter and str(turn.get(src.query_filter[0])) != src.query_filter[1]:
                continue
            text = turn.get(src.query_field)
            if isinstance(text, str) and text.strip():
                yield Document(src.name, index, turn_index, text)


_BOM = b"\xef\xbb\xbf"
_FIELDS_LISTED = 50
"""At most this many field names are listed when the text field is found in no row."""


def _where(number: int, row: dict[str, Any]) -> SkippedRow:
    """A row's place for reports: its 1-based file line and its id where it has one (reason filled later)."""
    return SkippedRow(number, "", row_id_of(row))


def _decode_line(raw: bytes, path: Path, number: int, offset: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{path} is not UTF-8: line {number} has byte 0x{raw[exc.start]:02x} at byte offset "
            f"{offset + exc.start} of the file. LeakLens reads training files as UTF-8 and never changes their "
            "bytes: convert the file (e.g. iconv -f latin1 -t utf-8) and index it again."
        ) from exc


def _row_limit(proportion: float | None, total: int) -> int | None:
    if proportion is None:
        return None
    if proportion <= 1.0:
        return int(round(proportion * total))
    return int(proportion)


def eval_text_field(columns: Sequence[str]) -> str:
    """The first of ``TEST_TEXT_FIELDS`` among ``columns``, so a test set's text field may be left unnamed."""
    found = next((name for name in TEST_TEXT_FIELDS if name in columns), None)
    if found is None:
        listing = ", ".join(repr(c) for c in columns) or "none"
        raise DataError(
            f"Could not tell which field holds the test text; fields found: {listing}. Name the text field."
        )
    return found


def eval_set_from_table(table: Table, field_name: str | None, *, name: str, id_field: str | None = None) -> EvalSet:
    """Test instances from loaded rows (text field detected when not named); rows without text are listed."""
    field_name = field_name or eval_text_field(table.columns)
    table.require_columns(field_name)
    if id_field:
        table.require_columns(id_field)
    instances: list[EvalInstance] = []
    skipped = list(table.skipped)
    for index, row in enumerate(table.rows):
        text = row.get(field_name)
        if not isinstance(text, str) or not text.strip():
            skipped.append(table.skip(index, f"no text in field '{field_name}'"))
            continue
        ident = row.get(id_field) if id_field else index
        if is_blank(ident):
            # The id names the row in every result file: a row without one is left out, by its line.
            skipped.append(table.skip(index, f"no value in id field '{id_field}'"))
            continue
        instances.append(EvalInstance(str(ident), text))
    if not instances:
        with_text = (
            ""
            if not any(s.reason.startswith("no value in id") for s in skipped)
            else (f" with a value in id field '{id_field}'")
        )
        raise DataError(f"{table.source}: no row has text in field '{field_name}'{with_text}.")
    return EvalSet(name=name, instances=instances, source=table.source, skipped=skipped)


def load_eval_set(
    source: str,
    field_name: str | None,
    *,
    name: str | None = None,
    id_field: str | None = None,
    split: str | None = None,
    config: str | None = None,
    data: bytes | None = None,
) -> EvalSet:
    """A test set from a demo, file or hub id (hub split defaults to test), or from an upload's ``data``
    (``source`` is then its file name): one call whichever way the user gave it."""
    if data is not None:
        table = load_uploaded(data, source)
    else:
        hub = not is_local_source(source)  # a split or config reaches hub sets only (checked by the command)
        table = load_rows(source, split=(split or DEFAULT_TEST_SPLIT) if hub else None, config=config if hub else None)
    return eval_set_from_table(table, field_name, name=name or dataset_name(source), id_field=id_field)
