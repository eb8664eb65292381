"""Build an index from training sets: read documents in batches, embed them for vector indexes, and
hand them to a backend's writer, reporting progress per batch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from core.data.tables import SkippedRow
from core.engine.progress import ProgressCallback
from core.errors import DataError
from core.overlap.backends.base import IndexInfo, OverlapBackend
from core.overlap.embeddings import DEFAULT_EMBEDDING_MODEL, embed_texts, load_embedder
from core.overlap.sources import Document, TrainingReader, TrainingSource, check_unchanged, fingerprinted

DEFAULT_NGRAM_SIZE = 8
BATCH_SIZE = 1000


@dataclass(frozen=True)
class BuildResult:
    info: IndexInfo
    skipped: dict[str, list[SkippedRow]] = field(default_factory=dict)
    """Per training set, the rows or lines left out and why."""
    n_rows: dict[str, int] = field(default_factory=dict)
    reused: bool = False
    """True when an index of this name already held exactly these training sets, built the same way, and was
    kept instead of built again (a dashboard and a command line may both build the tour's index)."""


def build_index(
    backend: OverlapBackend,
    name: str,
    sources: Sequence[TrainingSource],
    *,
    index_type: str = "text",
    ngram_size: int = DEFAULT_NGRAM_SIZE,
    model: str | None = None,
    overwrite: bool = False,
    progress: ProgressCallback | None = None,
) -> BuildResult:
    """Index every document of ``sources`` (progress counts documents; the total grows as files are read).

    Each local file's fingerprint goes into the index, and a file that changes while it is read fails the
    build, so the row numbers stored are those of the recorded content."""
    if not sources:
        raise DataError("Nothing to index: give at least one training set.")
    names = [s.name for s in sources]
    if len(set(names)) != len(names):
        raise DataError("Two training sets have the same name; give them distinct names.")
    # Recorded before reading, checked after: decontamination trusts these row numbers only for this file.
    sources = [fingerprinted(s) for s in sources]
    if index_type == "vector":
        model = model or DEFAULT_EMBEDDING_MODEL
    if not overwrite:
        same = _same_index(backend, name, sources, index_type, ngram_size, model)
        if same is not None:
            return BuildResult(info=same, reused=True)
    dims = None
    if index_type == "vector":
        embedder = load_embedder(model)
        dims = (getattr(embedder, "get_embedding_dimension", None) or embedder.get_sentence_embedding_dimension)()
    writer = backend.create(
        name,
        index_type,
        sources=[s.to_dict() for s in sources],
        ngram_size=ngram_size,
        model=model if index_type == "vector" else None,
        dims=dims,
        overwrite=overwrite,
    )
    readers = [TrainingReader(s) for s in sources]
    done = 0
    try:
        for reader in readers:
            batch: list[Document] = []
            for doc in reader.documents():
                batch.append(doc)
                if len(batch) >= BATCH_SIZE:
                    _flush(writer, batch, index_type, model)
                    done += len(batch)
                    batch = []
                    if progress:
                        progress(done, done + 1)
            if batch:
                _flush(writer, batch, index_type, model)
                done += len(batch)
            check_unchanged(reader.source, name, full=False)
        if done == 0:
            raise DataError("No documents to index: every row was empty or filtered out.")
        info = writer.close()
    except BaseException:
        writer.abort()
        raise
    if progress:
        progress(done, done)
    return BuildResult(
        info=info,
        skipped={r.source.name: r.skipped for r in readers},
        n_rows={r.source.name: r.n_rows for r in readers},
    )


def _same_index(
    backend: OverlapBackend,
    name: str,
    sources: Sequence[TrainingSource],
    index_type: str,
    ngram_size: int,
    model: str | None,
) -> IndexInfo | None:
    """The existing complete index ``name`` when it holds exactly ``sources`` (same files by fingerprint, same
    fields) built the same way; None when there is none or it differs (then creating it says it exists)."""
    info = next((listed for listed in backend.list() if listed.name == name), None)
    if info is None:
        return None
    built_the_same = (
        info.complete
        and info.unreadable is None
        and info.index_type == index_type
        and (index_type != "text" or info.ngram_size == ngram_size)
        and (index_type != "vector" or info.model == model)
        and info.sources == [s.to_dict() for s in sources]
    )
    return info if built_the_same else None


def _flush(writer, batch: list[Document], index_type: str, model: str | None) -> None:
    vectors = embed_texts([d.text for d in batch], model or DEFAULT_EMBEDDING_MODEL) if index_type == "vector" else None
    writer.add(batch, vectors)
