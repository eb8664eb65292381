"""The interface every overlap backend implements, and the records they exchange.

A backend stores documents (and, for vector indexes, their embeddings) and returns *candidate*
documents for a query; scoring happens once, exactly, in ``core.overlap.matching``. That split is what
makes the embedded index and Elasticsearch give the same scores on the same data.
"""

from __future__ import annotations

import builtins
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from core.errors import DataError
from core.overlap.sources import Document

INDEX_TYPES = ("text", "vector")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


def check_index_name(name: str) -> str:
    """Index names are lower-case letters, digits, '-' and '_' (valid for every backend)."""
    name = (name or "").strip()
    if not _NAME.match(name):
        raise DataError(
            f"Index name '{name}' is not allowed: use 1-64 lower-case letters, digits, '-' or '_', "
            "starting with a letter or digit."
        )
    return name


def check_index_type(index_type: str) -> str:
    """The kinds of index every backend can build."""
    if index_type not in INDEX_TYPES:
        raise DataError(f"Index type must be one of {', '.join(INDEX_TYPES)}, not '{index_type}'.")
    return index_type


@dataclass(frozen=True)
class StoredDoc:
    """A document as a backend returns it."""

    doc_id: int
    """Position in indexing order; equal across backends for the same data."""
    dataset: str
    row: int
    turn: int | None
    text: str


@dataclass(frozen=True)
class IndexInfo:
    name: str
    backend: str
    index_type: str
    n_docs: int
    datasets: dict[str, int]
    """Documents per training set, in indexing order."""
    size_bytes: int
    ngram_size: int | None = None
    """Embedded text indexes store n-grams of this size; searches need n >= it."""
    model: str | None = None
    """Embedding model of a vector index."""
    sources: list[dict[str, Any]] = field(default_factory=list)
    """The ``TrainingSource.to_dict()`` of each training set (to rewrite them when decontaminating)."""
    complete: bool = True
    """False when the build never finished (the process or the server stopped mid-way): the index holds
    only part of its documents, so a search would under-report overlap."""
    unreadable: str | None = None
    """Why the index's own description could not be read (e.g. ``<folder>/meta.json is empty``), naming the
    file; None when it was read. Such an index is listed (with ``complete`` False and nothing else known),
    never searched: rebuild it with --overwrite, or delete it."""


@dataclass(frozen=True)
class Candidates:
    """Candidate document ids per query, and the documents themselves (deduplicated)."""

    ids: list[list[int]]
    docs: dict[int, StoredDoc]


@dataclass(frozen=True)
class VectorHit:
    doc: StoredDoc
    similarity: float
    """Cosine similarity of the query and the document embeddings."""


class IndexWriter(ABC):
    """Receives documents in batches; ``close`` makes the index searchable and returns its info."""

    @abstractmethod
    def add(self, docs: Sequence[Document], vectors: np.ndarray | None = None) -> None: ...

    @abstractmethod
    def close(self) -> IndexInfo: ...

    @abstractmethod
    def abort(self) -> None:
        """Remove the half-built index after a failure."""


class OverlapBackend(ABC):
    kind: ClassVar[str]
    search_batch: ClassVar[int] = 200
    """Test instances per n-gram candidate lookup (and progress step): a backend that looks a whole batch up
    at once (Elasticsearch) gains from larger ones."""

    @abstractmethod
    def create(
        self,
        name: str,
        index_type: str,
        *,
        sources: list[dict[str, Any]],
        ngram_size: int,
        model: str | None = None,
        dims: int | None = None,
        overwrite: bool = False,
    ) -> IndexWriter: ...

    @abstractmethod
    def list(self) -> list[IndexInfo]: ...

    @abstractmethod
    def info(self, name: str) -> IndexInfo:
        """Raises ``DataError`` listing the existing indexes when ``name`` is unknown."""

    @abstractmethod
    def delete(self, name: str) -> None: ...

    @abstractmethod
    def ngram_candidates(
        self, name: str, queries: Sequence[Sequence[tuple[str, ...]]], datasets: Sequence[str], search_size: int
    ) -> Candidates:
        """Per query (the n-grams of one test instance, all of one size), documents sharing at least one
        of its n-grams: all of them on an exact backend, at most ``search_size`` per n-gram and dataset
        on a capped one."""

    @abstractmethod
    def phrase_candidates(
        self, name: str, phrases: Sequence[tuple[str, ...]], datasets: Sequence[str], search_size: int
    ) -> Candidates:
        """Per phrase (a token tuple), documents containing it contiguously."""

    @abstractmethod
    def vector_search(
        self, name: str, vectors: np.ndarray, dataset: str, k: int, min_similarity: float | None = None
    ) -> builtins.list[builtins.list[VectorHit]]:
        """Per query vector, the ``k`` most similar documents of ``dataset`` (best first), or all those at
        or above ``min_similarity`` when it is given (up to ``k``)."""

    def searchable_info(self, name: str) -> IndexInfo:
        """``info(name)``, refusing an index whose build never finished: its scores would be silently low."""
        info = self.info(name)
        if info.unreadable:
            raise DataError(
                f"Index '{name}' cannot be read: {info.unreadable}. Rebuild it: python -m core overlap index "
                f"--name {name} {self.index_flags()} --overwrite with its training sets, or delete it: "
                f"python -m core overlap delete --name {name} {self.index_flags()}."
            )
        if not info.complete:
            raise DataError(
                f"Index '{name}' is incomplete: its build stopped after {info.n_docs} documents, so a search "
                f"would miss overlap. Rebuild it: python -m core overlap index --name {name} --backend {self.kind} "
                "with the same training sets (no need to delete it first)."
            )
        return info

    def index_flags(self) -> str:
        """The CLI flags that reach this backend's indexes, for the commands an error message suggests."""
        return f"--backend {self.kind}"

    def missing_index_error(self, name: str) -> DataError:
        existing = ", ".join(i.name for i in self.list()) or "none"
        return DataError(f"No {self.kind} index named '{name}'. Existing indexes: {existing}.")
