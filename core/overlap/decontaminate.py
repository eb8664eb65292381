"""Write each training set without the rows that match any test instance at or above the threshold.

A row goes when any of its documents (its text, or any indexed turn of a conversation) matched; nothing
else changes. A JSONL training file is copied line by line as bytes: every line but the matched rows is
written exactly as it was (blank and malformed lines too, unless ``drop_malformed``; those dropped are
listed). Other formats are written as JSONL rows. A file that changed since it was indexed is refused:
the index's row numbers would point at other rows.

The embedded backend finds every match, so its output is clean by construction; a capped backend
(Elasticsearch, ``search_size``) may miss some, so its output is indexed again and searched again, and
whatever still matches is reported.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from core.files.outputs import OutputPlan, atomic_output
from core.overlap.backends.base import OverlapBackend
from core.overlap.indexing import build_index
from core.overlap.matching import Match, SearchSettings, search
from core.overlap.report import OutputNames, column_names
from core.overlap.sources import EvalSet, TrainingReader, TrainingSource, check_unchanged, source_file


@dataclass(frozen=True)
class CleanedSet:
    index: str
    dataset: str
    n_rows: int
    """Rows read from the training set (the selected share for a dataset mixer)."""
    n_removed: int
    path: Path
    still_matching: int | None
    """Test instances that still match the written file (None when not re-checked)."""
    dropped_lines: list[int] = field(default_factory=list)
    """1-based lines of malformed rows left out (only with ``drop_malformed``)."""


def rows_to_remove(matches: Sequence[Match]) -> dict[tuple[str, str], set[int]]:
    """(index, training set) -> row numbers whose documents matched."""
    out: dict[tuple[str, str], set[int]] = {}
    for m in matches:
        rows = out.setdefault((m.index, m.train_dataset), set())
        rows.update(ref.row for ref in m.matched_docs)
    return out


def decontaminate(
    backend: OverlapBackend,
    matches: Sequence[Match],
    test_sets: Sequence[EvalSet],
    settings: SearchSettings,
    output_dir: str | Path,
    *,
    recheck: bool | None = None,
    drop_malformed: bool = False,
    names: OutputNames | None = None,
) -> list[CleanedSet]:
    """``recheck`` defaults to True for capped backends (Elasticsearch), False for the embedded one;
    ``names`` comes from the search's plan (else it is made from ``matches``).

    Raises ``DataError`` before writing anything when a training file changed since it was indexed, and
    ``OutputError`` when a file to write is one of the indexes' recorded training sources (or a test set):
    each copy is written beside its target and replaces it only once its source was read to the end."""
    if recheck is None:
        recheck = backend.kind != "embedded"
    out_dir = Path(output_dir)
    columns = column_names(matches)
    names = names or OutputNames.plan(list(dict.fromkeys(m.eval_name for m in matches)), list(columns.values()))
    plan = OutputPlan()
    plan.add_inputs((f"test set {t.name}", t.source) for t in test_sets if Path(t.source).is_file())
    jobs = []
    for (index, dataset), rows in rows_to_remove(matches).items():
        info = backend.info(index)
        for listed in info.sources:
            plan.add_input(f"training source of index {index}", source_file(TrainingSource.from_dict(listed)))
        spec = next((s for s in info.sources if s.get("name") == dataset), None)
        if spec is None:
            continue
        source = TrainingSource.from_dict(spec)
        check_unchanged(source, index)
        jobs.append((info, source, rows, out_dir / names.cleaned[columns[(index, dataset)]]))
    for _, source, _, path in jobs:
        plan.claim(path, f"decontaminated copy of {source.name}")
    results = []
    for info, source, rows, path in jobs:
        n_rows, dropped = _write_without(TrainingReader(source), rows, path, drop_malformed)
        still = None
        if recheck:
            still = _recheck(backend, info.index_type, info.model, info.ngram_size, source, path, test_sets, settings)
        results.append(CleanedSet(info.name, source.name, n_rows, len(rows), path, still, dropped))
    return results


def _write_without(reader: TrainingReader, rows: set[int], path: Path, drop_malformed: bool) -> tuple[int, list[int]]:
    """Write the training set minus ``rows``; returns (rows read, malformed lines dropped)."""
    n_rows = 0
    dropped: list[int] = []
    with atomic_output(path, binary=True) as handle:
        if not reader.streamed:
            for row_index, row in reader.rows():
                n_rows += 1
                if row_index not in rows:
                    handle.write((json.dumps(row, ensure_ascii=False, default=str) + "\n").encode("utf-8"))
            return n_rows, dropped
        for line in reader.lines():
            if line.index is None:
                handle.write(line.raw)
                continue
            n_rows += line.row is not None
            if line.index in rows:
                continue
            if line.row is None and drop_malformed:
                dropped.append(line.number)
                continue
            handle.write(line.raw)
    return n_rows, dropped


def _recheck(
    backend: OverlapBackend,
    index_type: str,
    model: str | None,
    ngram_size: int | None,
    source: TrainingSource,
    path: Path,
    test_sets: Sequence[EvalSet],
    settings: SearchSettings,
) -> int:
    """Index the written file on its own, search it again, count instances still at or above threshold."""
    name = f"recheck-{uuid.uuid4().hex[:12]}"
    cleaned = replace(source, source=str(path), split=None, config=None, proportion=None, fingerprint=None)
    try:
        built = build_index(
            backend, name, [cleaned], index_type=index_type, ngram_size=ngram_size or settings.ngram_size, model=model
        )
    except Exception as exc:
        if "No documents to index" in str(exc) or "no readable rows" in str(exc):
            return 0
        raise
    try:
        again = search(backend, [built.info.name], test_sets, settings, collect_removals=False)
        return sum(1 for m in again if m.value >= settings.removal_threshold)
    finally:
        backend.delete(name)
