"""Labelled membership data: texts with 1 = member (seen in training) / 0 = non-member labels.

Every benchmark run starts here. Loading goes through ``core.data.tables`` (local files, uploads, hub ids);
this module maps the text and label columns (auto-detected for the known formats), validates labels,
skips unusable rows while counting them, draws a seeded stratified sample, and fingerprints the result
so stored runs can be matched to their data whichever way it was loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from core.config import SHARED_DATA_DIR
from core.data.fingerprint import fingerprint_rows
from core.data.tables import SkippedRow, Table, is_blank, load_rows, load_uploaded, skipped_summary
from core.data.text import unicode_problem
from core.errors import DataError

TEXT_COLUMN_NAMES = ("input", "Example_A", "text", "passage", "content", "document", "sentence")
"""Text columns tried in order: WikiMIA, DE-COP (BookTection / arXivTection), then common names."""
LABEL_COLUMN_NAMES = ("label", "Label", "labels", "is_member", "member", "membership")
ID_COLUMN_NAMES = ("id", "ID", "Id", "uid", "sample_id")
"""An id column is used only when its values are unique among the kept rows (BookTection's ``ID`` is a
book title shared by several passages, so there the row index is used instead)."""


class KnownDataset(NamedTuple):
    """A ready example for the benchmark page; unpacks as (source, split, config, description)."""

    source: str
    """Local path or hub dataset id."""
    split: str | None
    config: str | None
    description: str


@dataclass(frozen=True)
class LabelledDataset:
    """Texts and 0/1 membership labels, in the order they were read (or sampled)."""

    texts: list[str]
    labels: list[int]
    """1 = member (seen in training), 0 = non-member."""
    ids: list[str]
    """Stable per-row ids: the data's own unique id column, else the row's index in the source."""
    source: str
    text_col: str
    label_col: str
    skipped: list[SkippedRow]
    """Rows left out (unreadable lines, rows without usable text), by 1-based file line (see ``SkippedRow``)."""
    fingerprint: str
    """sha256 over ids, labels and texts only, so a path and an upload of the same data match."""
    skipped_unit: str = "lines"
    """What ``SkippedRow.line`` counts: file ``lines`` or ``rows`` (Parquet, hub datasets)."""

    @property
    def n(self) -> int:
        return len(self.texts)

    @property
    def n_members(self) -> int:
        return int(sum(self.labels))

    @property
    def n_nonmembers(self) -> int:
        return self.n - self.n_members

    def skipped_summary(self, limit: int = 10) -> str:
        """e.g. '2 rows skipped (lines 4, 9: empty text in column 'input')'; empty when nothing was skipped."""
        return skipped_summary(self.skipped, unit=self.skipped_unit, limit=limit)

    def describe(self) -> str:
        return f"{self.source}: {self.n} texts ({self.n_members} members, {self.n_nonmembers} non-members)"


def _known_datasets() -> dict[str, KnownDataset]:
    known: dict[str, KnownDataset] = {}
    local = {
        "WikiMIA length 128 (local sample)": (
            "wikimia_length128.parquet",
            "Wikipedia event pages; members written before 2023, non-members after (250 rows).",
        ),
        "BookTection (local sample)": (
            "booktection_sample.csv",
            "Verbatim book passages; members from books published before the model's cutoff (600 rows).",
        ),
        "arXivTection (local sample)": (
            "arxivtection_sample.csv",
            "arXiv paper passages; members published before the model's cutoff (600 rows).",
        ),
    }
    for name, (filename, description) in local.items():
        path = SHARED_DATA_DIR / filename
        if path.exists():
            known[name] = KnownDataset(str(path), None, None, description)
    known["WikiMIA length 128 (hub)"] = KnownDataset(
        "swj0419/WikiMIA", "WikiMIA_length128", None, "WikiMIA from the Hugging Face hub (needs network)."
    )
    known["BookTection (hub)"] = KnownDataset(
        "avduarte333/BookTection", "train", None, "DE-COP BookTection from the hub (needs network)."
    )
    known["arXivTection (hub)"] = KnownDataset(
        "avduarte333/arXivTection", "train", None, "DE-COP arXivTection from the hub (needs network)."
    )
    return known


KNOWN_DATASETS: dict[str, KnownDataset] = _known_datasets()
"""Ready examples by display name; local samples are listed only when their file exists."""


def detect_text_column(columns: list[str]) -> str:
    """The text column among ``columns`` (known formats first, then common names); DataError when unsure."""
    found = _first_match(columns, TEXT_COLUMN_NAMES)
    if found is None:
        raise DataError(
            f"Could not tell which column holds the text. Columns found: {_listing(columns)}. "
            "Choose the text column explicitly (e.g. --text-col)."
        )
    return found


def detect_label_column(columns: list[str]) -> str:
    """The 0/1 member label column among ``columns`` (known names first); DataError when unsure."""
    found = _first_match(columns, LABEL_COLUMN_NAMES)
    if found is None:
        raise DataError(
            f"Could not tell which column holds the 0/1 member label. Columns found: {_listing(columns)}. "
            "Choose the label column explicitly (e.g. --label-col)."
        )
    return found


def _first_match(columns: list[str], candidates: tuple[str, ...]) -> str | None:
    for name in candidates:  # exact spelling first, so 'label' beats 'Label' when both exist
        if name in columns:
            return name
    lowered = {c.lower(): c for c in columns}
    for name in candidates:
        if name.lower() in lowered:
            return lowered[name.lower()]
    return None


def _listing(columns: list[str]) -> str:
    return ", ".join(repr(c) for c in columns) or "none"


def load_labelled_dataset(
    source: str,
    *,
    data: bytes | None = None,
    split: str | None = None,
    config: str | None = None,
    text_col: str | None = None,
    label_col: str | None = None,
    limit: int | None = None,
    seed: int = 0,
    sample: bool = True,
) -> LabelledDataset:
    """Load a demo, a local file, a hub dataset id or an upload's ``data`` (``source`` is then its file name)
    and validate it as labelled membership data: one call whichever way the user gave it.

    ``limit`` keeps that many rows: with ``sample`` a seeded sample with both classes in their original
    proportions, otherwise the first ``limit`` usable rows.
    """
    table = load_uploaded(data, source) if data is not None else load_rows(source, split=split, config=config)
    return labelled_from_table(table, text_col=text_col, label_col=label_col, limit=limit, seed=seed, sample=sample)


def labelled_from_table(
    table: Table,
    *,
    text_col: str | None = None,
    label_col: str | None = None,
    limit: int | None = None,
    seed: int = 0,
    sample: bool = True,
) -> LabelledDataset:
    """Validate rows already read (e.g. an upload through ``core.data.tables.load_uploaded``)."""
    if not table.rows:
        raise DataError(f"{table.source} has no rows.")
    text_col = text_col or detect_text_column(table.columns)
    label_col = label_col or detect_label_column(table.columns)
    table.require_columns(text_col, label_col)
    if text_col == label_col:
        raise DataError(f"The text and label columns must differ (both are {text_col!r}).")

    kept: list[int] = []
    skipped = list(table.skipped)
    bad_labels: list[tuple[str, Any]] = []
    labels: list[int] = []
    for index, row in enumerate(table.rows):
        text = row.get(text_col)
        if not isinstance(text, str):
            kind = "missing" if is_blank(text) else f"not text ({type(text).__name__})"
            skipped.append(table.skip(index, f"{kind} in column {text_col!r}"))
            continue
        if not text.strip():
            skipped.append(table.skip(index, f"empty text in column {text_col!r}"))
            continue
        if (problem := unicode_problem(text)) is not None:
            skipped.append(table.skip(index, f"text in column {text_col!r} {problem}"))
            continue
        label = parse_label(row.get(label_col))
        if label is None:
            bad_labels.append((table.skip(index, "").where(), row.get(label_col)))
            continue
        kept.append(index)
        labels.append(label)

    if bad_labels:
        shown = ", ".join(f"{table.unit[:-1]} {where}: {v!r}" for where, v in bad_labels[:8])
        more = f" and {len(bad_labels) - 8} more" if len(bad_labels) > 8 else ""
        raise DataError(
            f"Column {label_col!r} of {table.source} must hold 0 (non-member) or 1 (member); "
            f"{len(bad_labels)} rows do not ({shown}{more})."
        )
    if not kept:
        raise DataError(f"{table.source} has no row with text in column {text_col!r}.")
    classes = set(labels)
    if len(classes) < 2:
        only = "members (1)" if classes == {1} else "non-members (0)"
        raise DataError(
            f"{table.source} holds only {only} in column {label_col!r}; AUROC needs both members and non-members."
        )

    ids = _row_ids(table, kept)
    texts = [table.rows[i][text_col] for i in kept]
    if limit is not None:
        chosen = stratified_sample(labels, limit, seed) if sample else list(range(min(limit, len(labels))))
        texts = [texts[i] for i in chosen]
        labels = [labels[i] for i in chosen]
        ids = [ids[i] for i in chosen]
        if len(set(labels)) < 2:
            raise DataError(
                f"The first {limit} usable rows of {table.source} hold one class only; AUROC needs both members "
                "and non-members. Sample instead (--sample: a seeded sample keeping both classes) or raise the limit."
            )
    return LabelledDataset(
        texts=texts,
        labels=labels,
        ids=ids,
        source=table.source,
        text_col=text_col,
        label_col=label_col,
        skipped=skipped,
        fingerprint=fingerprint(texts, labels, ids),
        skipped_unit=table.unit,
    )


def parse_label(value: Any) -> int | None:
    """0/1 from ints, integral floats, bools and strings like '1', '0.0', 'true'; None if not a label."""
    if isinstance(value, (bool, np.bool_)):
        return int(bool(value))
    if isinstance(value, (int, np.integer)):
        return int(value) if value in (0, 1) else None
    if isinstance(value, (float, np.floating)):
        return int(value) if value in (0.0, 1.0) else None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("1", "1.0", "true"):
            return 1
        if text in ("0", "0.0", "false"):
            return 0
    return None


def _row_ids(table: Table, kept: list[int]) -> list[str]:
    for name in ID_COLUMN_NAMES:
        if name in table.columns:
            values = [table.rows[i].get(name) for i in kept]
            as_text = [str(v) for v in values if not is_blank(v)]
            if len(as_text) == len(kept) and len(set(as_text)) == len(kept):
                return as_text
    return [str(i) for i in kept]


def stratified_sample(labels: list[int], size: int, seed: int = 0) -> list[int]:
    """Indices of a seeded sample of ``size`` rows keeping each class's share (at least one of each).

    The indices come back in their original order, so a sample reads like the data it came from.
    """
    if size < 2:
        raise DataError(f"A sample needs at least 2 rows (one member, one non-member); got {size}.")
    n = len(labels)
    if size >= n:
        return list(range(n))
    by_class = {c: [i for i, y in enumerate(labels) if y == c] for c in (0, 1)}
    n_members = round(size * len(by_class[1]) / n)
    n_members = min(max(n_members, 1), len(by_class[1]), size - 1)
    n_members = max(n_members, size - len(by_class[0]))
    rng = np.random.default_rng(seed)
    chosen = list(rng.choice(by_class[1], n_members, replace=False)) + list(
        rng.choice(by_class[0], size - n_members, replace=False)
    )
    return sorted(int(i) for i in chosen)


def fingerprint(texts: list[str], labels: list[int], ids: list[str]) -> str:
    """The data's fingerprint over (id, label, text) rows: a path and an upload of the same data match."""
    rows = zip(ids, (str(int(label)) for label in labels), texts, strict=True)
    return fingerprint_rows(rows)
